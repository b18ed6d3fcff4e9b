package boltstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"

	bolt "go.etcd.io/bbolt"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
	"github.com/ai-memory/ai-memory/sdk/record"
)

// Messages (storage.Messages): a message is an ordinary memory in the
// recipient's inbox namespace, written by the engine for the calling
// identity through the store path with the messaging guard's owner
// context. "Unread" is access_count 0; reading with mark_read raises it.

// ErrNoCaller: an operation that needs the caller's identity had none.
var ErrNoCaller = errors.New("this operation needs the caller's identity (a signed call)")

// Inbox limits.
const (
	DefaultInboxLimit = 20
	MaxInboxLimit     = 200
)

// SendMessage stores a message from the caller into _messages/<to>. Every
// message is its own memory: a repeated title gets "title (2)", so no
// sender can overwrite another's message (or its own unread one).
func (s *Store) SendMessage(ctx context.Context, req *aimemoryv1.SendMessageRequest) (*aimemoryv1.SendMessageResponse, error) {
	from := storage.Principal(ctx)
	if from == "" {
		return nil, &storage.DeniedError{Reason: ErrNoCaller.Error()}
	}
	if err := record.ValidateRecipient("to", req.GetTo()); err != nil {
		return nil, err
	}
	if err := record.ValidateTitle(req.GetTitle()); err != nil {
		return nil, err
	}
	if err := record.ValidateContent(req.GetPayload()); err != nil {
		var fe *record.FieldError
		if errors.As(err, &fe) {
			return nil, &record.FieldError{Field: "payload", Rule: fe.Rule}
		}
		return nil, err
	}
	priority := req.GetPriority()
	if priority == 0 {
		priority = record.DefaultPriority
	}
	if err := record.ValidatePriority(priority); err != nil {
		return nil, err
	}
	tier := rules.Or(req.GetTier(), record.DefaultTier)
	if err := record.ValidateTier("tier", tier); err != nil {
		return nil, err
	}
	meta, err := json.Marshal(map[string]string{"agent_id": from, "recipient_agent_id": req.GetTo(), "message_kind": "notify"})
	if err != nil {
		return nil, err
	}
	resp, err := s.StoreMemory(storage.AsOwner(ctx, storage.GuardMessages), &aimemoryv1.StoreMemoryRequest{
		Memory: &aimemoryv1.Memory{
			Tier: tier, Namespace: storage.InboxPrefix + req.GetTo(), Title: req.GetTitle(), Content: req.GetPayload(),
			Tags: []string{"_message"}, Priority: int32(priority), Confidence: 1, Source: "notify", MetadataJson: meta,
		},
		OnConflict: aimemoryv1.ConflictPolicy_CONFLICT_POLICY_VERSION,
	})
	if err != nil {
		return nil, err
	}
	return &aimemoryv1.SendMessageResponse{Message: resp.GetMemory()}, nil
}

// ListInbox lists the caller's own inbox, newest first: the unread filter
// first, then the limit. With mark_read, the returned messages' access
// count goes up by one in the same transaction (no event: reading is not
// a change anyone subscribes to); they are returned as they were.
func (s *Store) ListInbox(ctx context.Context, req *aimemoryv1.ListInboxRequest) (*aimemoryv1.ListInboxResponse, error) {
	inbox := storage.OwnInbox(ctx)
	if inbox == "" {
		return nil, &storage.DeniedError{Reason: ErrNoCaller.Error()}
	}
	limit := int(req.GetLimit())
	switch {
	case limit == 0:
		limit = DefaultInboxLimit
	case limit > MaxInboxLimit:
		return nil, &record.FieldError{Field: "limit", Rule: "must be 1 to 200"}
	}
	var unread uint32
	collect := func(tx *bolt.Tx, now int64) ([]*aimemoryv1.Memory, error) {
		var out []*aimemoryv1.Memory
		unread = 0
		prefix := append([]byte(inbox), 0)
		mems := tx.Bucket(bucketMemories)
		c := tx.Bucket(bucketTitles).Cursor()
		for k, id := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, id = c.Next() {
			raw := mems.Get(id)
			if raw == nil {
				continue
			}
			m, err := decodeMemory(raw)
			if err != nil {
				return nil, err
			}
			if m.GetExpiresAt() != 0 && m.GetExpiresAt() <= now {
				continue // expired, not yet collected
			}
			if m.GetAccessCount() == 0 {
				unread++
			}
			if req.GetUnreadOnly() && m.GetAccessCount() > 0 {
				continue
			}
			out = append(out, m)
		}
		slices.SortFunc(out, func(a, b *aimemoryv1.Memory) int {
			if a.GetCreatedAt() != b.GetCreatedAt() {
				if a.GetCreatedAt() > b.GetCreatedAt() {
					return -1
				}
				return 1
			}
			return bytes.Compare([]byte(a.GetId()), []byte(b.GetId()))
		})
		if len(out) > limit {
			out = out[:limit]
		}
		return out, nil
	}
	resp := &aimemoryv1.ListInboxResponse{}
	if !req.GetMarkRead() {
		err := s.db.View(func(tx *bolt.Tx) error {
			var err error
			resp.Messages, err = collect(tx, s.nowNanos())
			resp.Unread = unread
			return err
		})
		return resp, err
	}
	err := s.write(ctx, func(w *writeTx) error {
		msgs, err := collect(w.tx, w.now)
		if err != nil {
			return err
		}
		resp.Messages, resp.Unread = msgs, unread
		for _, old := range msgs {
			m := rules.Clone(old)
			m.AccessCount++
			m.LastAccessedAt = w.now
			if err := w.put(old, m, ""); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

package ops

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Messages (storage.Messages), the same on every backend: a message is an
// ordinary memory in the recipient's inbox namespace, written by the
// engine for the calling identity through the store path with the
// messaging guard's owner context. "Unread" is access_count 0; reading
// with mark_read raises it.

// ErrNoCaller: an operation that needs the caller's identity had none.
var ErrNoCaller = errors.New("this operation needs the caller's identity (a signed call)")

// Inbox limits.
const (
	DefaultInboxLimit = 20
	MaxInboxLimit     = 200
)

// MessageStore checks a SendMessage request and returns the store request
// that writes it, with the context to write it in. Every message is its
// own memory: on_conflict VERSION gives a repeated title "title (2)", so
// no sender can overwrite another's message (or its own unread one).
func MessageStore(ctx context.Context, req *aimemoryv1.SendMessageRequest) (context.Context, *aimemoryv1.StoreMemoryRequest, error) {
	from := storage.Principal(ctx)
	if from == "" {
		return nil, nil, &storage.DeniedError{Reason: ErrNoCaller.Error()}
	}
	if err := record.ValidateRecipient("to", req.GetTo()); err != nil {
		return nil, nil, err
	}
	if err := record.ValidateTitle(req.GetTitle()); err != nil {
		return nil, nil, err
	}
	if err := record.ValidateContent(req.GetPayload()); err != nil {
		var fe *record.FieldError
		if errors.As(err, &fe) {
			return nil, nil, &record.FieldError{Field: "payload", Rule: fe.Rule}
		}
		return nil, nil, err
	}
	priority := req.GetPriority()
	if priority == 0 {
		priority = record.DefaultPriority
	}
	if err := record.ValidatePriority(priority); err != nil {
		return nil, nil, err
	}
	tier := rules.Or(req.GetTier(), record.DefaultTier)
	if err := record.ValidateTier("tier", tier); err != nil {
		return nil, nil, err
	}
	meta, err := json.Marshal(map[string]string{"agent_id": from, "recipient_agent_id": req.GetTo(), "message_kind": "notify"})
	if err != nil {
		return nil, nil, err
	}
	return authz.AsOwner(ctx, authz.GuardMessages), &aimemoryv1.StoreMemoryRequest{
		Memory: &aimemoryv1.Memory{
			Tier: tier, Namespace: authz.InboxPrefix + req.GetTo(), Title: req.GetTitle(), Content: req.GetPayload(),
			Tags: []string{"_message"}, Priority: int32(priority), Confidence: 1, Source: "notify", MetadataJson: meta,
		},
		OnConflict: aimemoryv1.ConflictPolicy_CONFLICT_POLICY_VERSION,
	}, nil
}

// Sent is SendMessage's answer: the message as stored, with the title as
// sent. The stored one may carry a version suffix ("t (2)"), which would
// tell the sender what the recipient's inbox, not its to read, holds.
func Sent(req *aimemoryv1.SendMessageRequest, stored *aimemoryv1.StoreMemoryResponse) *aimemoryv1.SendMessageResponse {
	m := stored.GetMemory()
	m.Title = req.GetTitle()
	return &aimemoryv1.SendMessageResponse{Message: m}
}

// InboxOf is the caller's own inbox namespace and the request's limit.
func InboxOf(ctx context.Context, req *aimemoryv1.ListInboxRequest) (inbox string, limit int, err error) {
	who := storage.Principal(ctx)
	if who == "" {
		return "", 0, &storage.DeniedError{Reason: ErrNoCaller.Error()}
	}
	inbox = authz.InboxPrefix + who
	limit = int(req.GetLimit())
	switch {
	case limit == 0:
		limit = DefaultInboxLimit
	case limit > MaxInboxLimit:
		return "", 0, &record.FieldError{Field: "limit", Rule: "must be 1 to 200"}
	}
	return inbox, limit, nil
}

// InboxPage is the page ListInbox returns of an inbox's memories (in any
// order): newest first, the expired left out, the unread filter first,
// then the limit; unread counts every unread message.
func InboxPage(all []*aimemoryv1.Memory, now int64, unreadOnly bool, limit int) (page []*aimemoryv1.Memory, unread uint32) {
	for _, m := range all {
		if m.GetExpiresAt() != 0 && m.GetExpiresAt() <= now {
			continue // expired, not yet collected
		}
		if m.GetAccessCount() == 0 {
			unread++
		}
		if unreadOnly && m.GetAccessCount() > 0 {
			continue
		}
		page = append(page, m)
	}
	slices.SortFunc(page, func(a, b *aimemoryv1.Memory) int {
		if a.GetCreatedAt() != b.GetCreatedAt() {
			if a.GetCreatedAt() > b.GetCreatedAt() {
				return -1
			}
			return 1
		}
		return bytes.Compare([]byte(a.GetId()), []byte(b.GetId()))
	})
	if len(page) > limit {
		page = page[:limit]
	}
	return page, unread
}

// MarkRead is a message as a mark_read listing leaves it: one more access, at now.
func MarkRead(old *aimemoryv1.Memory, now int64) *aimemoryv1.Memory {
	m := rules.Clone(old)
	m.AccessCount++
	m.LastAccessedAt = now
	return m
}

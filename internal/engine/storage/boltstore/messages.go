package boltstore

import (
	"bytes"
	"context"

	bolt "go.etcd.io/bbolt"

	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// Messages (storage.Messages): a message is an ordinary memory in the
// recipient's inbox namespace, written by the engine for the calling
// identity through the store path with the messaging guard's owner
// context. "Unread" is access_count 0; reading with mark_read raises it.

// ErrNoCaller: an operation that needs the caller's identity had none.
var ErrNoCaller = ops.ErrNoCaller

// Inbox limits.
const (
	DefaultInboxLimit = ops.DefaultInboxLimit
	MaxInboxLimit     = ops.MaxInboxLimit
)

// SendMessage stores a message from the caller into _messages/<to> (ops.MessageStore).
func (s *Store) SendMessage(ctx context.Context, req *aimemoryv1.SendMessageRequest) (*aimemoryv1.SendMessageResponse, error) {
	sctx, sreq, err := ops.MessageStore(ctx, req)
	if err != nil {
		return nil, err
	}
	resp, err := s.StoreMemory(sctx, sreq)
	if err != nil {
		return nil, err
	}
	return ops.Sent(req, resp), nil
}

// ListInbox lists the caller's own inbox, newest first: the unread filter
// first, then the limit. With mark_read, the returned messages' access
// count goes up by one in the same transaction (no event: reading is not
// a change anyone subscribes to); they are returned as they were.
func (s *Store) ListInbox(ctx context.Context, req *aimemoryv1.ListInboxRequest) (*aimemoryv1.ListInboxResponse, error) {
	inbox, limit, err := ops.InboxOf(ctx, req)
	if err != nil {
		return nil, err
	}
	var unread uint32
	collect := func(tx *bolt.Tx, now int64) ([]*aimemoryv1.Memory, error) {
		var all []*aimemoryv1.Memory
		prefix := append([]byte(inbox), 0)
		mems := tx.Bucket(bucketMemories)
		c := tx.Bucket(bucketTitles).Cursor()
		for k, id := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, id = c.Next() {
			raw := mems.Get(id)
			if raw == nil {
				continue
			}
			m, err := decodeLive(raw)
			if err != nil {
				return nil, err
			}
			all = append(all, m)
		}
		var out []*aimemoryv1.Memory
		out, unread = ops.InboxPage(all, now, req.GetUnreadOnly(), limit)
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
	err = s.write(ctx, func(w *writeTx) error {
		msgs, err := collect(w.tx, w.now)
		if err != nil {
			return err
		}
		resp.Messages, resp.Unread = msgs, unread
		for _, old := range msgs {
			if err := w.put(old, ops.MarkRead(old, w.now), ""); err != nil {
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

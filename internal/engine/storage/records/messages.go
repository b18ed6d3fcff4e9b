package records

import (
	"context"

	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	"github.com/ai-memory/ai-memory/internal/engine/storage/seam"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Messages (storage.Messages): a message is an ordinary memory in the
// recipient's inbox namespace, written by the engine for the calling
// identity through the store path with the messaging guard's owner
// context. "Unread" is access_count 0; reading with mark_read raises it.

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
	resp := &aimemoryv1.ListInboxResponse{}
	page := func(t seam.Tx) error {
		var all []*aimemoryv1.Memory
		if err := t.EachTitled(inbox, "", func(m *aimemoryv1.Memory) error {
			all = append(all, m)
			return nil
		}); err != nil {
			return err
		}
		resp.Messages, resp.Unread = ops.InboxPage(all, t.Now(), req.GetUnreadOnly(), limit)
		return nil
	}
	if !req.GetMarkRead() {
		if err := s.b.Read(ctx, page); err != nil {
			return nil, err
		}
		return resp, nil
	}
	err = s.b.Write(ctx, func(t seam.Tx) error {
		if err := page(t); err != nil {
			return err
		}
		for _, old := range resp.Messages {
			if err := t.Put(old, ops.MarkRead(old, t.Now()), ""); err != nil {
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

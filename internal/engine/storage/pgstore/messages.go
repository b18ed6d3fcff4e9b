package pgstore

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// Messages (storage.Messages), as boltstore's: the checks, the message's
// record and the inbox page are ops' (ops.MessageStore, ops.InboxPage).

// SendMessage stores a message from the caller into _messages/<to>.
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
// count goes up by one in the same transaction (no event); they are
// returned as they were.
func (s *Store) ListInbox(ctx context.Context, req *aimemoryv1.ListInboxRequest) (*aimemoryv1.ListInboxResponse, error) {
	inbox, limit, err := ops.InboxOf(ctx, req)
	if err != nil {
		return nil, err
	}
	resp := &aimemoryv1.ListInboxResponse{}
	if !req.GetMarkRead() {
		all, err := inboxMemories(ctx, s.pool, inbox)
		if err != nil {
			return nil, err
		}
		resp.Messages, resp.Unread = ops.InboxPage(all, s.nowNanos(), req.GetUnreadOnly(), limit)
		return resp, nil
	}
	err = s.write(ctx, func(w *writeTx) error {
		all, err := inboxMemories(w.ctx, w.tx, inbox)
		if err != nil {
			return err
		}
		resp.Messages, resp.Unread = ops.InboxPage(all, w.now, req.GetUnreadOnly(), limit)
		for _, old := range resp.Messages {
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

// inboxMemories reads every memory of namespace inbox.
func inboxMemories(ctx context.Context, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, inbox string) ([]*aimemoryv1.Memory, error) {
	rows, err := q.Query(ctx, `SELECT record FROM memories WHERE namespace = $1`, inbox)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (*aimemoryv1.Memory, error) {
		var raw []byte
		if err := row.Scan(&raw); err != nil {
			return nil, err
		}
		return decodeMemory(raw)
	})
}

package server

import (
	"context"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Messages serves the inboxes: a message is written from the calling
// identity, and an inbox is read only by its owner.
type Messages struct {
	aimemoryv1.UnimplementedMessagesServer
	st storage.Backend
	errorMapper
}

func (s *Messages) SendMessage(ctx context.Context, req *aimemoryv1.SendMessageRequest) (*aimemoryv1.SendMessageResponse, error) {
	resp, err := s.st.SendMessage(ctx, req)
	return resp, s.status(err)
}

func (s *Messages) ListInbox(ctx context.Context, req *aimemoryv1.ListInboxRequest) (*aimemoryv1.ListInboxResponse, error) {
	resp, err := s.st.ListInbox(ctx, req)
	return resp, s.status(err)
}

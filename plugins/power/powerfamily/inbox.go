package powerfamily

import (
	"context"
	"encoding/json"

	"github.com/ai-memory/ai-memory/sdk"
	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// The inbox: the caller's own messages from memory_notify. Whose inbox is
// the engine's decision, from the identity the host resolved and signed
// for this call; no argument names it (an agent_id argument is refused,
// not ignored, so nobody believes they read someone else's). The engine
// filters unread first, then applies the limit, and marks what it
// returned read when asked.
var inboxArgs = append(argNames(inboxSchema), "agent_id")

const (
	defaultInboxLimit = 20
	maxInboxLimit     = 200
)

type inboxMessage struct {
	ID        string `json:"id"`
	From      string `json:"from,omitempty"`
	Title     string `json:"title"`
	Payload   string `json:"payload"`
	Priority  int32  `json:"priority"`
	Tier      string `json:"tier"`
	CreatedAt string `json:"created_at"`
	Read      bool   `json:"read,omitempty"`
}

type inboxResult struct {
	Count int `json:"count"`
	// Unread messages in the whole inbox before this call.
	Unread   uint32         `json:"unread"`
	Messages []inboxMessage `json:"messages"`
}

func (s *service) inbox(ctx context.Context, call sdk.Call) (any, error) {
	a, err := sdk.ParseArgs(call.Arguments, inboxArgs)
	if err != nil {
		return nil, err
	}
	if _, ok := a.Value("agent_id"); ok {
		return nil, sdk.Errorf("agent_id: an inbox is read as the session identity (%s); it takes no agent_id", record.Quote(call.AgentID))
	}
	unread, err := a.Bool("unread_only", false)
	if err != nil {
		return nil, err
	}
	mark, err := a.Bool("mark_read", false)
	if err != nil {
		return nil, err
	}
	limit, err := a.Integer("limit", defaultInboxLimit, 1, maxInboxLimit)
	if err != nil {
		return nil, err
	}
	resp, err := s.eng.ListInbox(ctx, &aimemoryv1.ListInboxRequest{UnreadOnly: unread, Limit: uint32(limit), MarkRead: mark})
	if err != nil {
		return nil, sdk.EngineError(err)
	}
	out := inboxResult{Unread: resp.GetUnread(), Messages: []inboxMessage{}}
	for _, m := range resp.GetMessages() {
		var meta struct {
			AgentID string `json:"agent_id"`
		}
		json.Unmarshal(m.GetMetadataJson(), &meta)
		out.Messages = append(out.Messages, inboxMessage{
			ID: m.GetId(), From: meta.AgentID, Title: m.GetTitle(), Payload: m.GetContent(), Priority: m.GetPriority(),
			Tier: m.GetTier(), CreatedAt: record.FormatTime(m.GetCreatedAt()), Read: m.GetAccessCount() > 0,
		})
	}
	out.Count = len(out.Messages)
	return out, nil
}

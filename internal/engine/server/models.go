package server

import (
	"context"
	"log/slog"
	"strings"

	"github.com/ai-memory/ai-memory/internal/engine/models"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Chat is the data dir's chat endpoint with its breaker; nil = none.
type Chat struct {
	Client  *models.Client
	breaker models.Breaker
	log     *slog.Logger
}

// Models serves Chat.
type Models struct {
	aimemoryv1.UnimplementedModelsServer
	chat *Chat
}

func (s *Models) Chat(ctx context.Context, req *aimemoryv1.ChatRequest) (*aimemoryv1.ChatResponse, error) {
	c := s.chat
	if c == nil || c.Client == nil {
		return &aimemoryv1.ChatResponse{}, nil
	}
	resp := &aimemoryv1.ChatResponse{Configured: true, Model: c.Client.Model()}
	if kinds := models.Secrets(req.GetPrompt()); len(kinds) > 0 {
		resp.Reason = "not sent to the chat endpoint: it looks like it holds a secret (" + strings.Join(kinds, ", ") + ")"
		return resp, nil
	}
	if why := c.breaker.Open(); why != "" {
		resp.Reason = "chat endpoint " + why
		return resp, nil
	}
	text, err := c.Client.Chat(ctx, req.GetPrompt())
	if err != nil {
		c.breaker.Fail(err)
		if c.log != nil {
			c.log.Warn("chat endpoint failed; classical methods are used meanwhile", "err", err, "retry_after", models.CoolDown)
		}
		resp.Reason = "chat endpoint failed (" + err.Error() + ")"
		return resp, nil
	}
	c.breaker.OK()
	resp.Text = text
	return resp, nil
}

// Command testplugin is a third-party-style family plugin used by the
// end-to-end tests: it serves the "other" family, written against proto/
// and the SDK alone, and is pinned through config.toml [plugins].
package main

import (
	"context"
	"encoding/json"
	"os"
	"syscall"

	"github.com/ai-memory/ai-memory/sdk"
)

func main() {
	sdk.Serve("testplugin", "test", sdk.Family{Name: "other", Tools: []sdk.Tool{{
		Name:        "test_echo",
		Description: "Echo the arguments and the host-resolved call context.",
		Schema:      json.RawMessage(`{"type":"object","properties":{"say":{"type":"string","description":"Text to echo."}}}`),
		Hints:       sdk.ReadOnly,
		Handler: func(_ context.Context, c sdk.Call) (any, error) {
			var args map[string]any
			if err := json.Unmarshal(c.Arguments, &args); err != nil {
				return nil, sdk.Errorf("arguments: %v", err)
			}
			if args["crash"] == true { // unadvertised: the tests' plugin dying in the middle of a call
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
				select {}
			}
			return map[string]any{"args": args, "agent_id": c.Context.GetAgentId(), "client": c.Context.GetClientName(), "session": c.Context.GetSessionId()}, nil
		},
	}}})
}

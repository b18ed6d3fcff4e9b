// Package adminfamily is the admin plugin's three families
// (spec/family-admin.md, with issue 9's fixes): lifecycle (update, delete,
// forget, gc, promote), governance (pending approvals, namespace
// standards, subscriptions) and other (list_subscriptions, notify). It
// holds no data: policy, archive, subscriptions and messages are the
// engine's, reached through the Engine API with the caller's identity.
package adminfamily

import (
	"log/slog"

	"github.com/ai-memory/ai-memory/sdk"
	"github.com/ai-memory/ai-memory/sdk/wire"
)

// service is what the handlers share.
type service struct {
	eng wire.Engine
	log *slog.Logger
}

// Families returns the families this plugin serves.
func Families(eng wire.Engine) []sdk.Family {
	s := &service{eng: eng, log: sdk.Logger().With("plugin", "admin")}
	all := []sdk.Family{
		{Name: "lifecycle", Tools: s.lifecycleTools()},
		{Name: "governance", Tools: append(s.governanceTools(), s.subscriptionTools()...)},
		{Name: "other", Tools: s.otherTools()},
	}
	// The host refuses a plugin declaring a family without tools, so one
	// whose tools are not built yet is left out rather than sinking the rest.
	var out []sdk.Family
	for _, f := range all {
		if len(f.Tools) > 0 {
			out = append(out, f)
		}
	}
	return out
}

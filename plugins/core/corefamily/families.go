// Package corefamily is the core tool family: memory_store, memory_recall,
// memory_list, memory_get and memory_search (spec/family-core.md). It holds
// no data; every read and write goes through the Engine API.
package corefamily

import (
	"log/slog"

	"github.com/ai-memory/ai-memory/sdk"
	"github.com/ai-memory/ai-memory/sdk/wire"
)

// service is what the handlers share: the engine, the token counter and a
// stderr log (which the host relays) for what must not fail a call.
type service struct {
	eng    wire.Engine
	tokens *tokenCounter
	log    *slog.Logger
}

// Families returns the families this plugin serves: core, whose five tools
// every profile shows (AlwaysLoad asks deferring clients to load them).
func Families(eng wire.Engine) []sdk.Family {
	s := &service{eng: eng, tokens: &tokenCounter{}, log: sdk.Logger().With("family", "core")}
	// readOnly and idempotent default to false in MCP; destructive defaults
	// to true, so only that needs saying for the tools that write.
	notDestructive := sdk.Hints{Destructive: sdk.Bool(false)}
	return []sdk.Family{{
		Name: "core",
		Tools: []sdk.Tool{
			{Name: "memory_store", Description: storeDesc, Schema: schema(storeSchema), Hints: notDestructive, AlwaysLoad: true, Handler: s.store},
			// Recall touches what it returns (access count, expiry), so it is not read-only.
			{Name: "memory_recall", Description: recallDesc, Schema: schema(recallSchema), Hints: notDestructive, AlwaysLoad: true, Handler: s.recall},
			{Name: "memory_list", Description: listDesc, Schema: schema(listSchema), Hints: sdk.ReadOnly, AlwaysLoad: true, Handler: s.list},
			{Name: "memory_get", Description: getDesc, Schema: schema(getSchema), Hints: sdk.ReadOnly, AlwaysLoad: true, Handler: s.get},
			{Name: "memory_search", Description: searchDesc, Schema: schema(searchSchema), Hints: sdk.ReadOnly, AlwaysLoad: true, Handler: s.search},
		},
	}}
}

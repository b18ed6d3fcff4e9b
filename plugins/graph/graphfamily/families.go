// Package graphfamily is the graph tool family (spec/family-graph.md, with
// issue 3's changes): links with temporal validity, multi-hop traversal,
// timelines, entities with aliases, and the namespace tree. It holds no
// data; every read and write goes through the Engine API, and a traversal
// of any depth is one engine call (Traverse: the walk runs in the engine).
package graphfamily

import (
	"github.com/ai-memory/ai-memory/sdk"
	"github.com/ai-memory/ai-memory/sdk/wire"
)

// service is what the handlers share.
type service struct {
	eng wire.Engine
}

// Families returns the families this plugin serves: graph.
func Families(eng wire.Engine) []sdk.Family {
	s := &service{eng: eng}
	// MCP's defaults say a tool may be destructive; the writers here only
	// add or close links and add entities, so they say otherwise. Readers
	// say read-only, which implies the rest.
	writes := sdk.Hints{Destructive: sdk.Bool(false)}
	return []sdk.Family{{
		Name: "graph",
		Tools: []sdk.Tool{
			{Name: "memory_kg_query", Description: queryDesc, Schema: schema(querySchema), Hints: sdk.ReadOnly, Handler: s.query},
			{Name: "memory_kg_timeline", Description: timelineDesc, Schema: schema(timelineSchema), Hints: sdk.ReadOnly, Handler: s.timeline},
			{Name: "memory_kg_invalidate", Description: invalidateDesc, Schema: schema(invalidateSchema), Hints: writes, Handler: s.invalidate},
			{Name: "memory_link", Description: linkDesc, Schema: schema(linkSchema), Hints: writes, Handler: s.link},
			{Name: "memory_get_links", Description: getLinksDesc, Schema: schema(getLinksSchema), Hints: sdk.ReadOnly, Handler: s.getLinks},
			{Name: "memory_entity_register", Description: registerDesc, Schema: schema(registerSchema), Hints: writes, Handler: s.register},
			{Name: "memory_entity_get_by_alias", Description: byAliasDesc, Schema: schema(byAliasSchema), Hints: sdk.ReadOnly, Handler: s.byAlias},
			{Name: "memory_get_taxonomy", Description: taxonomyDesc, Schema: schema(taxonomySchema), Hints: sdk.ReadOnly, Handler: s.taxonomy},
		},
	}}
}

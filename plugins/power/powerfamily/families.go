// Package powerfamily is the power tool family (spec/family-power.md, with
// issue 11's changes): duplicate checks, tag suggestions, query expansion
// and contradiction checks that do real work with no model at all, each
// naming the method it used (spec §8's classical substitutes). The keyword
// statistics come from the engine's index through the Corpus API; the
// plugin keeps no index of its own. memory_consolidate writes through the
// engine's Consolidate (one transaction, sources archived); memory_inbox
// reads the caller's own inbox through the Messages API.
package powerfamily

import (
	"github.com/ai-memory/ai-memory/sdk"
	"github.com/ai-memory/ai-memory/sdk/wire"
)

// service is what the handlers share.
type service struct {
	eng wire.Engine
}

// Families returns the families this plugin serves: power.
func Families(eng wire.Engine) []sdk.Family {
	s := &service{eng: eng}
	return []sdk.Family{{
		Name: "power",
		Tools: []sdk.Tool{
			{Name: "memory_consolidate", Description: consolidateDesc, Schema: schema(consolidateSchema), Handler: s.consolidate},
			{Name: "memory_check_duplicate", Description: duplicateDesc, Schema: schema(duplicateSchema), Hints: sdk.ReadOnly, Handler: s.checkDuplicate},
			{Name: "memory_auto_tag", Description: autoTagDesc, Schema: schema(autoTagSchema), Hints: sdk.Hints{Destructive: sdk.Bool(false)}, Handler: s.autoTag},
			{Name: "memory_expand_query", Description: expandDesc, Schema: schema(expandSchema), Hints: sdk.ReadOnly, Handler: s.expandQuery},
			{Name: "memory_detect_contradiction", Description: contradictionDesc, Schema: schema(contradictionSchema), Hints: sdk.ReadOnly, Handler: s.detectContradiction},
			{Name: "memory_inbox", Description: inboxDesc, Schema: schema(inboxSchema), Hints: sdk.Hints{Destructive: sdk.Bool(false)}, Handler: s.inbox},
		},
	}}
}

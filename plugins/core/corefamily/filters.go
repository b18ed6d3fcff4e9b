package corefamily

import (
	"github.com/ai-memory/ai-memory/sdk"
	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Filter arguments shared by recall, list and search. Each is validated
// with the record rule it will be compared against: a value that can match
// nothing is an error, never a silently empty (or silently unfiltered) result.

// namespaceArg reads an optional namespace filter ("" = all).
func namespaceArg(a *sdk.Args, name string) (string, error) {
	return a.NamespaceFilter(name)
}

// tierArg reads an optional tier filter ("" = all). Unlike the reference,
// an unknown tier is an error, not a dropped filter.
func tierArg(a *sdk.Args) (string, error) {
	tier, err := a.Str("tier", "")
	if err != nil || tier == "" {
		return "", err
	}
	return tier, record.ValidateTier("tier", tier)
}

// agentArg reads an optional author filter ("" = all).
func agentArg(a *sdk.Args) (string, error) {
	id, err := a.Str("agent_id", "")
	if err != nil || id == "" {
		return "", err
	}
	return id, record.ValidateAgentID("agent_id", id)
}

// limitArg reads limit: 0 is allowed (an empty result); above max is an
// error that says the max, never a silent cap.
func limitArg(a *sdk.Args, def, maxLimit int64) (uint32, error) {
	n, err := a.Integer("limit", def, 0, maxLimit)
	return uint32(n), err
}

// Filters list and search accept without advertising them: recall's tag
// and creation-time bounds. The web console filters by them; agents have
// recall's, so listing them would cost every request tokens for nothing.
var hiddenFilters = []string{"tags", "since", "until"}

// hiddenFilterArgs reads those filters into f.
func hiddenFilterArgs(a *sdk.Args, f *aimemoryv1.Filter) (err error) {
	if f.Tag, err = tagArg(a); err != nil {
		return err
	}
	if f.CreatedSince, err = timeArg(a, "since"); err != nil {
		return err
	}
	if f.CreatedUntil, err = timeArg(a, "until"); err != nil {
		return err
	}
	if f.CreatedSince != 0 && f.CreatedUntil != 0 && f.CreatedSince > f.CreatedUntil {
		return sdk.Errorf("since: must not be after until")
	}
	return nil
}

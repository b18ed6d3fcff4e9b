package corefamily

import (
	"context"

	"github.com/ai-memory/ai-memory/sdk"
	"github.com/ai-memory/ai-memory/sdk/record"
	"github.com/ai-memory/ai-memory/sdk/render"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// store and get take format without advertising it: agents read the
// default answer (docs/RETRIEVAL.md); json is complete, for programs.
var storeArgs = argNames(storeSchema, "format")

var conflictPolicies = map[string]aimemoryv1.ConflictPolicy{
	"merge":   aimemoryv1.ConflictPolicy_CONFLICT_POLICY_MERGE,
	"version": aimemoryv1.ConflictPolicy_CONFLICT_POLICY_VERSION,
	"error":   aimemoryv1.ConflictPolicy_CONFLICT_POLICY_ERROR,
}

// storeResult is memory_store's answer in JSON, complete for programs;
// empty fields are left out.
type storeResult struct {
	ID                      string   `json:"id"`
	Tier                    string   `json:"tier"`
	Title                   string   `json:"title"`
	Namespace               string   `json:"namespace"`
	AgentID                 string   `json:"agent_id,omitempty"`
	Duplicate               bool     `json:"duplicate,omitempty"`
	Action                  string   `json:"action,omitempty"`
	PotentialContradictions []string `json:"potential_contradictions,omitempty"`
}

// storeAnswer is memory_store's default answer: the short id, and of the
// rest only what the caller does not know already.
type storeAnswer struct {
	ID                      string   `json:"id"`
	Title                   string   `json:"title,omitempty"`    // versioned: not the title asked for
	Tier                    string   `json:"tier,omitempty"`     // a merge kept a longer tier
	AgentID                 string   `json:"agent_id,omitempty"` // the author, when not the caller
	Duplicate               bool     `json:"duplicate,omitempty"`
	Action                  string   `json:"action,omitempty"`
	PotentialContradictions []string `json:"potential_contradictions,omitempty"`
}

func (s *service) store(ctx context.Context, call sdk.Call) (any, error) {
	req, format, err := storeRequest(call)
	if err != nil {
		return nil, err
	}
	resp, err := s.eng.StoreMemory(ctx, req)
	if p, queued := sdk.PendingFromError(err); queued {
		return p, nil // the namespace policy holds it for approval: nothing was written
	}
	if err != nil {
		return nil, sdk.EngineError(err)
	}
	m := resp.GetMemory()
	out := storeResult{
		ID:                      m.GetId(),
		Tier:                    m.GetTier(), // the stored tier: a merge never downgrades it
		Title:                   m.GetTitle(),
		Namespace:               m.GetNamespace(),
		AgentID:                 render.MetadataString(m.GetMetadataJson(), "agent_id"),
		PotentialContradictions: resp.GetPotentialContradictions(),
	}
	if resp.GetOutcome() == aimemoryv1.StoreOutcome_STORE_OUTCOME_MERGED {
		out.Duplicate, out.Action = true, "updated existing memory"
	}
	if format == render.JSON {
		return out, nil
	}
	shorts := render.ShortIDsOf(ctx, s.eng, append([]string{out.ID}, out.PotentialContradictions...)...)
	answer := storeAnswer{ID: render.Short(shorts, out.ID), Duplicate: out.Duplicate, Action: out.Action}
	if out.Title != req.GetMemory().GetTitle() {
		answer.Title = out.Title
	}
	if out.Tier != req.GetMemory().GetTier() {
		answer.Tier = out.Tier
	}
	if out.AgentID != call.Caller() {
		answer.AgentID = out.AgentID
	}
	for _, id := range out.PotentialContradictions {
		answer.PotentialContradictions = append(answer.PotentialContradictions, render.Short(shorts, id))
	}
	return answer, nil
}

// storeRequest validates every argument in the spec's order, so nothing is
// written unless all of them are good; format is the answer's.
func storeRequest(call sdk.Call) (_ *aimemoryv1.StoreMemoryRequest, format string, err error) {
	a, err := sdk.ParseArgs(call.Arguments, storeArgs)
	if err != nil {
		return nil, "", err
	}
	title, err := a.Required("title")
	if err != nil {
		return nil, "", err
	}
	content, err := a.Required("content")
	if err != nil {
		return nil, "", err
	}
	tier, err := a.Str("tier", record.DefaultTier)
	if err != nil {
		return nil, "", err
	}
	if err := record.ValidateTier("tier", tier); err != nil {
		return nil, "", err
	}
	if err := record.ValidateTitle(title); err != nil {
		return nil, "", err
	}
	if err := record.ValidateContent(content); err != nil {
		return nil, "", err
	}
	ns, err := a.Namespace("namespace", call.DefaultNamespace())
	if err != nil {
		return nil, "", err
	}
	source, err := a.Str("source", record.DefaultSource)
	if err != nil {
		return nil, "", err
	}
	if err := record.ValidateSource(source); err != nil {
		return nil, "", err
	}
	tags, err := a.StringList("tags")
	if err != nil {
		return nil, "", err
	}
	if err := record.ValidateTags("tags", tags); err != nil {
		return nil, "", err
	}
	priority, err := a.Integer("priority", record.DefaultPriority, record.MinPriority, record.MaxPriority)
	if err != nil {
		return nil, "", err
	}
	if err := record.ValidatePriority(priority); err != nil {
		return nil, "", err
	}
	confidence, err := a.Number("confidence", 1.0)
	if err != nil {
		return nil, "", err
	}
	if err := record.ValidateConfidence(confidence); err != nil {
		return nil, "", err
	}
	metadata, err := storeMetadata(a, call)
	if err != nil {
		return nil, "", err
	}
	policy, err := a.OneOf("on_conflict", "merge", "merge", "version", "error")
	if err != nil {
		return nil, "", err
	}
	if format, err = render.FormatArg(a); err != nil {
		return nil, "", err
	}
	return &aimemoryv1.StoreMemoryRequest{
		Memory: &aimemoryv1.Memory{
			Title: title, Content: content, Tier: tier, Namespace: ns,
			Tags: tags, Priority: int32(priority), Confidence: confidence,
			Source: source, MetadataJson: metadata,
		},
		OnConflict: conflictPolicies[policy],
	}, format, nil
}

// storeMetadata builds the metadata object: the caller's, stamped with the
// author (agent_id argument > metadata.agent_id > session identity >
// anonymous) and the validated scope (argument > metadata.scope).
func storeMetadata(a *sdk.Args, call sdk.Call) ([]byte, error) {
	meta, err := a.Object("metadata")
	if err != nil {
		return nil, err
	}
	if meta == nil {
		meta = map[string]any{}
	}
	if err := sdk.StampAuthor(a, meta, call); err != nil {
		return nil, err
	}

	scope, hasScope := meta["scope"]
	if _, ok := a.Value("scope"); ok {
		if scope, err = a.Str("scope", ""); err != nil {
			return nil, err
		}
		hasScope = true
	}
	if hasScope {
		sc, isStr := scope.(string)
		if !isStr {
			return nil, sdk.Errorf("metadata.scope: must be a string")
		}
		if err := record.ValidateScope(sc); err != nil {
			return nil, err
		}
		meta["scope"] = sc
	}

	raw, err := sdk.MarshalCompact(meta)
	if err != nil {
		return nil, sdk.Errorf("metadata: %v", err)
	}
	if err := record.ValidateMetadataObject(meta, raw); err != nil {
		return nil, err
	}
	return raw, nil
}

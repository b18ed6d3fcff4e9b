package graphfamily

import (
	"context"
	"fmt"
	"strings"

	"github.com/ai-memory/ai-memory/sdk"
	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

var (
	registerArgs = argNames(registerSchema)
	byAliasArgs  = argNames(byAliasSchema)
)

// registerResult: the entity, whether this call created it, and its full
// alias set, canonical name included, in the order they were added.
type registerResult struct {
	EntityID string   `json:"entity_id"`
	Created  bool     `json:"created"`
	Aliases  []string `json:"aliases"`
}

// byAliasResult is {"found":false} when no entity holds the alias.
type byAliasResult struct {
	Found         bool     `json:"found"`
	EntityID      string   `json:"entity_id,omitempty"`
	CanonicalName string   `json:"canonical_name,omitempty"`
	Namespace     string   `json:"namespace,omitempty"`
	Aliases       []string `json:"aliases,omitempty"`
}

func parseRegister(call sdk.Call) (*aimemoryv1.RegisterEntityRequest, error) {
	a, err := sdk.ParseArgs(call.Arguments, registerArgs)
	if err != nil {
		return nil, err
	}
	name, err := a.Required("canonical_name")
	if err != nil {
		return nil, err
	}
	name = strings.TrimSpace(name)
	if err := record.ValidateAlias("canonical_name", name); err != nil {
		return nil, err
	}
	ns, err := a.RequiredNamespace("namespace")
	if err != nil {
		return nil, err
	}
	aliases, err := a.StringList("aliases")
	if err != nil {
		return nil, err
	}
	if len(aliases) > record.MaxAliasesPerOp {
		return nil, sdk.Errorf("aliases: must have at most %d entries (got %d)", record.MaxAliasesPerOp, len(aliases))
	}
	for i, al := range aliases {
		aliases[i] = strings.TrimSpace(al)
		if err := record.ValidateAlias(fmt.Sprintf("aliases[%d]", i), aliases[i]); err != nil {
			return nil, err
		}
	}
	meta, err := entityMetadata(a, call)
	if err != nil {
		return nil, err
	}
	// registered_by is the engine's to record, from the verified caller.
	return &aimemoryv1.RegisterEntityRequest{CanonicalName: name, Namespace: ns, Aliases: aliases, MetadataJson: meta}, nil
}

// entityMetadata is the metadata of a new entity: the caller's object
// with its author (agent_id argument > metadata.agent_id > session
// identity), provenance only. The engine sets kind.
func entityMetadata(a *sdk.Args, call sdk.Call) ([]byte, error) {
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
	if v, ok := meta["scope"]; ok {
		sc, isStr := v.(string)
		if !isStr {
			return nil, sdk.Errorf("metadata.scope: must be a string")
		}
		if err := record.ValidateScope(sc); err != nil {
			return nil, err
		}
	}
	raw, err := sdk.MarshalCompact(meta)
	if err != nil {
		return nil, sdk.Errorf("metadata: %v", err)
	}
	if err := record.ValidateMetadata(raw); err != nil {
		return nil, err
	}
	return raw, nil
}

func (s *service) register(ctx context.Context, call sdk.Call) (any, error) {
	req, err := parseRegister(call)
	if err != nil {
		return nil, err
	}
	resp, err := s.eng.RegisterEntity(ctx, req)
	if err != nil {
		return nil, sdk.EngineError(err)
	}
	return registerResult{EntityID: resp.GetEntity().GetId(), Created: resp.GetCreated(), Aliases: aliasTexts(resp.GetEntity())}, nil
}

func aliasTexts(e *aimemoryv1.Entity) []string {
	out := make([]string, 0, len(e.GetAliases()))
	for _, a := range e.GetAliases() {
		out = append(out, a.GetAlias())
	}
	return out
}

func parseByAlias(raw []byte) (*aimemoryv1.GetEntityByAliasRequest, error) {
	a, err := sdk.ParseArgs(raw, byAliasArgs)
	if err != nil {
		return nil, err
	}
	alias, err := a.Required("alias")
	if err != nil {
		return nil, err
	}
	alias = strings.TrimSpace(alias)
	if err := record.ValidateAlias("alias", alias); err != nil {
		return nil, err
	}
	ns, err := a.NamespaceFilter("namespace")
	if err != nil {
		return nil, err
	}
	return &aimemoryv1.GetEntityByAliasRequest{Alias: alias, Namespace: ns}, nil
}

func (s *service) byAlias(ctx context.Context, call sdk.Call) (any, error) {
	req, err := parseByAlias(call.Arguments)
	if err != nil {
		return nil, err
	}
	resp, err := s.eng.GetEntityByAlias(ctx, req)
	if err != nil {
		return nil, sdk.EngineError(err)
	}
	e := resp.GetEntity()
	if e == nil {
		return byAliasResult{}, nil
	}
	return byAliasResult{Found: true, EntityID: e.GetId(), CanonicalName: e.GetCanonicalName(), Namespace: e.GetNamespace(), Aliases: aliasTexts(e)}, nil
}

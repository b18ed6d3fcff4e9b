package boltstore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
	"github.com/ai-memory/ai-memory/sdk/record"
)

// The agent registry's storage (data-model §13.3): one long-tier memory per
// agent in the guarded namespace _agents, titled agent:<principal>, written
// only here. An agent registers itself: the principal is the caller's;
// a request's agent_id may name another identity only when the caller is
// a [governance] operator. The policy level "registered" and consensus
// approval read it through the title index (govView).

// RegisterAgent registers (or refreshes) the caller in the registry;
// re-registration keeps registered_at and refreshes last_seen_at.
func (s *Store) RegisterAgent(ctx context.Context, req *aimemoryv1.RegisterAgentRequest) (*aimemoryv1.RegisterAgentResponse, error) {
	caller := storage.Principal(ctx)
	if caller == "" {
		return nil, &storage.DeniedError{Reason: "register refused: it needs a caller identity"}
	}
	who := caller
	if id := req.GetAgentId(); id != "" && id != caller {
		if err := record.ValidateAgentID("agent_id", id); err != nil {
			return nil, err
		}
		if !s.gov.IsOperator(caller) {
			return nil, &storage.DeniedError{Reason: fmt.Sprintf("agent_id: an agent registers only its own session identity %s; %s is another (only [governance] operators may)",
				record.Quote(caller), record.Quote(id))}
		}
		who = id
	}
	if len(req.GetAgentType()) > 64 {
		return nil, &record.FieldError{Field: "agent_type", Rule: "must be at most 64 bytes"}
	}
	if err := record.ValidateTags("capabilities", req.GetCapabilities()); err != nil {
		return nil, err
	}
	now := s.now().UTC().Format(time.RFC3339Nano)
	meta := map[string]any{"agent_id": who, "agent_type": req.GetAgentType(), "capabilities": req.GetCapabilities(),
		"registered_at": now, "last_seen_at": now, "registered_by": caller}
	owner := storage.AsOwner(ctx, storage.GuardAgents)
	title := agentTitlePrefix + who
	// registered_at survives a re-registration.
	prev, err := s.registryEntry(title)
	if err != nil {
		return nil, err
	}
	if prev != nil {
		var old map[string]any
		if json.Unmarshal(prev.GetMetadataJson(), &old) == nil && old["registered_at"] != nil {
			meta["registered_at"] = old["registered_at"]
		}
	}
	raw, _ := json.Marshal(meta)
	resp, err := s.StoreMemory(owner, &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{
		Title: title, Content: string(raw), Namespace: storage.GuardAgents.Name, Tier: "long",
		Tags: []string{"agent-registration"}, Source: "system", Priority: 5, Confidence: 1, MetadataJson: raw,
	}})
	if err != nil {
		return nil, err
	}
	return &aimemoryv1.RegisterAgentResponse{Agent: resp.Memory, Created: resp.Outcome == aimemoryv1.StoreOutcome_STORE_OUTCOME_CREATED}, nil
}

// registryEntry is the registry memory titled title; nil when none.
func (s *Store) registryEntry(title string) (*aimemoryv1.Memory, error) {
	var m *aimemoryv1.Memory
	err := s.db.View(func(tx *bolt.Tx) error {
		id := tx.Bucket(bucketTitles).Get(titleKey(storage.GuardAgents.Name, title))
		if id == nil {
			return nil
		}
		raw := tx.Bucket(bucketMemories).Get(id)
		if raw == nil {
			return nil
		}
		var err error
		m, err = decodeMemory(raw)
		return err
	})
	return m, err
}

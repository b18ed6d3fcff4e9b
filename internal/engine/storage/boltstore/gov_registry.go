package boltstore

import (
	"context"

	bolt "go.etcd.io/bbolt"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// The agent registry's storage (ops/registry.go): one long-tier memory per
// agent in the guarded namespace _agents, titled agent:<principal>. The
// policy level "registered" and consensus approval read it through the
// title index (govView).

// RegisterAgent registers (or refreshes) the caller in the registry;
// re-registration keeps registered_at and refreshes last_seen_at.
func (s *Store) RegisterAgent(ctx context.Context, req *aimemoryv1.RegisterAgentRequest) (*aimemoryv1.RegisterAgentResponse, error) {
	store, err := ops.Registration(ctx, s.gov, req, s.now(), s.registryEntry)
	if err != nil {
		return nil, err
	}
	resp, err := s.StoreMemory(authz.AsOwner(ctx, authz.GuardAgents), store)
	if err != nil {
		return nil, err
	}
	return &aimemoryv1.RegisterAgentResponse{Agent: resp.Memory, Created: resp.Outcome == aimemoryv1.StoreOutcome_STORE_OUTCOME_CREATED}, nil
}

// registryEntry is the registry memory titled title; nil when none.
func (s *Store) registryEntry(title string) (*aimemoryv1.Memory, error) {
	var m *aimemoryv1.Memory
	err := s.db.View(func(tx *bolt.Tx) error {
		id := tx.Bucket(bucketTitles).Get(titleKey(authz.GuardAgents.Name, title))
		if id == nil {
			return nil
		}
		raw := tx.Bucket(bucketMemories).Get(id)
		if raw == nil {
			return nil
		}
		var err error
		m, err = decodeLive(raw)
		return err
	})
	return m, err
}

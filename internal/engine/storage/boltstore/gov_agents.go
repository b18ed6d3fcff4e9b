package boltstore

import (
	"context"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// NoteSeen records a call of principal now. Cheap: one lock, one map write
// (ops.LastSeen); FlushSeen writes them into the registry on the engine's
// schedule.
func (s *Store) NoteSeen(principal string) { s.seen.Note(principal, s.nowNanos()) }

// ListAgents is the registry as the caller may see it (ops.AgentLister), registered_at ascending, each last-seen the
// later of the stored one and the calls seen since.
func (s *Store) ListAgents(ctx context.Context, _ *aimemoryv1.ListAgentsRequest) (*aimemoryv1.ListAgentsResponse, error) {
	resp := &aimemoryv1.ListAgentsResponse{}
	listed := ops.AgentLister(ctx)
	err := s.db.View(func(tx *bolt.Tx) error {
		return eachAgent(tx, func(_ *aimemoryv1.Memory, a ops.AgentMeta) error {
			if listed(a) {
				resp.Agents = append(resp.Agents, a.Agent(s.seen.At(a.AgentID)))
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	ops.SortAgents(resp.Agents)
	return resp, nil
}

// eachAgent visits every registry entry (title agent:<id> in _agents).
func eachAgent(tx *bolt.Tx, fn func(*aimemoryv1.Memory, ops.AgentMeta) error) error {
	prefix := titleKey(authz.GuardAgents.Name, agentTitlePrefix)
	c := tx.Bucket(bucketTitles).Cursor()
	mems := tx.Bucket(bucketMemories)
	for k, id := c.Seek(prefix); k != nil && strings.HasPrefix(string(k), string(prefix)); k, id = c.Next() {
		raw := mems.Get(id)
		if raw == nil {
			continue
		}
		m, err := decodeLive(raw)
		if err != nil {
			return err
		}
		if err := fn(m, ops.ParseAgent(m)); err != nil {
			return err
		}
	}
	return nil
}

// FlushSeen writes the last-seen times noted since the last flush into
// the registry entries of registered identities, in one transaction. It
// is bookkeeping, not an edit: no superseded version, no updated_at, no
// policy question (the engine writes its own registry).
func (s *Store) FlushSeen(ctx context.Context) (int, error) {
	pending := s.seen.Take()
	if len(pending) == 0 {
		return 0, nil
	}
	n := 0
	err := s.write(authz.AsOwner(ctx, authz.GuardAgents), func(w *writeTx) error {
		n = 0
		return eachAgent(w.tx, func(m *aimemoryv1.Memory, a ops.AgentMeta) error {
			at, ok := pending[a.AgentID]
			if !ok {
				return nil
			}
			next, err := ops.SeenUpdate(m, a, at)
			if err != nil || next == nil {
				return err
			}
			n++
			return w.put(m, next, "")
		})
	})
	if err != nil { // keep them for the next flush
		s.seen.Restore(pending)
		return 0, err
	}
	return n, nil
}

package pgstore

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// The agent registry, as boltstore's (ops/registry.go): one long-tier
// memory per agent in the guarded namespace _agents, titled
// agent:<principal>. The unique title makes two engines registering one
// agent at once one registration (the later retries and merges).
// Last-seen times are noted per engine and reach the shared entries with
// that engine's FlushSeen.

// RegisterAgent registers (or refreshes) the caller in the registry;
// re-registration keeps registered_at and refreshes last_seen_at.
func (s *Store) RegisterAgent(ctx context.Context, req *aimemoryv1.RegisterAgentRequest) (*aimemoryv1.RegisterAgentResponse, error) {
	store, err := ops.Registration(ctx, s.gov, req, s.now(), func(title string) (*aimemoryv1.Memory, error) {
		return s.registryEntry(ctx, title)
	})
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
func (s *Store) registryEntry(ctx context.Context, title string) (*aimemoryv1.Memory, error) {
	var raw []byte
	err := s.pool.QueryRow(ctx, `SELECT record FROM memories WHERE namespace = $1 AND title = $2`, authz.GuardAgents.Name, title).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return decodeMemory(raw)
}

// NoteSeen records a call of principal now. Cheap: one lock, one map write.
func (s *Store) NoteSeen(principal string) { s.seen.Note(principal, s.nowNanos()) }

// ListAgents is the registry as the caller may see it (ops.AgentLister), registered_at ascending, each last-seen the
// later of the stored one and the calls this engine saw since its last
// flush (another engine's show after that engine's FlushSeen).
func (s *Store) ListAgents(ctx context.Context, _ *aimemoryv1.ListAgentsRequest) (*aimemoryv1.ListAgentsResponse, error) {
	resp := &aimemoryv1.ListAgentsResponse{}
	listed := ops.AgentLister(ctx)
	err := eachAgent(ctx, s.pool, func(_ *aimemoryv1.Memory, a ops.AgentMeta) error {
		if listed(a) {
			resp.Agents = append(resp.Agents, a.Agent(s.seen.At(a.AgentID)))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	ops.SortAgents(resp.Agents)
	return resp, nil
}

// rowsQuerier is a pool or a transaction.
type rowsQuerier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// eachAgent visits every registry entry (title agent:<id> in _agents), in
// title order as boltstore's title index.
func eachAgent(ctx context.Context, q rowsQuerier, fn func(*aimemoryv1.Memory, ops.AgentMeta) error) error {
	rows, err := q.Query(ctx, `SELECT record FROM memories WHERE namespace = $1 AND starts_with(title, $2) ORDER BY title COLLATE "C"`,
		authz.GuardAgents.Name, ops.AgentTitlePrefix)
	if err != nil {
		return err
	}
	var mems []*aimemoryv1.Memory
	for rows.Next() {
		var raw []byte
		if err := rows.Scan(&raw); err != nil {
			rows.Close()
			return err
		}
		m, err := decodeMemory(raw)
		if err != nil {
			rows.Close()
			return err
		}
		mems = append(mems, m)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, m := range mems { // after the rows: fn may write in the same transaction
		if err := fn(m, ops.ParseAgent(m)); err != nil {
			return err
		}
	}
	return nil
}

// FlushSeen writes the last-seen times noted since the last flush into
// the registry entries of registered identities, in one transaction:
// bookkeeping, not an edit (no version, no updated_at, no policy question).
func (s *Store) FlushSeen(ctx context.Context) (int, error) {
	pending := s.seen.Take()
	if len(pending) == 0 {
		return 0, nil
	}
	n := 0
	err := s.write(authz.AsOwner(ctx, authz.GuardAgents), func(w *writeTx) error {
		n = 0
		return eachAgent(w.ctx, w.tx, func(m *aimemoryv1.Memory, a ops.AgentMeta) error {
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

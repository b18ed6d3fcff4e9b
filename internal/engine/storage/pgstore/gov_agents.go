package pgstore

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
	"github.com/ai-memory/ai-memory/sdk/record"
)

// The agent registry, as boltstore's (data-model §13.3): one long-tier
// memory per agent in the guarded namespace _agents, titled
// agent:<principal>, written only here. The unique title makes two
// engines registering one agent at once one registration (the loser
// retries and merges).

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
	prev, err := s.registryEntry(ctx, title)
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
func (s *Store) registryEntry(ctx context.Context, title string) (*aimemoryv1.Memory, error) {
	var raw []byte
	err := s.pool.QueryRow(ctx, `SELECT record FROM memories WHERE namespace = $1 AND title = $2`, storage.GuardAgents.Name, title).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return decodeMemory(raw)
}

// lastSeen is when this engine last saw each identity on a call: kept in
// memory and written into registry entries by FlushSeen, as boltstore's.
type lastSeen struct {
	mu   sync.Mutex
	seen map[string]int64 // principal → ns
}

// NoteSeen records a call of principal now. Cheap: one lock, one map write.
func (s *Store) NoteSeen(principal string) {
	if principal == "" {
		return
	}
	now := s.nowNanos()
	s.seen.mu.Lock()
	if s.seen.seen == nil {
		s.seen.seen = map[string]int64{}
	}
	s.seen.seen[principal] = now
	s.seen.mu.Unlock()
}

func (s *Store) seenAt(principal string) int64 {
	s.seen.mu.Lock()
	defer s.seen.mu.Unlock()
	return s.seen.seen[principal]
}

// agentMeta is a registry entry's metadata.
type agentMeta struct {
	AgentID      string   `json:"agent_id"`
	AgentType    string   `json:"agent_type"`
	Capabilities []string `json:"capabilities"`
	RegisteredAt string   `json:"registered_at"`
	LastSeenAt   string   `json:"last_seen_at"`
	RegisteredBy string   `json:"registered_by,omitempty"`
}

func parseTime(s string) int64 {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0
	}
	return t.UnixNano()
}

// ListAgents is the registry, registered_at ascending, each last-seen the
// later of the stored one and the calls this engine saw since. (Another
// engine's unflushed sightings show after its next FlushSeen.)
func (s *Store) ListAgents(ctx context.Context, _ *aimemoryv1.ListAgentsRequest) (*aimemoryv1.ListAgentsResponse, error) {
	resp := &aimemoryv1.ListAgentsResponse{}
	err := eachAgent(ctx, s.pool, func(_ *aimemoryv1.Memory, a agentMeta) error {
		resp.Agents = append(resp.Agents, &aimemoryv1.Agent{
			AgentId: a.AgentID, AgentType: a.AgentType, Capabilities: a.Capabilities,
			RegisteredAt: parseTime(a.RegisteredAt), LastSeenAt: max(parseTime(a.LastSeenAt), s.seenAt(a.AgentID)),
			RegisteredBy: a.RegisteredBy,
		})
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(resp.Agents, func(a, b *aimemoryv1.Agent) int {
		return cmp.Or(cmp.Compare(a.RegisteredAt, b.RegisteredAt), cmp.Compare(a.AgentId, b.AgentId))
	})
	return resp, nil
}

// rowsQuerier is a pool or a transaction.
type rowsQuerier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// eachAgent visits every registry entry (title agent:<id> in _agents), in
// title order as boltstore's title index.
func eachAgent(ctx context.Context, q rowsQuerier, fn func(*aimemoryv1.Memory, agentMeta) error) error {
	rows, err := q.Query(ctx, `SELECT record FROM memories WHERE namespace = $1 AND starts_with(title, $2) ORDER BY title COLLATE "C"`,
		storage.GuardAgents.Name, agentTitlePrefix)
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
		var a agentMeta
		if json.Unmarshal(m.GetMetadataJson(), &a) != nil || a.AgentID == "" {
			a.AgentID = strings.TrimPrefix(m.GetTitle(), agentTitlePrefix)
		}
		if err := fn(m, a); err != nil {
			return err
		}
	}
	return nil
}

// FlushSeen writes the last-seen times noted since the last flush into
// the registry entries of registered identities, in one transaction:
// bookkeeping, not an edit (no version, no updated_at, no policy question).
func (s *Store) FlushSeen(ctx context.Context) (int, error) {
	s.seen.mu.Lock()
	pending := s.seen.seen
	s.seen.seen = nil
	s.seen.mu.Unlock()
	if len(pending) == 0 {
		return 0, nil
	}
	n := 0
	err := s.write(storage.AsOwner(ctx, storage.GuardAgents), func(w *writeTx) error {
		n = 0
		return eachAgent(w.ctx, w.tx, func(m *aimemoryv1.Memory, a agentMeta) error {
			at, ok := pending[a.AgentID]
			if !ok || at <= parseTime(a.LastSeenAt) {
				return nil
			}
			var meta map[string]any
			if json.Unmarshal(m.GetMetadataJson(), &meta) != nil {
				return nil
			}
			meta["last_seen_at"] = record.FormatTime(at)
			raw, err := json.Marshal(meta)
			if err != nil {
				return err
			}
			next := rules.Clone(m)
			next.MetadataJson = raw // content stays: no reindex for bookkeeping
			n++
			return w.put(m, next, "")
		})
	})
	if err != nil { // keep them for the next flush
		s.seen.mu.Lock()
		for p, at := range pending {
			if s.seen.seen == nil {
				s.seen.seen = map[string]int64{}
			}
			s.seen.seen[p] = max(s.seen.seen[p], at)
		}
		s.seen.mu.Unlock()
		return 0, err
	}
	return n, nil
}

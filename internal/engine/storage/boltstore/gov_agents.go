package boltstore

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
	"github.com/ai-memory/ai-memory/sdk/record"
)

// lastSeen is when the engine last saw each identity on a call: kept in
// memory (a map write per call, no transaction on the read path) and
// written into registry entries by FlushSeen on the engine's schedule.
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
// later of the stored one and the calls seen since.
func (s *Store) ListAgents(ctx context.Context, _ *aimemoryv1.ListAgentsRequest) (*aimemoryv1.ListAgentsResponse, error) {
	resp := &aimemoryv1.ListAgentsResponse{}
	err := s.db.View(func(tx *bolt.Tx) error {
		return eachAgent(tx, func(_ *aimemoryv1.Memory, a agentMeta) error {
			resp.Agents = append(resp.Agents, &aimemoryv1.Agent{
				AgentId: a.AgentID, AgentType: a.AgentType, Capabilities: a.Capabilities,
				RegisteredAt: parseTime(a.RegisteredAt), LastSeenAt: max(parseTime(a.LastSeenAt), s.seenAt(a.AgentID)),
				RegisteredBy: a.RegisteredBy,
			})
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(resp.Agents, func(a, b *aimemoryv1.Agent) int {
		return cmp.Or(cmp.Compare(a.RegisteredAt, b.RegisteredAt), cmp.Compare(a.AgentId, b.AgentId))
	})
	return resp, nil
}

// eachAgent visits every registry entry (title agent:<id> in _agents).
func eachAgent(tx *bolt.Tx, fn func(*aimemoryv1.Memory, agentMeta) error) error {
	prefix := titleKey(storage.GuardAgents.Name, agentTitlePrefix)
	c := tx.Bucket(bucketTitles).Cursor()
	mems := tx.Bucket(bucketMemories)
	for k, id := c.Seek(prefix); k != nil && strings.HasPrefix(string(k), string(prefix)); k, id = c.Next() {
		raw := mems.Get(id)
		if raw == nil {
			continue
		}
		m, err := decodeMemory(raw)
		if err != nil {
			return err
		}
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
// the registry entries of registered identities, in one transaction. It
// is bookkeeping, not an edit: no superseded version, no updated_at, no
// policy question (the engine writes its own registry).
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
		return eachAgent(w.tx, func(m *aimemoryv1.Memory, a agentMeta) error {
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

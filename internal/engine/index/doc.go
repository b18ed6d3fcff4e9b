// Package index is the engine's in-memory keyword index: a doc table of
// what filters and ranking read, and an inverted index of stemmed terms,
// answering search, recall, list and related-title queries without reading
// a record. It is derived: a backend stores each memory's term list in the
// transaction that writes the memory, rebuilds the index from those lists
// (or a snapshot of it, snapshot.go) at open, and applies each committed
// change. So it assumes one engine per data dir (one writer that sees
// every commit).
package index

import (
	"encoding/json"
	"math"
	"slices"
	"strings"

	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// docInfo is what the in-memory index keeps of a memory: everything filters
// and ranking read, so a query never decodes a record it will not return.
// Strings many memories share are numbers into the index's tables; the
// BM25 length and the static ranking factor live in slices of their own.
type docInfo struct {
	id        string // in the index's id arena; "" once deleted
	expiresAt int64
	updatedAt int64
	createdAt int64
	ns        uint32 // Index.strs
	agent     uint32 // Index.strs: metadata.agent_id
	tags      uint32 // where its tags' Index.strs numbers start in Index.tagPool
	ntags     uint8  // at most record.MaxTags
	priority  int8   // 1 … 10
	tier      int8   // record.TierRank
	scope     int8   // index in record.Scopes; -1 = unknown (visible to no as_agent)
}

// newDoc is a memory as the index will hold it, not yet interned.
type newDoc struct {
	id, namespace, agentID string
	tags                   []string
	expiresAt, updatedAt   int64
	createdAt              int64
	priority               int8
	tier, scope            int8
	static                 float64
}

func docFromMemory(m *aimemoryv1.Memory) *newDoc {
	agent, scope := MetadataAgentScope(m.GetMetadataJson())
	return &newDoc{
		id:        m.GetId(),
		namespace: m.GetNamespace(),
		agentID:   agent,
		tags:      m.GetTags(),
		tier:      int8(record.TierRank(m.GetTier())),
		scope:     scopeRank(scope),
		priority:  int8(max(math.MinInt8, min(math.MaxInt8, m.GetPriority()))),
		static:    staticFactor(m.GetPriority(), m.GetConfidence()),
		createdAt: m.GetCreatedAt(),
		updatedAt: m.GetUpdatedAt(),
		expiresAt: m.GetExpiresAt(),
	}
}

// live reports whether the memory has not expired at now.
func (d *docInfo) live(now int64) bool { return d.expiresAt == 0 || d.expiresAt > now }

func scopeRank(scope string) int8 {
	if scope == "" {
		return 0 // private
	}
	if i := slices.Index(record.Scopes, scope); i >= 0 {
		return int8(i)
	}
	return -1
}

// MetadataAgentScope reads metadata.agent_id and metadata.scope (exact key
// names; "" when absent or not a string).
func MetadataAgentScope(raw []byte) (agentID, scope string) {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return "", ""
	}
	_ = json.Unmarshal(m["agent_id"], &agentID)
	_ = json.Unmarshal(m["scope"], &scope)
	return agentID, scope
}

// strTable numbers the namespaces, agent ids and tags (0 = ""), so a doc
// holds each in four bytes.
type strTable struct {
	strs []string
	ids  map[string]uint32
}

func newStrTable() strTable { return strTable{strs: []string{""}, ids: map[string]uint32{"": 0}} }

func (t *strTable) intern(s string) uint32 {
	if id, ok := t.ids[s]; ok {
		return id
	}
	s = strings.Clone(s)
	t.ids[s] = uint32(len(t.strs))
	t.strs = append(t.strs, s)
	return uint32(len(t.strs) - 1)
}

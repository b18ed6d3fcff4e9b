// Package index is the engine's in-memory keyword index: a doc table of
// what filters and ranking read, and an inverted index of stemmed terms,
// answering search, recall, list and related-title queries without reading
// a record. It is derived: a backend stores each memory's term list in the
// transaction that writes the memory, rebuilds the index from those lists
// at open, and applies each committed change. So it assumes one engine per
// data dir (one writer that sees every commit).
package index

import (
	"encoding/json"
	"slices"

	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
	"github.com/ai-memory/ai-memory/sdk/record"
)

// docInfo is what the in-memory index keeps of a memory: everything filters
// and ranking read, so a query never decodes a record it will not return.
type docInfo struct {
	// What a list scan reads for every memory comes first: one cache line.
	id        string
	namespace string
	expiresAt int64
	updatedAt int64
	createdAt int64
	priority  int32
	tier      int8 // record.TierRank
	scope     int8 // index in record.Scopes; -1 = unknown (visible to no as_agent)

	agentID    string // metadata.agent_id
	tags       []string
	access     int64
	confidence float64
	length     uint32 // terms in title+content+tags, for BM25
}

func docFromMemory(m *aimemoryv1.Memory) *docInfo {
	agent, scope := MetadataAgentScope(m.GetMetadataJson())
	var tags []string
	if len(m.GetTags()) > 0 {
		tags = slices.Clone(m.GetTags())
	}
	return &docInfo{
		id:         m.GetId(),
		namespace:  m.GetNamespace(),
		agentID:    agent,
		tags:       tags,
		tier:       int8(record.TierRank(m.GetTier())),
		scope:      scopeRank(scope),
		priority:   m.GetPriority(),
		access:     m.GetAccessCount(),
		confidence: m.GetConfidence(),
		createdAt:  m.GetCreatedAt(),
		updatedAt:  m.GetUpdatedAt(),
		expiresAt:  m.GetExpiresAt(),
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

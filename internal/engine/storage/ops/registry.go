package ops

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/governance"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// The agent registry (data-model §13.3), the same for every backend: one
// long-tier memory per agent in the guarded namespace _agents, titled
// agent:<principal>, written only through RegisterAgent and FlushSeen.
// An agent registers itself: the principal is the caller's; a request's
// agent_id may name another identity only when the caller is a
// [governance] operator.

// AgentTitlePrefix is the registry's title of an agent: agent:<principal>.
const AgentTitlePrefix = "agent:"

// Registration is the store request that registers (or refreshes) the
// caller of ctx per req, and its title; prev reads the entry of a title
// (nil when none), so a re-registration keeps registered_at.
func Registration(ctx context.Context, gov *governance.Config, req *aimemoryv1.RegisterAgentRequest, now time.Time,
	prev func(title string) (*aimemoryv1.Memory, error)) (*aimemoryv1.StoreMemoryRequest, error) {
	caller := storage.Principal(ctx)
	if caller == "" {
		return nil, &storage.DeniedError{Reason: "register refused: it needs a caller identity"}
	}
	who := caller
	if id := req.GetAgentId(); id != "" && id != caller {
		if err := record.ValidateAgentID("agent_id", id); err != nil {
			return nil, err
		}
		if !gov.IsOperator(caller) {
			return nil, &storage.DeniedError{Reason: fmt.Sprintf("agent_id: an agent registers only its own session identity %s; %s is another (only [governance] operators may)",
				record.Quote(caller), record.Quote(id))}
		}
		who = id
	}
	if t := req.GetAgentType(); t != "" {
		if err := record.ValidateAgentType(t); err != nil {
			return nil, err
		}
	}
	if err := record.ValidateTags("capabilities", req.GetCapabilities()); err != nil {
		return nil, err
	}
	at := now.UTC().Format(time.RFC3339Nano)
	meta := map[string]any{"agent_id": who, "agent_type": req.GetAgentType(), "capabilities": req.GetCapabilities(),
		"registered_at": at, "last_seen_at": at, "registered_by": caller}
	title := AgentTitlePrefix + who
	old, err := prev(title)
	if err != nil {
		return nil, err
	}
	if old != nil {
		var m map[string]any
		if json.Unmarshal(old.GetMetadataJson(), &m) == nil && m["registered_at"] != nil {
			meta["registered_at"] = m["registered_at"]
		}
	}
	raw, _ := json.Marshal(meta)
	return &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{
		Title: title, Content: string(raw), Namespace: authz.GuardAgents.Name, Tier: "long",
		Tags: []string{"agent-registration"}, Source: "system", Priority: 5, Confidence: 1, MetadataJson: raw,
	}}, nil
}

// AgentMeta is a registry entry's metadata.
type AgentMeta struct {
	AgentID      string   `json:"agent_id"`
	AgentType    string   `json:"agent_type"`
	Capabilities []string `json:"capabilities"`
	RegisteredAt string   `json:"registered_at"`
	LastSeenAt   string   `json:"last_seen_at"`
	RegisteredBy string   `json:"registered_by,omitempty"`
}

// ParseAgent reads a registry entry's metadata; the agent id falls back
// to the title's.
func ParseAgent(m *aimemoryv1.Memory) AgentMeta {
	var a AgentMeta
	if json.Unmarshal(m.GetMetadataJson(), &a) != nil || a.AgentID == "" {
		a.AgentID = strings.TrimPrefix(m.GetTitle(), AgentTitlePrefix)
	}
	return a
}

func parseTime(s string) int64 {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0
	}
	return t.UnixNano()
}

// Agent is the listed agent of a registry entry, last seen at the later of
// the stored time and seen (the calls noted since the last flush).
func (a AgentMeta) Agent(seen int64) *aimemoryv1.Agent {
	return &aimemoryv1.Agent{
		AgentId: a.AgentID, AgentType: a.AgentType, Capabilities: a.Capabilities,
		RegisteredAt: parseTime(a.RegisteredAt), LastSeenAt: max(parseTime(a.LastSeenAt), seen),
		RegisteredBy: a.RegisteredBy,
	}
}

// AgentLister is whether ListAgents shows an entry to the caller of ctx:
// the whole registry to a grant that reads _agents (every namespace), to
// any other only its own entry (the registry names every tenant's agents).
func AgentLister(ctx context.Context) func(AgentMeta) bool {
	g := authz.Of(ctx)
	if g.Reads(authz.GuardAgents.Name) {
		return func(AgentMeta) bool { return true }
	}
	c, _ := g.Caller()
	return func(a AgentMeta) bool { return c.Principal != "" && governance.SamePrincipal(a.AgentID, c.Principal) }
}

// SortAgents orders a list by registered_at, then agent id.
func SortAgents(agents []*aimemoryv1.Agent) {
	slices.SortFunc(agents, func(a, b *aimemoryv1.Agent) int {
		return cmp.Or(cmp.Compare(a.RegisteredAt, b.RegisteredAt), cmp.Compare(a.AgentId, b.AgentId))
	})
}

// SeenUpdate is entry m with last_seen_at at, when at is later than the
// stored one; nil when there is nothing to write. Bookkeeping, not an edit:
// content and updated_at stay.
func SeenUpdate(m *aimemoryv1.Memory, a AgentMeta, at int64) (*aimemoryv1.Memory, error) {
	if at <= parseTime(a.LastSeenAt) {
		return nil, nil
	}
	var meta map[string]any
	if json.Unmarshal(m.GetMetadataJson(), &meta) != nil {
		return nil, nil
	}
	meta["last_seen_at"] = record.FormatTime(at)
	raw, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	next := rules.Clone(m)
	next.MetadataJson = raw // content stays: no reindex for bookkeeping
	return next, nil
}

// LastSeen is when an engine last saw each identity on a call: kept in
// memory (a map write per call, no transaction on the read path) and
// written into registry entries on the engine's schedule (FlushSeen).
type LastSeen struct {
	mu   sync.Mutex
	seen map[string]int64 // principal → ns
}

// Note records a call of principal at.
func (l *LastSeen) Note(principal string, at int64) {
	if principal == "" {
		return
	}
	l.mu.Lock()
	if l.seen == nil {
		l.seen = map[string]int64{}
	}
	l.seen[principal] = at
	l.mu.Unlock()
}

// At is when principal was last noted since the last Take; 0 if not.
func (l *LastSeen) At(principal string) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seen[principal]
}

// Take hands over the times noted so far (for a flush) and starts afresh.
func (l *LastSeen) Take() map[string]int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	taken := l.seen
	l.seen = nil
	return taken
}

// Restore puts back the times of a flush that failed, for the next one.
func (l *LastSeen) Restore(taken map[string]int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for p, at := range taken {
		if l.seen == nil {
			l.seen = map[string]int64{}
		}
		l.seen[p] = max(l.seen[p], at)
	}
}

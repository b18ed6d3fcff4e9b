package sdk

import (
	"context"
	"encoding/json"
	"time"

	"github.com/ai-memory/ai-memory/sdk/wire"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Engine is a plugin's connection to memory. Main makes one per process
// and hands it to every family; a handler passes its own ctx to each call,
// which is how the engine knows who the call is for (docs/plugins.md,
// Identity). Every error is an answer an agent can act on (EngineError).
type Engine struct{ w wire.Engine }

// Connect connects to the engine the host handed this plugin. The
// connection is lazy: a missing engine shows up on the first call.
func Connect() (*Engine, error) {
	c, err := wire.DialEngine()
	if err != nil {
		return nil, err
	}
	return &Engine{w: c}, nil
}

// Protocol is the protocol-level client behind the Engine: every Engine
// API service, in the generated types of proto/. It follows the protocol
// and is outside the SDK's stability promise; the first-party families,
// which change with the protocol, use it for what the methods here do not
// cover.
func (e *Engine) Protocol() wire.Engine { return e.w }

// Memory is one stored memory.
type Memory struct {
	ID        string
	Title     string
	Content   string
	Namespace string
	Tier      string // short, mid or long; "" stores as mid
	Tags      []string
	Priority  int            // 1 to 10; 0 stores the default
	Metadata  map[string]any // JSON object
	CreatedBy string         // who stored it (read only)
	CreatedAt time.Time      // read only
	UpdatedAt time.Time      // read only
}

func (m Memory) proto() (*aimemoryv1.Memory, error) {
	p := &aimemoryv1.Memory{Title: m.Title, Content: m.Content, Namespace: m.Namespace, Tier: m.Tier, Tags: m.Tags, Priority: int32(m.Priority)}
	if m.Metadata != nil {
		raw, err := json.Marshal(m.Metadata)
		if err != nil {
			return nil, Errorf("metadata: %v", err)
		}
		p.MetadataJson = raw
	}
	return p, nil
}

func memoryOf(p *aimemoryv1.Memory) Memory {
	m := Memory{ID: p.GetId(), Title: p.GetTitle(), Content: p.GetContent(), Namespace: p.GetNamespace(), Tier: p.GetTier(),
		Tags: p.GetTags(), Priority: int(p.GetPriority()), CreatedBy: p.GetCreatedBy(),
		CreatedAt: time.Unix(0, p.GetCreatedAt()), UpdatedAt: time.Unix(0, p.GetUpdatedAt())}
	if raw := p.GetMetadataJson(); len(raw) > 0 {
		_ = json.Unmarshal(raw, &m.Metadata) // the engine stores JSON objects only
	}
	return m
}

func memoriesOf(ps []*aimemoryv1.Memory) []Memory {
	out := make([]Memory, len(ps))
	for i, p := range ps {
		out[i] = memoryOf(p)
	}
	return out
}

// Store stores a new memory and returns it as stored (with its id). A
// memory of the same title in the namespace is an error naming the title.
func (e *Engine) Store(ctx context.Context, m Memory) (Memory, error) {
	p, err := m.proto()
	if err != nil {
		return Memory{}, err
	}
	r, err := e.w.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: p, OnConflict: aimemoryv1.ConflictPolicy_CONFLICT_POLICY_ERROR})
	if err != nil {
		return Memory{}, EngineError(err)
	}
	return memoryOf(r.GetMemory()), nil
}

// Get returns the live memories of ids (full ids or the unique short
// prefixes results show), in the order asked; an id matching none is left
// out.
func (e *Engine) Get(ctx context.Context, ids ...string) ([]Memory, error) {
	r, err := e.w.GetMemories(ctx, &aimemoryv1.GetMemoriesRequest{Ids: ids, AllowPrefix: true})
	if err != nil {
		return nil, EngineError(err)
	}
	return memoriesOf(r.GetMemories()), nil
}

// Filter selects the memories List returns. Empty fields select all.
type Filter struct {
	Namespace string
	Tag       string
	Tier      string
	Limit     int // 0 means 100
}

// List returns the memories f selects, newest first.
func (e *Engine) List(ctx context.Context, f Filter) ([]Memory, error) {
	limit := f.Limit
	if limit == 0 {
		limit = 100
	}
	r, err := e.w.ListMemories(ctx, &aimemoryv1.ListMemoriesRequest{Limit: uint32(max(limit, 0)),
		Filter: &aimemoryv1.Filter{Namespace: f.Namespace, Tag: f.Tag, Tier: f.Tier}})
	if err != nil {
		return nil, EngineError(err)
	}
	return memoriesOf(r.GetMemories()), nil
}

// SetTags replaces the tags of memory id and returns it as updated.
func (e *Engine) SetTags(ctx context.Context, id string, tags ...string) (Memory, error) {
	r, err := e.w.UpdateMemory(ctx, &aimemoryv1.UpdateMemoryRequest{Id: id, SetTags: true, Tags: tags})
	if err != nil {
		return Memory{}, EngineError(err)
	}
	return memoryOf(r.GetMemory()), nil
}

// Link is a directed, typed edge between two memories.
type Link struct {
	From, To string
	Relation string // related_to, supersedes, contradicts or derived_from
	// ObservedBy is who asserted it: the engine records the caller the
	// host resolved, never a value a plugin sends.
	ObservedBy string
}

// Link links memory from to memory to ("" relation is related_to).
// Linking again what is already linked changes nothing.
func (e *Engine) Link(ctx context.Context, from, to, relation string) error {
	if _, err := e.w.PutLink(ctx, &aimemoryv1.PutLinkRequest{SourceId: from, TargetId: to, Relation: relation}); err != nil {
		return EngineError(err)
	}
	return nil
}

// LinksFrom returns the valid links leaving the memories ids.
func (e *Engine) LinksFrom(ctx context.Context, ids ...string) ([]Link, error) {
	r, err := e.w.GetLinks(ctx, &aimemoryv1.GetLinksRequest{Ids: ids, Direction: aimemoryv1.Direction_DIRECTION_OUT})
	if err != nil {
		return nil, EngineError(err)
	}
	out := make([]Link, 0, len(r.GetLinks()))
	for _, l := range r.GetLinks() {
		out = append(out, Link{From: l.GetSourceId(), To: l.GetTargetId(), Relation: l.GetRelation(), ObservedBy: l.GetObservedBy()})
	}
	return out, nil
}

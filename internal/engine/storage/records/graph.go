package records

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	"github.com/ai-memory/ai-memory/internal/engine/storage/seam"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// PutLink creates the link, or revives an invalidated one (see
// PutLinkOutcome); a link valid with no end is left as it is. Both
// memories must exist (expired-but-uncollected ones do).
func (s *Store) PutLink(ctx context.Context, req *aimemoryv1.PutLinkRequest) (*aimemoryv1.PutLinkResponse, error) {
	rel, by, err := ops.ValidatePutLink(ctx, req)
	if err != nil {
		return nil, err
	}
	// A link valid with no end needs no write (nor the commit of an empty
	// transaction): answer from a read. A live link's ends are live.
	var current *aimemoryv1.Link
	unchanged := false
	err = s.b.Read(ctx, func(t seam.Tx) error {
		var err error
		if current, err = ops.ReadLink(t, req.GetSourceId(), req.GetTargetId(), rel); err != nil || current == nil {
			return err
		}
		src, err := t.Get(current.SourceId)
		if err != nil {
			return err
		}
		dst, err := t.Get(current.TargetId)
		if err != nil {
			return err
		}
		unchanged = src != nil && dst != nil && ops.Unchanged(ctx, current, src.GetNamespace(), dst.GetNamespace())
		return nil
	})
	if err != nil {
		return nil, err
	}
	if unchanged {
		return &aimemoryv1.PutLinkResponse{Link: current, Outcome: aimemoryv1.PutLinkOutcome_PUT_LINK_OUTCOME_UNCHANGED}, nil
	}
	return governed(ctx, s, &aimemoryv1.PendingPayload{Action: &aimemoryv1.PendingPayload_Link{Link: req}}, func(t seam.Tx) (*aimemoryv1.PutLinkResponse, error) {
		resp := &aimemoryv1.PutLinkResponse{}
		return resp, ops.PutLink(t, req, rel, by, resp)
	})
}

// InvalidateLink sets the end of the link's current interval (now when
// valid_until is absent; past and future are both allowed) and records who
// did it and when. Calling it again moves the end. found is false when
// both memories exist but the link does not (ops.InvalidateLink).
func (s *Store) InvalidateLink(ctx context.Context, req *aimemoryv1.InvalidateLinkRequest) (*aimemoryv1.InvalidateLinkResponse, error) {
	by, err := ops.ValidateInvalidateLink(ctx, req)
	if err != nil {
		return nil, err
	}
	return governed(ctx, s, &aimemoryv1.PendingPayload{Action: &aimemoryv1.PendingPayload_Unlink{Unlink: req}}, func(t seam.Tx) (*aimemoryv1.InvalidateLinkResponse, error) {
		resp := &aimemoryv1.InvalidateLinkResponse{}
		return resp, ops.InvalidateLink(t, req, by, resp)
	})
}

// RegisterEntity creates the entity (canonical_name, namespace), or reuses
// it when it exists (its metadata left as it is), and adds the aliases it
// lacks; all in one transaction, so an alias held by another entity of the
// namespace (storage.AliasTakenError) writes nothing. A memory with the
// same title that is not an entity blocks registration (ops.RegisterEntity).
func (s *Store) RegisterEntity(ctx context.Context, req *aimemoryv1.RegisterEntityRequest) (*aimemoryv1.RegisterEntityResponse, error) {
	in, err := ops.ValidateRegisterEntity(ctx, req)
	if err != nil {
		return nil, err
	}
	return written(ctx, s, func(t seam.Tx) (*aimemoryv1.RegisterEntityResponse, error) {
		resp := &aimemoryv1.RegisterEntityResponse{}
		return resp, ops.RegisterEntity(t, in, resp)
	})
}

// GetEntityByAlias resolves an alias (case-folded) in a namespace, or in
// every namespace, where the most recently created entity the caller may
// read wins (t.Get answers only those). No entity is an empty response,
// not an error.
func (s *Store) GetEntityByAlias(ctx context.Context, req *aimemoryv1.GetEntityByAliasRequest) (*aimemoryv1.GetEntityByAliasResponse, error) {
	f, ns, err := ops.ValidateEntityLookup(req)
	if err != nil {
		return nil, err
	}
	return read(ctx, s, func(t seam.Tx) (*aimemoryv1.GetEntityByAliasResponse, error) {
		var ids []string
		if ns != "" {
			id, err := t.AliasHolder(f, ns)
			if err != nil {
				return nil, err
			}
			if id != "" {
				ids = append(ids, id)
			}
		} else if ids, err = t.AliasHolders(f); err != nil {
			return nil, err
		}
		var best *aimemoryv1.Memory
		for _, id := range ids {
			m, err := t.Get(id)
			if err != nil {
				return nil, err
			}
			if m != nil && ops.Newer(m, best) {
				best = m
			}
		}
		resp := &aimemoryv1.GetEntityByAliasResponse{}
		if best == nil {
			return resp, nil
		}
		_, aliases, err := t.Aliases(best.Id)
		resp.Entity = ops.EntityOf(best, aliases)
		return resp, err
	})
}

// GetLinks returns the links of a set of memories in one call, filtered by
// relation, validity at an instant and observer, with the far ends'
// titles on request: a traversal's frontier read (ops.LinksAnswer).
func (s *Store) GetLinks(ctx context.Context, req *aimemoryv1.GetLinksRequest) (*aimemoryv1.GetLinksResponse, error) {
	f, err := ops.ValidateGetLinks(req)
	if err != nil {
		return nil, err
	}
	return read(ctx, s, func(t seam.Tx) (*aimemoryv1.GetLinksResponse, error) {
		g := newGraphReads(t, req.GetDirection(), req.GetRelation(), req.GetIncludeArchived())
		if err := g.level(rules.Dedupe(slices.Clone(req.GetIds()))); err != nil {
			return nil, err
		}
		return ops.LinksAnswer(authz.Of(ctx).Reader(), req, f, g)
	})
}

// Traverse walks breadth-first (ops.TraverseAnswer) in one read
// transaction: every level sees the same snapshot.
func (s *Store) Traverse(ctx context.Context, req *aimemoryv1.TraverseRequest) (*aimemoryv1.TraverseResponse, error) {
	w, err := ops.ValidateTraverse(req)
	if err != nil {
		return nil, err
	}
	return read(ctx, s, func(t seam.Tx) (*aimemoryv1.TraverseResponse, error) {
		g := newGraphReads(t, req.GetDirection(), req.GetRelation(), false)
		return ops.TraverseAnswer(authz.Of(ctx).Reader(), w, func(ids []string) (ops.LinkReads, error) {
			return g, g.level(ids)
		})
	})
}

// LinkTimeline lists a memory's outbound links, one event per validity
// interval whose start lies in [since, until] (ops.Timeline), the first
// limit of them, each with its target's title and namespace. What the
// caller may not read is not there: the source is not found, a target's
// links are left out.
func (s *Store) LinkTimeline(ctx context.Context, req *aimemoryv1.LinkTimelineRequest) (*aimemoryv1.LinkTimelineResponse, error) {
	q, err := ops.ValidateTimeline(req)
	if err != nil {
		return nil, err
	}
	readable := authz.Of(ctx).Reader()
	return read(ctx, s, func(t seam.Tx) (*aimemoryv1.LinkTimelineResponse, error) {
		src, _, err := t.Summaries([]string{q.Source}, false)
		if err != nil {
			return nil, err
		}
		if n := src[q.Source]; n == nil || !readable(n.Namespace) {
			return nil, fmt.Errorf("source_id: %w: %s", storage.ErrNotFound, q.Source)
		}
		out, _, err := t.Links([]string{q.Source}, aimemoryv1.Direction_DIRECTION_OUT, "", false)
		if err != nil {
			return nil, err
		}
		links := out[q.Source]
		targets := make([]string, len(links))
		for i, l := range links {
			targets[i] = l.TargetId
		}
		nodes, _, err := t.Summaries(targets, false)
		if err != nil {
			return nil, err
		}
		kept := links[:0]
		for _, l := range links {
			n := nodes[l.TargetId]
			if n == nil {
				return nil, fmt.Errorf("link names missing memory %s", l.TargetId)
			}
			if readable(n.Namespace) {
				kept = append(kept, l)
			}
		}
		events := q.Events(kept)
		resp := &aimemoryv1.LinkTimelineResponse{Total: uint32(len(events))}
		for _, l := range events[:min(q.Limit, len(events))] {
			resp.Events = append(resp.Events, &aimemoryv1.TimelineEvent{Link: l, Target: nodes[l.TargetId]})
		}
		return resp, nil
	})
}

// graphReads is ops.LinkReads over a read transaction, a level at a time:
// the links of a level's ids in one Links read (per kind, live and
// archived) and the summaries of the memories they name in one Summaries
// read, so that a backend answers a level in a few queries, not a few per
// memory. Summaries are kept for the next level, whose ids they name.
type graphReads struct {
	t          seam.Tx
	dir        aimemoryv1.Direction
	relation   string
	archived   bool
	live, arch map[string]*aimemoryv1.NodeSummary
	summarised map[string]bool // asked of Summaries, found or not
	// The level's links: live, then archived (when asked), by end.
	out, in, archOut, archIn map[string][]*aimemoryv1.Link
}

var _ ops.LinkReads = (*graphReads)(nil)

func newGraphReads(t seam.Tx, dir aimemoryv1.Direction, relation string, archived bool) *graphReads {
	return &graphReads{
		t: t, dir: dir, relation: relation, archived: archived,
		live: map[string]*aimemoryv1.NodeSummary{}, arch: map[string]*aimemoryv1.NodeSummary{}, summarised: map[string]bool{},
	}
}

// level reads the links of ids (distinct) and the summaries of every
// memory they name.
func (g *graphReads) level(ids []string) error {
	if err := g.summarise(ids); err != nil {
		return err
	}
	var err error
	if g.out, g.in, err = g.t.Links(ids, g.dir, g.relation, false); err != nil {
		return err
	}
	if g.archived {
		if g.archOut, g.archIn, err = g.t.Links(ids, g.dir, g.relation, true); err != nil {
			return err
		}
	}
	var named []string
	for _, byEnd := range []map[string][]*aimemoryv1.Link{g.out, g.in, g.archOut, g.archIn} {
		for _, ls := range byEnd {
			for _, l := range ls {
				named = append(named, l.SourceId, l.TargetId)
			}
		}
	}
	return g.summarise(named)
}

// summarise reads the summaries of the ids not read yet.
func (g *graphReads) summarise(ids []string) error {
	var todo []string
	for _, id := range ids {
		if !g.summarised[id] {
			g.summarised[id] = true
			todo = append(todo, id)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	live, arch, err := g.t.Summaries(todo, g.archived)
	maps.Copy(g.live, live)
	maps.Copy(g.arch, arch)
	return err
}

func (g *graphReads) Exists(id string) (live, archived bool, err error) {
	return g.live[id] != nil, g.arch[id] != nil, nil
}

// Node is the live memory's summary, else the archived one's.
func (g *graphReads) Node(id string) (*aimemoryv1.NodeSummary, error) {
	if n := cmp.Or(g.live[id], g.arch[id]); n != nil {
		return n, nil
	}
	return nil, fmt.Errorf("link names missing memory %s", id)
}

// Links: the direction and relation were applied by the level's read.
func (g *graphReads) Links(id string, archived bool, _ aimemoryv1.Direction, f *rules.LinkFilter, seen map[string]bool, dst []*aimemoryv1.Link) ([]*aimemoryv1.Link, error) {
	if archived {
		return ops.CollectLinks(g.archOut, g.archIn, id, f, seen, dst), nil
	}
	return ops.CollectLinks(g.out, g.in, id, f, seen, dst), nil
}

package ops

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Link writes of the graph family, written once for every backend. A link
// is never deleted by them: an invalidation closes its current validity
// interval, and a later PutLink starts a new one, keeping the closed
// interval in the link's history (bounded by rules.CloseInterval), so a
// query at any instant sees the link as it was then. Deleting either
// memory removes the link (the backend's Remove).

// LinkTx is what the link steps need of a backend's write transaction.
type LinkTx interface {
	Tx
	// Emit records an event about m for after the commit.
	Emit(event string, m *aimemoryv1.Memory)
}

// ValidatePutLink checks a PutLink request, returning its relation (the
// default when absent) and observer: the verified caller of ctx, which
// the request cannot name.
func ValidatePutLink(ctx context.Context, req *aimemoryv1.PutLinkRequest) (rel, by string, err error) {
	rel = rules.Or(req.GetRelation(), record.DefaultRelation)
	if err := record.ValidateLink(req.GetSourceId(), req.GetTargetId(), rel); err != nil {
		return "", "", err
	}
	by = storage.Principal(ctx)
	if err := record.ValidateAgentID("observed_by", by); err != nil {
		return "", "", err
	}
	return rel, by, nil
}

// ValidateInvalidateLink checks an InvalidateLink request (the relation is
// required), returning who invalidates: the verified caller of ctx.
func ValidateInvalidateLink(ctx context.Context, req *aimemoryv1.InvalidateLinkRequest) (string, error) {
	if err := record.ValidateLink(req.GetSourceId(), req.GetTargetId(), req.GetRelation()); err != nil {
		return "", err
	}
	by := storage.Principal(ctx)
	return by, record.ValidateAgentID("invalidated_by", by)
}

// OpenEnded reports whether l is valid from a start with no end: PutLink
// leaves it as it is (and needs no write).
func OpenEnded(l *aimemoryv1.Link) bool {
	return l != nil && l.ValidUntil == 0 && l.ValidFrom != 0
}

// Unchanged reports whether PutLink may answer "unchanged" from a read,
// with no write: l is open-ended and the caller may write both ends'
// namespaces (authz), so the read tells it nothing it could not learn by
// linking; anything else goes through the write, which says why not.
func Unchanged(ctx context.Context, l *aimemoryv1.Link, sourceNS, targetNS string) bool {
	return OpenEnded(l) && authz.Of(ctx).CheckWrite(string(storage.OpLink), sourceNS, targetNS) == nil
}

// Endpoints reads both memories of a link; a missing one is
// storage.ErrNotFound naming its field.
func Endpoints(tx Tx, source, target string) (src, dst *aimemoryv1.Memory, err error) {
	if src, err = tx.Get(source); err != nil {
		return nil, nil, err
	}
	if src == nil {
		return nil, nil, fmt.Errorf("source_id: %w: %s", storage.ErrNotFound, source)
	}
	if dst, err = tx.Get(target); err != nil {
		return nil, nil, err
	}
	if dst == nil {
		return nil, nil, fmt.Errorf("target_id: %w: %s", storage.ErrNotFound, target)
	}
	return src, dst, nil
}

// PutLink is PutLink inside tx, on a validated request (ValidatePutLink):
// it creates the link, or revives an invalidated one; a link valid with no
// end is left as it is. Both memories must exist (expired-but-uncollected
// ones do). Also the approval path's executor.
func PutLink(tx LinkTx, req *aimemoryv1.PutLinkRequest, rel, by string, resp *aimemoryv1.PutLinkResponse) error {
	src, dst, err := Endpoints(tx, req.GetSourceId(), req.GetTargetId())
	if err != nil {
		return err
	}
	l, err := ReadLink(tx, req.GetSourceId(), req.GetTargetId(), rel)
	if err != nil {
		return err
	}
	now := tx.Now()
	switch {
	case l == nil:
		l = &aimemoryv1.Link{
			SourceId: req.GetSourceId(), TargetId: req.GetTargetId(), Relation: rel,
			CreatedAt: now, ValidFrom: now, ObservedBy: by,
		}
		resp.Outcome = aimemoryv1.PutLinkOutcome_PUT_LINK_OUTCOME_CREATED
	case OpenEnded(l):
		resp.Link, resp.Outcome = l, aimemoryv1.PutLinkOutcome_PUT_LINK_OUTCOME_UNCHANGED
		return nil
	case l.ValidUntil > now && l.ValidFrom != 0 && l.ValidFrom <= now:
		// Still valid with an end ahead: the same interval goes on.
		l.ValidUntil, l.InvalidatedBy, l.InvalidatedAt = 0, "", 0
		resp.Outcome = aimemoryv1.PutLinkOutcome_PUT_LINK_OUTCOME_REVIVED
	default:
		rules.CloseInterval(l)
		l.ValidFrom, l.ValidUntil, l.ObservedBy = now, 0, by
		l.InvalidatedBy, l.InvalidatedAt = "", 0
		resp.Outcome = aimemoryv1.PutLinkOutcome_PUT_LINK_OUTCOME_REVIVED
	}
	if err := tx.Authorize(storage.Write{Op: storage.OpLink, Old: src, New: src, Link: l, Target: dst}); err != nil {
		return err
	}
	if err := tx.PutRecord(LinkRecord(KindLink, l)); err != nil {
		return err
	}
	resp.Link = l
	tx.Emit(storage.EventLinkCreated, src) // memory_id is the source
	return nil
}

// InvalidateLink is InvalidateLink inside tx, on a validated request
// (ValidateInvalidateLink): it sets the end of the link's current interval
// (now when valid_until is absent; past and future are both allowed) and
// records who did it and when. found is false when both memories exist but
// the link does not. Also the approval path's executor.
func InvalidateLink(tx LinkTx, req *aimemoryv1.InvalidateLinkRequest, by string, resp *aimemoryv1.InvalidateLinkResponse) error {
	src, dst, err := Endpoints(tx, req.GetSourceId(), req.GetTargetId())
	if err != nil {
		return err
	}
	l, err := ReadLink(tx, req.GetSourceId(), req.GetTargetId(), req.GetRelation())
	if err != nil || l == nil {
		return err
	}
	now := tx.Now()
	resp.Found, resp.PreviousValidUntil = true, l.ValidUntil
	l.ValidUntil = now
	if req.ValidUntil != nil {
		l.ValidUntil = req.GetValidUntil()
	}
	l.InvalidatedBy, l.InvalidatedAt = by, now
	if err := tx.Authorize(storage.Write{Op: storage.OpLink, Old: src, New: src, Link: l, Target: dst}); err != nil {
		return err
	}
	if err := tx.PutRecord(LinkRecord(KindLink, l)); err != nil {
		return err
	}
	resp.Link = l
	tx.Emit(storage.EventLinkInvalidated, src)
	return nil
}

// ValidateGetLinks checks a GetLinks request, returning its filter (nil:
// every link as it is).
func ValidateGetLinks(req *aimemoryv1.GetLinksRequest) (*rules.LinkFilter, error) {
	if err := rules.ValidateIDs("ids", req.GetIds()); err != nil {
		return nil, err
	}
	dir := req.GetDirection()
	if !slices.Contains([]aimemoryv1.Direction{
		aimemoryv1.Direction_DIRECTION_UNSPECIFIED, aimemoryv1.Direction_DIRECTION_OUT,
		aimemoryv1.Direction_DIRECTION_IN, aimemoryv1.Direction_DIRECTION_BOTH,
	}, dir) {
		return nil, &record.FieldError{Field: "direction", Rule: fmt.Sprintf("must be OUT, IN or BOTH (got %d)", dir)}
	}
	return rules.NewLinkFilter(req)
}

// Timeline is a validated LinkTimeline request.
type Timeline struct {
	Source       string
	Limit        int
	since, until int64
}

// ValidateTimeline checks a LinkTimeline request.
func ValidateTimeline(req *aimemoryv1.LinkTimelineRequest) (*Timeline, error) {
	if err := record.ValidateID("source_id", req.GetSourceId()); err != nil {
		return nil, err
	}
	limit := int(req.GetLimit())
	switch {
	case limit == 0:
		limit = rules.DefaultTimelineLimit
	case limit > rules.MaxTimelineLimit:
		return nil, &record.FieldError{Field: "limit", Rule: fmt.Sprintf("must be at most %d (got %d)", rules.MaxTimelineLimit, limit)}
	}
	return &Timeline{Source: req.GetSourceId(), Limit: limit, since: req.GetSince(), until: req.GetUntil()}, nil
}

// Events are the validity intervals of links (the source's outbound ones
// the caller may see) whose start lies in [since, until], ordered by
// start, then creation, target and relation, and how many there are.
func (q *Timeline) Events(links []*aimemoryv1.Link) []*aimemoryv1.Link {
	in := func(t int64) bool {
		return t != 0 && (q.since == 0 || t >= q.since) && (q.until == 0 || t <= q.until)
	}
	var events []*aimemoryv1.Link
	for _, l := range links {
		if len(l.History) == 0 { // its one interval is l itself: no copy
			if in(l.ValidFrom) {
				events = append(events, l)
			}
			continue
		}
		for _, iv := range rules.Intervals(l) {
			if in(iv.ValidFrom) {
				events = append(events, iv)
			}
		}
	}
	slices.SortFunc(events, func(a, b *aimemoryv1.Link) int {
		return cmp.Or(cmp.Compare(a.ValidFrom, b.ValidFrom), cmp.Compare(a.CreatedAt, b.CreatedAt),
			cmp.Compare(a.TargetId, b.TargetId), cmp.Compare(a.Relation, b.Relation))
	})
	return events
}

// LinkReads is one snapshot of a backend's graph, as the shared GetLinks
// answer reads it.
type LinkReads interface {
	// Exists says whether memory id is live, or has an archive row.
	Exists(id string) (live, archived bool, err error)
	// Node is what graph results show of memory id: the live memory's, else
	// the archived one's; an error when it is neither.
	Node(id string) (*aimemoryv1.NodeSummary, error)
	// Links appends id's links in direction dir to dst, live ones or
	// (archived) the ones kept in the archive: outbound, then inbound, each
	// in the backend's key order, skipping those in seen (adding the rest;
	// a nil seen keeps all) and those f rejects, as f sees them.
	Links(id string, archived bool, dir aimemoryv1.Direction, f *rules.LinkFilter, seen map[string]bool, dst []*aimemoryv1.Link) ([]*aimemoryv1.Link, error)
}

// LinkKey identifies a link in a seen set.
func LinkKey(l *aimemoryv1.Link) string {
	return l.SourceId + "\x00" + l.TargetId + "\x00" + l.Relation
}

// CollectLinks appends id's links, outbound (out[id]) then inbound
// (in[id]), to dst, each once (seen, by LinkKey; nil keeps all) and as f
// sees it (f.View; nil = rejected).
func CollectLinks(out, in map[string][]*aimemoryv1.Link, id string, f *rules.LinkFilter, seen map[string]bool, dst []*aimemoryv1.Link) []*aimemoryv1.Link {
	for _, ls := range [][]*aimemoryv1.Link{out[id], in[id]} {
		for _, l := range ls {
			if seen != nil {
				k := LinkKey(l)
				if seen[k] {
					continue
				}
				seen[k] = true
			}
			if l = f.View(l); l != nil {
				dst = append(dst, l)
			}
		}
	}
	return dst
}

// ReadableIDs is whether the caller may read memory id (readable: authz),
// by its namespace (ns), each id's asked once.
func ReadableIDs(readable func(string) bool, ns func(id string) (string, error)) func(id string) (bool, error) {
	known := map[string]bool{}
	return func(id string) (bool, error) {
		if v, ok := known[id]; ok {
			return v, nil
		}
		n, err := ns(id)
		if err != nil {
			return false, err
		}
		known[id] = readable(n)
		return known[id], nil
	}
}

// ReadableLinks keeps the links both of whose ends the caller may read
// (visible: ReadableIDs).
func ReadableLinks(links []*aimemoryv1.Link, visible func(id string) (bool, error)) ([]*aimemoryv1.Link, error) {
	kept := links[:0]
	for _, l := range links {
		s, err := visible(l.SourceId)
		if err != nil {
			return nil, err
		}
		t, err := visible(l.TargetId)
		if err != nil {
			return nil, err
		}
		if s && t {
			kept = append(kept, l)
		}
	}
	return kept, nil
}

// LinksAnswer is GetLinks' answer over r, for a request validated by
// ValidateGetLinks (its filter f): the links of the asked memories, each
// once, then, on request, the far ends' summaries. A memory the caller
// may not read (readable: authz) is not there: not as a start, not as the
// far end of a link, not as a node.
func LinksAnswer(readable func(ns string) bool, req *aimemoryv1.GetLinksRequest, f *rules.LinkFilter, r LinkReads) (*aimemoryv1.GetLinksResponse, error) {
	resp := &aimemoryv1.GetLinksResponse{}
	dir, archived := req.GetDirection(), req.GetIncludeArchived()
	nodes := map[string]*aimemoryv1.NodeSummary{} // each read once: for the rule, then for the answer
	node := func(id string) (*aimemoryv1.NodeSummary, error) {
		if n, ok := nodes[id]; ok {
			return n, nil
		}
		n, err := r.Node(id)
		if err == nil {
			nodes[id] = n
		}
		return n, err
	}
	visible := ReadableIDs(readable, func(id string) (string, error) {
		n, err := node(id)
		return n.GetNamespace(), err
	})
	// One direction of distinct ids cannot meet a link twice.
	var seen map[string]bool
	if dir == aimemoryv1.Direction_DIRECTION_BOTH || dir == aimemoryv1.Direction_DIRECTION_UNSPECIFIED || archived {
		seen = map[string]bool{}
	}
	asked := make(map[string]bool, len(req.GetIds()))
	for _, id := range req.GetIds() {
		if asked[id] {
			continue
		}
		asked[id] = true
		live, arch, err := r.Exists(id)
		if err != nil {
			return nil, err
		}
		if !live && !(archived && arch) {
			resp.NotFound = append(resp.NotFound, id)
			continue
		}
		if ok, err := visible(id); err != nil {
			return nil, err
		} else if !ok {
			resp.NotFound = append(resp.NotFound, id)
			continue
		}
		if live {
			if resp.Links, err = r.Links(id, false, dir, f, seen, resp.Links); err != nil {
				return nil, err
			}
		}
		// An archived memory's links, and a live one's links to archived
		// memories, are kept in the archive.
		if archived {
			if resp.Links, err = r.Links(id, true, dir, f, seen, resp.Links); err != nil {
				return nil, err
			}
		}
	}
	var err error
	if resp.Links, err = ReadableLinks(resp.Links, visible); err != nil {
		return nil, err
	}
	if !req.GetIncludeNodes() {
		return resp, nil
	}
	for _, l := range resp.Links {
		for _, id := range []string{l.SourceId, l.TargetId} {
			if asked[id] {
				continue
			}
			asked[id] = true
			n, err := node(id)
			if err != nil {
				return nil, err
			}
			resp.Nodes = append(resp.Nodes, n)
		}
	}
	return resp, nil
}

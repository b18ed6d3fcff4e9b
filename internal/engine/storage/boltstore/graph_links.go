package boltstore

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
	"github.com/ai-memory/ai-memory/sdk/record"
)

// Link writes of the graph family. A link is never deleted by them: an
// invalidation closes its current validity interval, and a later PutLink
// starts a new one, keeping the closed interval in the link's history, so
// a query at any instant sees the link as it was then. Deleting either
// memory removes the link (writeTx.remove).

// Event types of link writes; memory_id is the source.
const (
	eventLinkCreated     = "memory_link_created"
	eventLinkInvalidated = "memory_link_invalidated"
)

// relationOK checks the relation from a links_out key, before decoding.
func relationOK(f *rules.LinkFilter, key []byte) bool {
	if f == nil || f.Relation == "" {
		return true
	}
	return bytes.HasSuffix(key, []byte(f.Relation)) && len(key) > len(f.Relation) && key[len(key)-len(f.Relation)-1] == 0
}

func readLink(tx *bolt.Tx, source, target, relation string) (*aimemoryv1.Link, error) {
	raw := tx.Bucket(bucketLinksOut).Get(linkKey(source, target, relation))
	if raw == nil {
		return nil, nil
	}
	return decodeLink(raw)
}

// nodeSummary is what graph results show of memory id. It reads only the
// record's id, title and namespace fields (protowire), not its content:
// a traversal level summarises hundreds of memories.
func nodeSummary(mems *bolt.Bucket, id string) (*aimemoryv1.NodeSummary, error) {
	raw := mems.Get([]byte(id))
	if raw == nil {
		return nil, fmt.Errorf("link names missing memory %s", id)
	}
	n := &aimemoryv1.NodeSummary{Id: id}
	for b := raw; len(b) > 0; {
		num, typ, k := protowire.ConsumeTag(b)
		if k < 0 {
			return nil, fmt.Errorf("memory %s: %w", id, protowire.ParseError(k))
		}
		b = b[k:]
		if typ == protowire.BytesType && (num == memoryFieldTitle || num == memoryFieldNamespace) {
			v, k := protowire.ConsumeString(b)
			if k < 0 {
				return nil, fmt.Errorf("memory %s: %w", id, protowire.ParseError(k))
			}
			if num == memoryFieldTitle {
				n.Title = v
			} else {
				n.Namespace = v
			}
			b = b[k:]
			continue
		}
		k = protowire.ConsumeFieldValue(num, typ, b)
		if k < 0 {
			return nil, fmt.Errorf("memory %s: %w", id, protowire.ParseError(k))
		}
		b = b[k:]
	}
	return n, nil
}

// Field numbers of Memory that nodeSummary reads.
var (
	memoryFieldNamespace = (&aimemoryv1.Memory{}).ProtoReflect().Descriptor().Fields().ByName("namespace").Number()
	memoryFieldTitle     = (&aimemoryv1.Memory{}).ProtoReflect().Descriptor().Fields().ByName("title").Number()
)

// endpoints reads both memories of a link; a missing one is
// storage.ErrNotFound naming its field.
func (w *writeTx) endpoints(source, target string) (src, dst *aimemoryv1.Memory, err error) {
	if src, err = w.get(source); err != nil {
		return nil, nil, err
	}
	if src == nil {
		return nil, nil, fmt.Errorf("source_id: %w: %s", storage.ErrNotFound, source)
	}
	if dst, err = w.get(target); err != nil {
		return nil, nil, err
	}
	if dst == nil {
		return nil, nil, fmt.Errorf("target_id: %w: %s", storage.ErrNotFound, target)
	}
	return src, dst, nil
}

// PutLink creates the link, or revives an invalidated one (see
// PutLinkOutcome); a link valid with no end is left as it is. Both
// memories must exist (expired-but-uncollected ones do).
func (s *Store) PutLink(ctx context.Context, req *aimemoryv1.PutLinkRequest) (*aimemoryv1.PutLinkResponse, error) {
	rel := rules.Or(req.GetRelation(), record.DefaultRelation)
	if err := record.ValidateLink(req.GetSourceId(), req.GetTargetId(), rel); err != nil {
		return nil, err
	}
	by := req.GetObservedBy()
	if err := record.ValidateAgentID("observed_by", by); err != nil {
		return nil, err
	}
	// A link valid with no end needs no write (nor the fsync of an empty
	// commit): answer from a read transaction.
	var current *aimemoryv1.Link
	if err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		current, err = readLink(tx, req.GetSourceId(), req.GetTargetId(), rel)
		return err
	}); err != nil {
		return nil, err
	}
	if current != nil && current.ValidUntil == 0 && current.ValidFrom != 0 {
		return &aimemoryv1.PutLinkResponse{Link: current, Outcome: aimemoryv1.PutLinkOutcome_PUT_LINK_OUTCOME_UNCHANGED}, nil
	}
	var resp *aimemoryv1.PutLinkResponse
	err := s.writeGoverned(ctx, &aimemoryv1.PendingPayload{Action: &aimemoryv1.PendingPayload_Link{Link: req}}, func(w *writeTx) error {
		resp = &aimemoryv1.PutLinkResponse{}
		return w.putLink(req, rel, by, resp)
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// InvalidateLink sets the end of the link's current interval (now when
// valid_until is absent; past and future are both allowed) and records who did
// it and when. Calling it again moves the end. found is false when both
// memories exist but the link does not.
func (s *Store) InvalidateLink(ctx context.Context, req *aimemoryv1.InvalidateLinkRequest) (*aimemoryv1.InvalidateLinkResponse, error) {
	if err := record.ValidateLink(req.GetSourceId(), req.GetTargetId(), req.GetRelation()); err != nil {
		return nil, err
	}
	by := req.GetInvalidatedBy()
	if err := record.ValidateAgentID("invalidated_by", by); err != nil {
		return nil, err
	}
	var resp *aimemoryv1.InvalidateLinkResponse
	err := s.writeGoverned(ctx, &aimemoryv1.PendingPayload{Action: &aimemoryv1.PendingPayload_Unlink{Unlink: req}}, func(w *writeTx) error {
		resp = &aimemoryv1.InvalidateLinkResponse{}
		return w.invalidateLink(req, by, resp)
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// LinkTimeline lists a memory's outbound links, one event per validity
// interval whose start lies in [since, until], ordered by start, then
// creation, target and relation; the first limit of them, each with its
// target's title and namespace.
func (s *Store) LinkTimeline(ctx context.Context, req *aimemoryv1.LinkTimelineRequest) (*aimemoryv1.LinkTimelineResponse, error) {
	source := req.GetSourceId()
	if err := record.ValidateID("source_id", source); err != nil {
		return nil, err
	}
	limit := int(req.GetLimit())
	switch {
	case limit == 0:
		limit = rules.DefaultTimelineLimit
	case limit > rules.MaxTimelineLimit:
		return nil, &record.FieldError{Field: "limit", Rule: fmt.Sprintf("must be at most %d (got %d)", rules.MaxTimelineLimit, limit)}
	}
	since, until := req.GetSince(), req.GetUntil()
	in := func(t int64) bool {
		return t != 0 && (since == 0 || t >= since) && (until == 0 || t <= until)
	}
	resp := &aimemoryv1.LinkTimelineResponse{}
	err := s.db.View(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketMemories).Get([]byte(source)) == nil {
			return fmt.Errorf("source_id: %w: %s", storage.ErrNotFound, source)
		}
		var events []*aimemoryv1.Link
		c := tx.Bucket(bucketLinksOut).Cursor()
		prefix := idPrefix(source)
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			l, err := decodeLink(v)
			if err != nil {
				return err
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
		resp.Total = uint32(len(events))
		nodes := map[string]*aimemoryv1.NodeSummary{}
		mems := tx.Bucket(bucketMemories)
		for _, l := range events[:min(limit, len(events))] {
			n := nodes[l.TargetId]
			if n == nil {
				var err error
				if n, err = nodeSummary(mems, l.TargetId); err != nil {
					return err
				}
				nodes[l.TargetId] = n
			}
			resp.Events = append(resp.Events, &aimemoryv1.TimelineEvent{Link: l, Target: n})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// putLink is PutLink inside a transaction, on a validated request: also
// the approval path's executor.
func (w *writeTx) putLink(req *aimemoryv1.PutLinkRequest, rel, by string, resp *aimemoryv1.PutLinkResponse) error {
	src, dst, err := w.endpoints(req.GetSourceId(), req.GetTargetId())
	if err != nil {
		return err
	}
	l, err := readLink(w.tx, req.GetSourceId(), req.GetTargetId(), rel)
	if err != nil {
		return err
	}
	switch {
	case l == nil:
		l = &aimemoryv1.Link{
			SourceId: req.GetSourceId(), TargetId: req.GetTargetId(), Relation: rel,
			CreatedAt: w.now, ValidFrom: w.now, ObservedBy: by,
		}
		resp.Outcome = aimemoryv1.PutLinkOutcome_PUT_LINK_OUTCOME_CREATED
	case l.ValidUntil == 0 && l.ValidFrom != 0:
		resp.Link, resp.Outcome = l, aimemoryv1.PutLinkOutcome_PUT_LINK_OUTCOME_UNCHANGED
		return nil
	case l.ValidUntil > w.now && l.ValidFrom != 0 && l.ValidFrom <= w.now:
		// Still valid with an end ahead: the same interval goes on.
		l.ValidUntil, l.InvalidatedBy, l.InvalidatedAt = 0, "", 0
		resp.Outcome = aimemoryv1.PutLinkOutcome_PUT_LINK_OUTCOME_REVIVED
	default:
		rules.CloseInterval(l)
		l.ValidFrom, l.ValidUntil, l.ObservedBy = w.now, 0, by
		l.InvalidatedBy, l.InvalidatedAt = "", 0
		resp.Outcome = aimemoryv1.PutLinkOutcome_PUT_LINK_OUTCOME_REVIVED
	}
	if err := w.authorize(storage.Write{Op: storage.OpLink, Old: src, New: src, Link: l, Target: dst}); err != nil {
		return err
	}
	if err := putLink(w.tx, l); err != nil {
		return err
	}
	resp.Link = l
	w.emit(eventLinkCreated, src)
	return nil
}

// invalidateLink is InvalidateLink inside a transaction, on a validated
// request: also the approval path's executor.
func (w *writeTx) invalidateLink(req *aimemoryv1.InvalidateLinkRequest, by string, resp *aimemoryv1.InvalidateLinkResponse) error {
	src, dst, err := w.endpoints(req.GetSourceId(), req.GetTargetId())
	if err != nil {
		return err
	}
	l, err := readLink(w.tx, req.GetSourceId(), req.GetTargetId(), req.GetRelation())
	if err != nil || l == nil {
		return err
	}
	resp.Found, resp.PreviousValidUntil = true, l.ValidUntil
	l.ValidUntil = w.now
	if req.ValidUntil != nil {
		l.ValidUntil = req.GetValidUntil()
	}
	l.InvalidatedBy, l.InvalidatedAt = by, w.now
	if err := w.authorize(storage.Write{Op: storage.OpLink, Old: src, New: src, Link: l, Target: dst}); err != nil {
		return err
	}
	if err := putLink(w.tx, l); err != nil {
		return err
	}
	resp.Link = l
	w.emit(eventLinkInvalidated, src)
	return nil
}

package boltstore

import (
	"bytes"
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// Link writes of the graph family: the steps are ops.PutLink and
// ops.InvalidateLink, shared with every backend, over opsTx. Deleting
// either memory removes the link (writeTx.remove).

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
	row := mems.Get([]byte(id))
	if row == nil {
		return nil, fmt.Errorf("link names missing memory %s", id)
	}
	return liveSummary(id, row)
}

// liveSummary is nodeSummary of memory id's live row (term list, record).
func liveSummary(id string, row []byte) (*aimemoryv1.NodeSummary, error) {
	_, raw, err := splitLive(row)
	if err != nil {
		return nil, fmt.Errorf("memory %s: %w", id, err)
	}
	return summarize(id, raw)
}

// archivedSummary is nodeSummary of memory id's archive row.
func archivedSummary(id string, row []byte) (*aimemoryv1.NodeSummary, error) {
	_, rec, err := splitArchived(row)
	if err != nil {
		return nil, fmt.Errorf("archive row %s: %w", id, err)
	}
	return summarize(id, rec)
}

// summarize is nodeSummary of memory id's record raw.
func summarize(id string, raw []byte) (*aimemoryv1.NodeSummary, error) {
	n := &aimemoryv1.NodeSummary{Id: id}
	found := 0
	for b := raw; len(b) > 0 && found < 2; { // both come before the content (fields in number order)
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
			b, found = b[k:], found+1
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

// PutLink creates the link, or revives an invalidated one (see
// PutLinkOutcome); a link valid with no end is left as it is. Both
// memories must exist (expired-but-uncollected ones do).
func (s *Store) PutLink(ctx context.Context, req *aimemoryv1.PutLinkRequest) (*aimemoryv1.PutLinkResponse, error) {
	rel, by, err := ops.ValidatePutLink(ctx, req)
	if err != nil {
		return nil, err
	}
	// A link valid with no end needs no write (nor the fsync of an empty
	// commit): answer from a read transaction.
	var current *aimemoryv1.Link
	unchanged := false
	if err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		if current, err = readLink(tx, req.GetSourceId(), req.GetTargetId(), rel); err != nil || current == nil {
			return err
		}
		src, err := nodeSummary(tx.Bucket(bucketMemories), current.SourceId)
		if err != nil {
			return err
		}
		dst, err := nodeSummary(tx.Bucket(bucketMemories), current.TargetId)
		if err != nil {
			return err
		}
		unchanged = ops.Unchanged(ctx, current, src.Namespace, dst.Namespace)
		return nil
	}); err != nil {
		return nil, err
	}
	if unchanged {
		return &aimemoryv1.PutLinkResponse{Link: current, Outcome: aimemoryv1.PutLinkOutcome_PUT_LINK_OUTCOME_UNCHANGED}, nil
	}
	var resp *aimemoryv1.PutLinkResponse
	err = s.writeGoverned(ctx, &aimemoryv1.PendingPayload{Action: &aimemoryv1.PendingPayload_Link{Link: req}}, func(w *writeTx) error {
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
	by, err := ops.ValidateInvalidateLink(ctx, req)
	if err != nil {
		return nil, err
	}
	var resp *aimemoryv1.InvalidateLinkResponse
	err = s.writeGoverned(ctx, &aimemoryv1.PendingPayload{Action: &aimemoryv1.PendingPayload_Unlink{Unlink: req}}, func(w *writeTx) error {
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
	q, err := ops.ValidateTimeline(req)
	if err != nil {
		return nil, err
	}
	source := q.Source
	resp := &aimemoryv1.LinkTimelineResponse{}
	readable := authz.Of(ctx).Reader()
	err = s.db.View(func(tx *bolt.Tx) error {
		mems := tx.Bucket(bucketMemories)
		// What the caller may not read is not there.
		outside := func(id string) (bool, error) {
			n, err := nodeSummary(mems, id)
			return err == nil && !readable(n.Namespace), err
		}
		if mems.Get([]byte(source)) == nil {
			return fmt.Errorf("source_id: %w: %s", storage.ErrNotFound, source)
		}
		if hidden, err := outside(source); err != nil {
			return err
		} else if hidden {
			return fmt.Errorf("source_id: %w: %s", storage.ErrNotFound, source)
		}
		var links []*aimemoryv1.Link
		c := tx.Bucket(bucketLinksOut).Cursor()
		prefix := idPrefix(source)
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			l, err := decodeLink(v)
			if err != nil {
				return err
			}
			if hidden, err := outside(l.TargetId); err != nil {
				return err
			} else if hidden {
				continue
			}
			links = append(links, l)
		}
		events := q.Events(links)
		resp.Total = uint32(len(events))
		nodes := map[string]*aimemoryv1.NodeSummary{}
		for _, l := range events[:min(q.Limit, len(events))] {
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
	return ops.PutLink(opsTx{w}, req, rel, by, resp)
}

// invalidateLink is InvalidateLink inside a transaction, on a validated
// request: also the approval path's executor.
func (w *writeTx) invalidateLink(req *aimemoryv1.InvalidateLinkRequest, by string, resp *aimemoryv1.InvalidateLinkResponse) error {
	return ops.InvalidateLink(opsTx{w}, req, by, resp)
}

// The link steps' view of the transaction (ops.LinkTx).
func (t opsTx) ReadLink(source, target, relation string) (*aimemoryv1.Link, error) {
	return readLink(t.w.tx, source, target, relation)
}
func (t opsTx) WriteLink(l *aimemoryv1.Link) error      { return putLink(t.w.tx, l) }
func (t opsTx) Emit(event string, m *aimemoryv1.Memory) { t.w.emit(event, m) }

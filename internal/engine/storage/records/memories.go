package records

import (
	"context"
	"fmt"
	"strings"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	"github.com/ai-memory/ai-memory/internal/engine/storage/seam"
	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// StoreMemory writes a new memory, or resolves a (title, namespace)
// collision by on_conflict: ERROR fails, VERSION picks "T (n)", MERGE (the
// default) updates the existing memory in place by rules.Merge's rule,
// keeping the version it replaces in the archive (superseded).
// Expired-but-uncollected memories count as existing. The step is the
// approval executor's (ops.Store); a new memory's potential contradictions
// are read from the index once it is committed.
func (s *Store) StoreMemory(ctx context.Context, req *aimemoryv1.StoreMemoryRequest) (*aimemoryv1.StoreMemoryResponse, error) {
	in, policy, err := rules.NewStore(req)
	if err != nil {
		return nil, err
	}
	payload := &aimemoryv1.PendingPayload{Action: &aimemoryv1.PendingPayload_Store{Store: req}}
	resp, err := governed(ctx, s, payload, func(t seam.Tx) (*aimemoryv1.StoreMemoryResponse, error) {
		resp := &aimemoryv1.StoreMemoryResponse{}
		return resp, executor{t}.StoreMemory(in, policy, resp)
	})
	if err != nil {
		return nil, err
	}
	if resp.Outcome == aimemoryv1.StoreOutcome_STORE_OUTCOME_CREATED {
		an, idx := s.b.Keywords()
		resp.PotentialContradictions = ops.Contradictions(an, idx, resp.Memory)
	}
	return resp, nil
}

// maxAmbiguousIDs is how many candidates an ambiguous-prefix error lists.
const maxAmbiguousIDs = 10

// GetMemories reads memories by exact id or, with allow_prefix, by unique
// id prefix among those the caller may read; with include_links, every
// live link touching them whose both ends the caller may read, once each.
// Expired-but-uncollected memories are returned; nothing is touched. A
// prefix matching several memories fails the request with
// storage.ErrAmbiguous. One snapshot.
func (s *Store) GetMemories(ctx context.Context, req *aimemoryv1.GetMemoriesRequest) (*aimemoryv1.GetMemoriesResponse, error) {
	if err := rules.ValidateIDs("ids", req.GetIds()); err != nil {
		return nil, err
	}
	readable := authz.Of(ctx).Reader()
	return read(ctx, s, func(t seam.Tx) (*aimemoryv1.GetMemoriesResponse, error) {
		resp := &aimemoryv1.GetMemoriesResponse{}
		for _, id := range req.GetIds() {
			m, err := t.Get(id) // nil when not the caller's to read: another's inbox is not there
			if err == nil && m == nil && req.GetAllowPrefix() {
				m, err = byPrefix(t, readable, id)
			}
			if err != nil {
				return nil, err
			}
			if m == nil {
				resp.NotFound = append(resp.NotFound, id)
				continue
			}
			resp.Memories = append(resp.Memories, m)
		}
		if !req.GetIncludeLinks() {
			return resp, nil
		}
		out, in, err := t.Links(ops.IDs(resp.Memories), aimemoryv1.Direction_DIRECTION_BOTH, "", false)
		if err != nil {
			return nil, err
		}
		seen := map[string]bool{}
		for _, m := range resp.Memories {
			resp.Links = ops.CollectLinks(out, in, m.Id, nil, seen, resp.Links)
		}
		// A live link's ends are live; one the caller may not read has no namespace (t.Get).
		resp.Links, err = ops.ReadableLinks(resp.Links, ops.ReadableIDs(func(ns string) bool { return ns != "" && readable(ns) },
			func(id string) (string, error) {
				m, err := t.Get(id)
				return m.GetNamespace(), err
			}))
		return resp, err
	})
}

// byPrefix is the live memory whose id alone starts with prefix among
// those the caller may read; nil if none. Ids sort bytewise, so the
// candidates are one run from prefix on.
func byPrefix(t seam.Tx, readable func(string) bool, prefix string) (*aimemoryv1.Memory, error) {
	var ids []string
	count := 0
	err := t.EachID(false, false, prefix, func(id, ns string) bool {
		if !strings.HasPrefix(id, prefix) {
			return false
		}
		if readable(ns) {
			count++
			if len(ids) < maxAmbiguousIDs {
				ids = append(ids, id)
			}
		}
		return true
	})
	switch {
	case err != nil || count == 0:
		return nil, err
	case count == 1:
		return t.Get(ids[0])
	}
	return nil, &storage.AmbiguousError{Prefix: prefix, IDs: ids, Count: count}
}

// ShortIDs gives each id its shortest prefix, at least min_length long,
// that no other live or archived memory's id the caller may read starts
// with (a prefix resolves among those only, and another tenant's ids are
// not to be probed through the lengths). Ids sort bytewise, so only each
// id's nearest readable neighbours, live and archived, either way, need
// reading: the prefix is one longer than the longest it shares with them.
func (s *Store) ShortIDs(ctx context.Context, req *aimemoryv1.ShortIdsRequest) (*aimemoryv1.ShortIdsResponse, error) {
	if err := rules.ValidateIDs("ids", req.GetIds()); err != nil {
		return nil, err
	}
	if n := req.GetMinLength(); n > record.MaxIDBytes {
		return nil, &record.FieldError{Field: "min_length", Rule: fmt.Sprintf("must be at most %d (got %d)", record.MaxIDBytes, n)}
	}
	readable := authz.Of(ctx).Reader()
	return read(ctx, s, func(t seam.Tx) (*aimemoryv1.ShortIdsResponse, error) {
		resp := &aimemoryv1.ShortIdsResponse{Prefixes: make([]string, len(req.GetIds()))}
		for i, id := range req.GetIds() {
			shared := 0
			for _, archived := range []bool{false, true} {
				for _, back := range []bool{false, true} {
					err := t.EachID(archived, back, id, func(other, ns string) bool {
						if !readable(ns) {
							return true
						}
						shared = max(shared, commonPrefix(other, id))
						return false
					})
					if err != nil {
						return nil, err
					}
				}
			}
			resp.Prefixes[i] = id[:min(len(id), max(int(req.GetMinLength()), shared+1))]
		}
		return resp, nil
	})
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// UpdateMemory patches the fields a request sets (ops.Update). A new title
// or namespace must be free (storage.ErrConflict). A tier change
// re-derives the expiry from the new tier's TTL (none for long); an
// explicit expires_at or clear_expires_at wins over that. metadata.agent_id
// cannot change once set. updated_at is bumped and updated_by stamped with
// the caller on every call. The version it replaces is kept in the archive
// (superseded); an entity's aliases move with it.
func (s *Store) UpdateMemory(ctx context.Context, req *aimemoryv1.UpdateMemoryRequest) (*aimemoryv1.UpdateMemoryResponse, error) {
	if err := rules.ValidatePatch(req); err != nil {
		return nil, err
	}
	payload := &aimemoryv1.PendingPayload{Action: &aimemoryv1.PendingPayload_Update{Update: req}}
	return governed(ctx, s, payload, func(t seam.Tx) (*aimemoryv1.UpdateMemoryResponse, error) {
		resp := &aimemoryv1.UpdateMemoryResponse{}
		return resp, ops.Update(t, req, resp)
	})
}

// DeleteMemories removes memories by exact id, with their index entries,
// in one transaction: with archive through the archive (reason delete,
// links kept there), else for good with every link touching them, live or
// archived. Every memory is authorized before any is removed (ops.Delete).
func (s *Store) DeleteMemories(ctx context.Context, req *aimemoryv1.DeleteMemoriesRequest) (*aimemoryv1.DeleteMemoriesResponse, error) {
	if err := rules.ValidateIDs("ids", req.GetIds()); err != nil {
		return nil, err
	}
	ids := rules.Dedupe(append([]string(nil), req.GetIds()...))
	payload := &aimemoryv1.PendingPayload{Action: &aimemoryv1.PendingPayload_Delete{Delete: req}}
	return governed(ctx, s, payload, func(t seam.Tx) (*aimemoryv1.DeleteMemoriesResponse, error) {
		resp := &aimemoryv1.DeleteMemoriesResponse{}
		return resp, ops.Delete(t, ids, req.GetArchive(), resp)
	})
}

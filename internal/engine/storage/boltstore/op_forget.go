package boltstore

import (
	"bytes"
	"context"

	bolt "go.etcd.io/bbolt"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/index"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// Forget archives (reason forget) every memory matching all of the
// request's criteria: exact namespace, tier, and a pattern whose every
// word the memory's title, content or tags hold (search's analysis, so
// "draft notes" matches only memories with both words). Expired and long
// memories match like any. Without a namespace, guarded namespaces are
// not searched; named, the engine's service refuses it (authz) before
// anything is read. Only memories the caller may read match. Each memory is asked of the
// policy as OpDelete; one refusal fails the whole request and nothing is
// archived. With dry_run it writes nothing and reports the same matches.
func (s *Store) Forget(ctx context.Context, req *aimemoryv1.ForgetRequest) (*aimemoryv1.ForgetResponse, error) {
	crit, err := rules.NewForget(req, s.an.Query, authz.Of(ctx).Reads)
	if err != nil {
		return nil, err
	}
	var resp *aimemoryv1.ForgetResponse
	if req.GetDryRun() {
		err = s.db.View(func(tx *bolt.Tx) error {
			mems, err := s.forgetMatches(tx, crit)
			resp = forgetAnswer(mems)
			return err
		})
		return resp, err
	}
	// The payload is filled in by the run that matched, so a queued forget
	// records the ids the requester would have archived.
	payload := &aimemoryv1.PendingPayload{}
	err = s.writeGovernedFirst(ctx, payload, func(w *writeTx) error { // forgetMatches reads the index
		mems, err := s.forgetMatches(w.tx, crit)
		if err != nil {
			return err
		}
		payload.Action = &aimemoryv1.PendingPayload_Forget{Forget: &aimemoryv1.PendingForget{Request: req, Ids: idsOf(mems)}}
		if err := w.forget(mems); err != nil {
			return err
		}
		resp = forgetAnswer(mems)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// forget archives mems, each authorised as a delete (ops.Forget): the
// tx-level step of Forget, and the approval path's executor.
func (w *writeTx) forget(mems []*aimemoryv1.Memory) error { return ops.Forget(opsTx{w}, mems) }

func forgetAnswer(mems []*aimemoryv1.Memory) *aimemoryv1.ForgetResponse {
	return ops.ForgetAnswer(mems)
}

// forgetMatches reads the memories crit matches, oldest first. A pattern
// takes its candidates from the in-memory index (every word, expired
// memories included), which is current for a write that leads its batch
// (writeFirst) and at worst a commit behind a dry run's read; each
// candidate is checked against its stored term list and record in tx.
// Without a pattern it walks the namespace's titles, or every record.
func (s *Store) forgetMatches(tx *bolt.Tx, crit *rules.Forget) ([]*aimemoryv1.Memory, error) {
	mems := tx.Bucket(bucketMemories)
	var out []*aimemoryv1.Memory
	consider := func(id []byte) error {
		raw := mems.Get(id)
		if raw == nil {
			return nil
		}
		list, rec, err := splitLive(raw)
		if err != nil {
			return err
		}
		if len(crit.Terms) > 0 {
			ok, err := holdsAll(list, crit.Terms)
			if err != nil || !ok {
				return err
			}
		}
		m, err := decodeMemory(rec)
		if err != nil {
			return err
		}
		if crit.Matches(m) {
			out = append(out, m)
		}
		return nil
	}
	switch {
	case len(crit.Terms) > 0:
		f, err := index.CompileFilter(&aimemoryv1.Filter{Namespace: crit.Namespace, Tier: crit.Tier})
		if err != nil {
			return nil, err
		}
		for _, h := range s.idx.Search(index.Query{Terms: crit.Terms, All: true, Filter: f, Limit: s.idx.Count() + 1}) {
			if err := consider([]byte(h.ID)); err != nil {
				return nil, err
			}
		}
	case crit.Namespace != "":
		prefix := titleKey(crit.Namespace, "")
		c := tx.Bucket(bucketTitles).Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			if err := consider(v); err != nil {
				return nil, err
			}
		}
	default:
		if err := mems.ForEach(func(k, _ []byte) error { return consider(k) }); err != nil {
			return nil, err
		}
	}
	ops.SortForget(out)
	return out, nil
}

// holdsAll reports whether a stored term list holds every term of want.
func holdsAll(list []byte, want []string) (bool, error) {
	found := 0
	seen := make([]bool, len(want))
	err := walkTerms(list, func(term []byte, _ uint32) {
		for i, w := range want {
			if !seen[i] && string(term) == w {
				seen[i] = true
				found++
			}
		}
	})
	return found == len(want), err
}

// idsOf lists the memories' ids.
func idsOf(mems []*aimemoryv1.Memory) []string { return ops.IDs(mems) }

// ForgetMatches is what req matches for the transaction's caller (seam.Tx).
func (t opsTx) ForgetMatches(req *aimemoryv1.ForgetRequest) ([]*aimemoryv1.Memory, error) {
	crit, err := rules.NewForget(req, t.w.s.an.Query, authz.Of(t.w.ctx).Reads)
	if err != nil {
		return nil, err
	}
	return t.w.s.forgetMatches(t.w.tx, crit)
}

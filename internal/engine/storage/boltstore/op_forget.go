package boltstore

import (
	"bytes"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/index"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// forgetMatches reads the memories crit matches, oldest first. A pattern
// takes its candidates from the in-memory index (every word, expired
// memories included), which is at the last commit, plus every memory the
// writes before this one in its batch changed (batchChanged), so a write
// anywhere in a batch sees them; a dry run's read is at worst a commit
// behind. Each candidate is checked against its stored term list and
// record in tx. Without a pattern it walks the namespace's titles, or
// every record.
func (w *writeTx) forgetMatches(crit *rules.Forget) ([]*aimemoryv1.Memory, error) {
	s, tx := w.s, w.tx
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
		seen := map[string]bool{}
		candidates := w.batchChanged()
		for _, h := range s.idx.Search(index.Query{Terms: crit.Terms, All: true, Filter: f, Limit: s.idx.Count() + 1}) {
			candidates = append(candidates, h.ID)
		}
		for _, id := range candidates {
			if seen[id] {
				continue
			}
			seen[id] = true
			if err := consider([]byte(id)); err != nil {
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

// ForgetMatches is what req matches for the transaction's caller (seam.Tx).
func (t opsTx) ForgetMatches(req *aimemoryv1.ForgetRequest) ([]*aimemoryv1.Memory, error) {
	crit, err := rules.NewForget(req, t.w.s.an.Query, authz.Of(t.w.ctx).Reads)
	if err != nil {
		return nil, err
	}
	return t.w.forgetMatches(crit)
}

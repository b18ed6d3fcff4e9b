package index

import (
	"strings"

	"github.com/ai-memory/ai-memory/sdk/record"
)

// Tally is what Stats reports from the doc table alone.
type Tally struct {
	Total        uint64
	ByTier       []uint64 // by record.TierRank
	ByNamespace  map[string]uint64
	ExpiringSoon uint64 // expiring in (now, now+soon]
	Terms        uint64 // distinct terms with postings
	PostingBytes uint64 // packed postings
}

// Tally counts the indexed memories of the namespaces visible allows
// (what the caller may read), expired-but-uncollected included.
func (x *Index) Tally(now, soon int64, visible func(ns string) bool) Tally {
	t := Tally{ByTier: make([]uint64, len(record.Tiers)), ByNamespace: map[string]uint64{}}
	x.mu.RLock()
	defer x.mu.RUnlock()
	for i := range x.docs {
		d := &x.docs[i]
		if d.id == "" || !visible(x.ns(d)) {
			continue
		}
		t.Total++
		if d.tier >= 0 {
			t.ByTier[d.tier]++
		}
		t.ByNamespace[x.ns(d)]++
		if d.expiresAt > now && d.expiresAt <= now+soon {
			t.ExpiringSoon++
		}
	}
	for i := range x.lists {
		if l := &x.lists[i]; l.n > 0 {
			t.Terms++
			t.PostingBytes += uint64(len(l.data))
		}
	}
	return t
}

// Namespaces counts live memories per exact namespace at or under prefix
// (the namespace itself, or one starting with prefix + "/"; "" = all)
// that visible allows, and their total.
func (x *Index) Namespaces(prefix string, now int64, visible func(ns string) bool) (map[string]uint64, uint64) {
	under := prefix + "/"
	counts := map[string]uint64{}
	var total uint64
	x.mu.RLock()
	defer x.mu.RUnlock()
	for i := range x.docs {
		d := &x.docs[i]
		if d.id == "" || !d.live(now) {
			continue
		}
		ns := x.ns(d)
		if (prefix != "" && ns != prefix && !strings.HasPrefix(ns, under)) || !visible(ns) {
			continue
		}
		counts[ns]++
		total++
	}
	return counts, total
}

// IDs lists every indexed memory's id, in no order.
func (x *Index) IDs() []string {
	x.mu.RLock()
	defer x.mu.RUnlock()
	ids := make([]string, 0, x.count)
	for i := range x.docs {
		if id := x.docs[i].id; id != "" {
			ids = append(ids, strings.Clone(id))
		}
	}
	return ids
}

// Sizes reports the slots in use (deleted ones included until compaction)
// and the distinct terms.
func (x *Index) Sizes() (slots, terms int) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.docs), len(x.terms)
}

package index

import (
	"fmt"
	"slices"

	"github.com/ai-memory/ai-memory/internal/engine/keyword"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Verify checks the index against records (every stored memory by id),
// analysed afresh: the doc table, postings, block tables, lengths and
// cached ranking values. It reports the first disagreement; tests and
// consistency checks use it, so "the index can never disagree with the
// records" is checked.
func (x *Index) Verify(records map[string]*aimemoryv1.Memory) error {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.count != len(records) || x.slots.n != len(records) {
		return fmt.Errorf("index holds %d memories (%d ids), records %d", x.count, x.slots.n, len(records))
	}
	wantPostings := map[string]map[string]uint32{}
	var wantLen uint64
	for id, m := range records {
		terms, n := keyword.Document(m.Title, m.Content, m.Tags)
		for _, tf := range terms {
			if wantPostings[tf.Term] == nil {
				wantPostings[tf.Term] = map[string]uint32{}
			}
			wantPostings[tf.Term][id] = tf.Freq
		}
		wantLen += uint64(n)
		want := docFromMemory(m)
		slot, ok := x.slotOf(id)
		if !ok {
			return fmt.Errorf("index lacks %s", id)
		}
		d := &x.docs[slot]
		got := newDoc{
			id: d.id, namespace: x.ns(d), agentID: x.strs.strs[d.agent], tags: x.tagsOf(d),
			expiresAt: d.expiresAt, updatedAt: d.updatedAt, createdAt: d.createdAt,
			priority: d.priority, tier: d.tier, scope: d.scope, static: x.static[slot],
		}
		if got.id != want.id || got.namespace != want.namespace || got.agentID != want.agentID ||
			!slices.Equal(got.tags, want.tags) || got.expiresAt != want.expiresAt ||
			got.updatedAt != want.updatedAt || got.createdAt != want.createdAt ||
			got.priority != want.priority || got.tier != want.tier || got.scope != want.scope ||
			got.static != want.static {
			return fmt.Errorf("index doc %s = %+v, want %+v", id, got, *want)
		}
		if x.lens[slot] != n {
			return fmt.Errorf("length of %s: %d, want %d", id, x.lens[slot], n)
		}
	}
	if x.totalLen != wantLen {
		return fmt.Errorf("total length %d, want %d", x.totalLen, wantLen)
	}
	for tid, term := range x.terms {
		if got, ok := x.termIDs.find(term, x.termOf); !ok || got != uint32(tid) {
			return fmt.Errorf("term %q not found by its id", term)
		}
		l := &x.lists[tid]
		if err := x.verifyList(term, l, wantPostings[term]); err != nil {
			return err
		}
		delete(wantPostings, term)
	}
	for term := range wantPostings {
		return fmt.Errorf("index lacks term %q", term)
	}
	return nil
}

// verifyList checks one postings list and its block table.
func (x *Index) verifyList(term string, l *plist, want map[string]uint32) error {
	var one [1]block
	bs := x.blocksOf(l, &one)
	if l.n == 0 {
		if len(l.data) != 0 || l.big != 0 {
			return fmt.Errorf("empty list of %q holds data", term)
		}
		bs = nil
	}
	var total uint32
	prev := int64(-1)
	for i, b := range bs {
		if i > 0 && b.off <= bs[i-1].off {
			return fmt.Errorf("blocks of %q out of order", term)
		}
		var n uint32
		var bad error
		decodeBlock(l.data[b.off:blockEnd(l, bs, i)], func(slot, tf uint32) bool {
			switch {
			case int64(slot) <= prev:
				bad = fmt.Errorf("postings of %q not sorted", term)
			case n == 0 && l.big != 0 && slot != b.first:
				bad = fmt.Errorf("block %d of %q starts at %d, table says %d", i, term, slot, b.first)
			case x.docs[slot].id == "" || want[x.docs[slot].id] != tf:
				bad = fmt.Errorf("posting %q → slot %d (%q) tf %d is wrong", term, slot, x.docs[slot].id, tf)
			}
			prev = int64(slot)
			n++
			return bad == nil
		})
		if bad != nil {
			return bad
		}
		if n != b.n {
			return fmt.Errorf("block %d of %q holds %d postings, table says %d", i, term, n, b.n)
		}
		total += n
	}
	if total != l.n || int(l.n) != len(want) {
		return fmt.Errorf("term %q: %d postings (count %d), want %d", term, total, l.n, len(want))
	}
	return nil
}

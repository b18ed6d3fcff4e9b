package index

import (
	"fmt"
	"reflect"

	"github.com/ai-memory/ai-memory/internal/engine/keyword"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// Verify checks the index against records (every stored memory by id),
// analysed afresh: the doc table, postings, lengths and cached ranking
// values. It reports the first disagreement; tests and consistency checks
// use it, so "the index can never disagree with the records" is checked.
func (x *Index) Verify(records map[string]*aimemoryv1.Memory) error {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if len(x.slotOf) != len(records) {
		return fmt.Errorf("index holds %d memories, records %d", len(x.slotOf), len(records))
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
		want.length = n
		slot, ok := x.slotOf[id]
		if !ok {
			return fmt.Errorf("index lacks %s", id)
		}
		if got := x.docs[slot]; !reflect.DeepEqual(&got, want) {
			return fmt.Errorf("index doc %s = %+v, want %+v", id, got, *want)
		}
		if x.lens[slot] != n || x.static[slot] != float32(staticFactor(want)) {
			return fmt.Errorf("hot values of %s: len %d static %v", id, x.lens[slot], x.static[slot])
		}
	}
	if x.totalLen != wantLen {
		return fmt.Errorf("total length %d, want %d", x.totalLen, wantLen)
	}
	for term, id := range x.termIDs {
		ps := x.postings[id]
		for i, p := range ps {
			if i > 0 && ps[i-1].slot >= p.slot {
				return fmt.Errorf("postings of %q not sorted", term)
			}
			d := x.docs[p.slot]
			if d.id == "" || wantPostings[term][d.id] != p.tf {
				return fmt.Errorf("posting %q → slot %d (%q) tf %d is wrong", term, p.slot, d.id, p.tf)
			}
		}
		if len(ps) != len(wantPostings[term]) {
			return fmt.Errorf("term %q: %d postings, want %d", term, len(ps), len(wantPostings[term]))
		}
		delete(wantPostings, term)
	}
	for term := range wantPostings {
		return fmt.Errorf("index lacks term %q", term)
	}
	return nil
}

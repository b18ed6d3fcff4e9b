package index

import (
	"slices"
	"sync"

	"github.com/ai-memory/ai-memory/internal/engine/keyword"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// posting says that the document in slot holds a term tf times.
type posting struct {
	slot uint32
	tf   uint32
}

// Index is the in-memory view of every stored memory: the doc table that
// filters and ranks, and the inverted keyword index (term → postings sorted
// by slot). A backend rebuilds it from its stored term lists at open (Load)
// and changes it only by Apply, after the transaction that wrote the same
// change has committed, in commit order. Its methods are safe for
// concurrent use.
type Index struct {
	mu   sync.RWMutex
	docs []docInfo // by slot, contiguous for scans; id "" once deleted (slots are reused only by compaction)
	// Per-slot values the query loops read for every candidate, kept apart
	// from docs so those loops touch a few bytes per memory, not a docInfo.
	lens     []uint32  // BM25 document length
	static   []float32 // staticFactor, for pruning candidates that cannot rank
	slotOf   map[string]uint32
	termIDs  map[string]uint32
	postings [][]posting // by term id
	totalLen uint64
	strs     map[string]string // interned namespaces, agent ids and tags
	scratch  sync.Pool         // *scratch for search
}

// New returns an empty index.
func New() *Index {
	return &Index{
		slotOf:  make(map[string]uint32),
		termIDs: make(map[string]uint32),
		strs:    make(map[string]string),
	}
}

// Count is the number of memories indexed.
func (x *Index) Count() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.slotOf)
}

// Change is one memory's effect on the index, recorded by a write
// transaction and applied after it commits.
type Change struct {
	ID       string
	Memory   *aimemoryv1.Memory // state after the write; nil = deleted
	Reindex  bool               // the term list changed from OldTerms to NewTerms
	OldTerms []keyword.TermFreq
	NewTerms []keyword.TermFreq
}

// change is a Change with its doc decoded (outside the lock).
type change struct {
	id       string
	doc      *docInfo // nil = deleted
	reindex  bool
	oldTerms []keyword.TermFreq
	newTerms []keyword.TermFreq
}

// Apply applies the changes of one committed transaction.
func (x *Index) Apply(changes []Change) {
	cs := make([]change, len(changes))
	for i, c := range changes {
		cs[i] = change{id: c.ID, reindex: c.Reindex, oldTerms: c.OldTerms, newTerms: c.NewTerms}
		if c.Memory != nil {
			cs[i].doc = docFromMemory(c.Memory)
		}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, c := range cs {
		x.applyOne(c)
	}
	if len(x.docs) > 2*len(x.slotOf)+1024 {
		x.compact()
	}
}

func (x *Index) applyOne(c change) {
	slot, exists := x.slotOf[c.id]
	switch {
	case c.doc == nil:
		if !exists {
			return
		}
		x.removePostings(slot, c.oldTerms)
		x.totalLen -= uint64(x.docs[slot].length)
		x.set(slot, &docInfo{})
		delete(x.slotOf, c.id)
	case exists:
		old := x.docs[slot]
		c.doc.length = old.length
		if c.reindex {
			x.removePostings(slot, c.oldTerms)
			c.doc.length = x.addPostings(slot, c.newTerms)
			x.totalLen += uint64(c.doc.length) - uint64(old.length)
		}
		x.set(slot, c.doc)
	default:
		slot = uint32(len(x.docs))
		x.slotOf[c.id] = slot
		c.doc.length = x.addPostings(slot, c.newTerms)
		x.totalLen += uint64(c.doc.length)
		x.set(slot, c.doc)
	}
}

// set stores d (interned) in slot, which is in use or the next free one.
func (x *Index) set(slot uint32, d *docInfo) {
	if int(slot) == len(x.docs) {
		x.docs = append(x.docs, docInfo{})
		x.lens = append(x.lens, 0)
		x.static = append(x.static, 0)
	}
	x.docs[slot] = *x.intern(d)
	x.lens[slot] = d.length
	x.static[slot] = float32(staticFactor(d))
}

// addPostings inserts slot into each term's postings; returns the length.
func (x *Index) addPostings(slot uint32, terms []keyword.TermFreq) uint32 {
	var n uint32
	for _, t := range terms {
		n += t.Freq
		id, ok := x.termIDs[t.Term]
		if !ok {
			id = uint32(len(x.postings))
			x.termIDs[t.Term] = id
			x.postings = append(x.postings, nil)
		}
		x.postings[id] = insertPosting(x.postings[id], posting{slot: slot, tf: t.Freq})
	}
	return n
}

func (x *Index) removePostings(slot uint32, terms []keyword.TermFreq) {
	for _, t := range terms {
		id, ok := x.termIDs[t.Term]
		if !ok {
			continue
		}
		ps := x.postings[id]
		if i, found := slices.BinarySearchFunc(ps, slot, cmpSlot); found {
			x.postings[id] = slices.Delete(ps, i, i+1)
		}
	}
}

func cmpSlot(p posting, slot uint32) int {
	switch {
	case p.slot < slot:
		return -1
	case p.slot > slot:
		return 1
	}
	return 0
}

// insertPosting keeps ps sorted by slot; new documents take the highest
// slot, so the common case is an append.
func insertPosting(ps []posting, p posting) []posting {
	if n := len(ps); n == 0 || ps[n-1].slot < p.slot {
		return append(ps, p)
	}
	i, found := slices.BinarySearchFunc(ps, p.slot, cmpSlot)
	if found {
		ps[i] = p
		return ps
	}
	return slices.Insert(ps, i, p)
}

// intern shares the strings many documents repeat.
func (x *Index) intern(d *docInfo) *docInfo {
	d.namespace = x.internStr(d.namespace)
	d.agentID = x.internStr(d.agentID)
	for i, t := range d.tags {
		d.tags[i] = x.internStr(t)
	}
	return d
}

func (x *Index) internStr(s string) string {
	if v, ok := x.strs[s]; ok {
		return v
	}
	x.strs[s] = s
	return s
}

// compact renumbers slots densely once deletes have left most of them
// empty. The renumbering keeps order, so postings stay sorted.
func (x *Index) compact() {
	remap := make([]uint32, len(x.docs))
	old := x.docs
	x.docs, x.lens, x.static = make([]docInfo, 0, len(x.slotOf)), nil, nil
	for slot := range old {
		if d := &old[slot]; d.id != "" {
			remap[slot] = uint32(len(x.docs))
			x.slotOf[d.id] = uint32(len(x.docs))
			x.set(uint32(len(x.docs)), d)
		}
	}
	for id, ps := range x.postings {
		out := ps[:0]
		for _, p := range ps {
			if old[p.slot].id != "" {
				out = append(out, posting{slot: remap[p.slot], tf: p.tf})
			}
		}
		x.postings[id] = slices.Clip(out)
	}
}

// Load adds a stored memory while the index is being rebuilt at open;
// walk visits its stored term list. Memories must come in one pass (each
// takes the next slot), so postings stay sorted; call Loaded after the last.
func (x *Index) Load(m *aimemoryv1.Memory, walk func(yield func(term []byte, tf uint32)) error) error {
	d := docFromMemory(m)
	slot := uint32(len(x.docs))
	x.slotOf[d.id] = slot
	err := walk(func(term []byte, tf uint32) {
		id, ok := x.termIDs[string(term)]
		if !ok {
			id = uint32(len(x.postings))
			x.termIDs[string(term)] = id
			x.postings = append(x.postings, nil)
		}
		x.postings[id] = append(x.postings[id], posting{slot: slot, tf: tf})
		d.length += tf
	})
	if err != nil {
		return err
	}
	x.totalLen += uint64(d.length)
	x.set(slot, d)
	return nil
}

// Loaded ends a rebuild: appending left up to half of each postings
// list's capacity unused.
func (x *Index) Loaded() {
	for i, ps := range x.postings {
		x.postings[i] = slices.Clone(ps)
	}
}

package boltstore

import (
	"context"
	"encoding/binary"
	"slices"
	"sync"

	bolt "go.etcd.io/bbolt"

	"github.com/ai-memory/ai-memory/internal/engine/keyword"
)

// posting says that the document in slot holds a term tf times.
type posting struct {
	slot uint32
	tf   uint32
}

// index is the in-memory view of every stored memory: the doc table that
// filters and ranks, and the inverted keyword index (term → postings sorted
// by slot). It is rebuilt from bbolt at open and changed only by apply,
// after the transaction that wrote the same change has committed.
type index struct {
	mu   sync.RWMutex
	docs []docInfo // by slot, contiguous for scans; id "" once deleted (slots are reused only by compaction)
	// Per-slot values the query loops read for every candidate, kept apart
	// from docs so those loops touch a few bytes per memory, not a docInfo.
	lens     []uint32  // BM25 document length
	static   []float32 // staticScore, for pruning candidates that cannot rank
	slotOf   map[string]uint32
	termIDs  map[string]uint32
	postings [][]posting // by term id
	totalLen uint64
	strs     map[string]string // interned namespaces, agent ids and tags
	scratch  sync.Pool         // *scratch for search
}

func newIndex() *index {
	return &index{
		slotOf:  make(map[string]uint32),
		termIDs: make(map[string]uint32),
		strs:    make(map[string]string),
	}
}

func (x *index) count() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.slotOf)
}

// change is one memory's effect on the index, recorded by a write
// transaction and applied after it commits.
type change struct {
	id       string
	doc      *docInfo // state after the write; nil = deleted
	reindex  bool     // the term list changed from oldTerms to newTerms
	oldTerms []keyword.TermFreq
	newTerms []keyword.TermFreq
}

func (x *index) apply(changes []change) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, c := range changes {
		x.applyOne(c)
	}
	if len(x.docs) > 2*len(x.slotOf)+1024 {
		x.compact()
	}
}

func (x *index) applyOne(c change) {
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
func (x *index) set(slot uint32, d *docInfo) {
	if int(slot) == len(x.docs) {
		x.docs = append(x.docs, docInfo{})
		x.lens = append(x.lens, 0)
		x.static = append(x.static, 0)
	}
	x.docs[slot] = *x.intern(d)
	x.lens[slot] = d.length
	x.static[slot] = float32(staticScore(d))
}

// addPostings inserts slot into each term's postings; returns the length.
func (x *index) addPostings(slot uint32, terms []keyword.TermFreq) uint32 {
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

func (x *index) removePostings(slot uint32, terms []keyword.TermFreq) {
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
func (x *index) intern(d *docInfo) *docInfo {
	d.namespace = x.internStr(d.namespace)
	d.agentID = x.internStr(d.agentID)
	for i, t := range d.tags {
		d.tags[i] = x.internStr(t)
	}
	return d
}

func (x *index) internStr(s string) string {
	if v, ok := x.strs[s]; ok {
		return v
	}
	x.strs[s] = s
	return s
}

// compact renumbers slots densely once deletes have left most of them
// empty. The renumbering keeps order, so postings stay sorted.
func (x *index) compact() {
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

// loadIndex builds the index from the records and their stored term lists.
// Both buckets are keyed by id, so walking them in step assigns slots in id
// order and every postings list comes out sorted.
func loadIndex(ctx context.Context, db *bolt.DB) (*index, error) {
	x := newIndex()
	err := db.View(func(tx *bolt.Tx) error {
		mems := tx.Bucket(bucketMemories)
		terms := tx.Bucket(bucketTerms)
		return mems.ForEach(func(k, v []byte) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			m, err := decodeMemory(v)
			if err != nil {
				return err
			}
			d := docFromMemory(m)
			slot := uint32(len(x.docs))
			x.slotOf[d.id] = slot
			err = walkTerms(terms.Get(k), func(term []byte, tf uint32) {
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
		})
	})
	if err != nil {
		return nil, err
	}
	// Appending left up to half of each list's capacity unused.
	for i, ps := range x.postings {
		x.postings[i] = slices.Clone(ps)
	}
	return x, nil
}

// walkTerms visits a stored term list without copying its terms.
func walkTerms(b []byte, fn func(term []byte, tf uint32)) error {
	if b == nil {
		return nil
	}
	n, k := binary.Uvarint(b)
	if k <= 0 {
		return errCorrupt
	}
	b = b[k:]
	for range n {
		l, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < l {
			return errCorrupt
		}
		term := b[k : k+int(l)]
		b = b[k+int(l):]
		f, k := binary.Uvarint(b)
		if k <= 0 {
			return errCorrupt
		}
		b = b[k:]
		fn(term, uint32(f))
	}
	return nil
}

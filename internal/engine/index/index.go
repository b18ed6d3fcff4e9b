package index

import (
	"math"
	"slices"
	"sync"

	"github.com/ai-memory/ai-memory/internal/engine/keyword"
	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Index is the in-memory view of every stored memory: the doc table that
// filters and ranks, and the inverted keyword index (term → packed postings
// in slot order, postings.go). A backend rebuilds it at open from its
// stored term lists (Load) or restores it from a snapshot (Decode) and the
// log of changes since (Replay), and changes it only by Apply, after the
// transaction that wrote the same change has committed, in commit order.
// Its methods are safe for concurrent use.
type Index struct {
	mu   sync.RWMutex
	docs []docInfo // by slot, contiguous for scans; id "" once deleted (slots are reused only by compaction)
	// Per-slot values the query loops read for every candidate, kept apart
	// from docs so those loops touch a few bytes per memory, not a docInfo.
	lens     []uint32  // BM25 document length
	static   []float64 // staticFactor, for pruning and scoring
	count    int       // memories indexed
	slots    table     // id → slot
	ids      arena     // the docs' ids
	terms    []string  // by term id, in termText
	termText arena
	termIDs  table // term → term id
	lists    []plist
	blocks   [][]block // block tables of long lists (plist.big)
	totalLen uint64
	strs     strTable // namespaces, agent ids and tags
	tagPool  []uint32 // each doc's tags (strs numbers), a run per doc
	tagWaste int      // entries of tagPool no doc uses
	loadLast []uint32 // while loading: each list's highest slot
	scratch  sync.Pool
}

// New returns an empty index.
func New() *Index {
	return &Index{slots: newTable(), termIDs: newTable(), strs: newStrTable()}
}

func (x *Index) idOf(slot uint32) string    { return x.docs[slot].id }
func (x *Index) termOf(id uint32) string    { return x.terms[id] }
func (x *Index) ns(d *docInfo) string       { return x.strs.strs[d.ns] }
func (x *Index) tagIDs(d *docInfo) []uint32 { return x.tagPool[d.tags : d.tags+uint32(d.ntags)] }

// tagsOf is d's tags as strings.
func (x *Index) tagsOf(d *docInfo) []string {
	var out []string
	for _, id := range x.tagIDs(d) {
		out = append(out, x.strs.strs[id])
	}
	return out
}

// setTags stores tags for d, in place of its old ones (old: d is in use).
func (x *Index) setTags(d *docInfo, tags []string, old bool) {
	var ids [record.MaxTags]uint32
	n := min(len(tags), len(ids), math.MaxUint8)
	for i, t := range tags[:n] {
		ids[i] = x.strs.intern(t)
	}
	if old && int(d.ntags) >= n {
		x.tagWaste += int(d.ntags) - n
		copy(x.tagPool[d.tags:], ids[:n])
		d.ntags = uint8(n)
		return
	}
	if old {
		x.tagWaste += int(d.ntags)
	}
	d.tags, d.ntags = uint32(len(x.tagPool)), uint8(n)
	x.tagPool = append(x.tagPool, ids[:n]...)
}

func (x *Index) slotOf(id string) (uint32, bool) { return x.slots.find(id, x.idOf) }

// termID returns the id of term, adding it when add is set.
func (x *Index) termID(term string, add bool) (uint32, bool) {
	if id, ok := x.termIDs.find(term, x.termOf); ok || !add {
		return id, ok
	}
	id := uint32(len(x.terms))
	x.terms = append(x.terms, x.termText.add(term))
	x.lists = append(x.lists, plist{})
	if x.loadLast != nil {
		x.loadLast = append(x.loadLast, 0)
	}
	x.termIDs.insert(term, id, x.termOf)
	return id, true
}

// list is term's postings; nil when no memory holds it.
func (x *Index) list(term string) *plist {
	id, ok := x.termIDs.find(term, x.termOf)
	if !ok || x.lists[id].n == 0 {
		return nil
	}
	return &x.lists[id]
}

// QueryWeight is the sum of terms' idf: about the BM25 score of a memory
// of average length holding each term once, the yardstick hybrid recall
// calibrates keyword scores by (vecset.Blend).
func (x *Index) QueryWeight(terms []string) float64 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	w := 0.0
	for _, t := range terms {
		df := 0
		if l := x.list(t); l != nil {
			df = int(l.n)
		}
		w += keyword.IDF(df, x.count)
	}
	return w
}

// Count is the number of memories indexed.
func (x *Index) Count() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.count
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
	doc      *newDoc // nil = deleted
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
	if len(x.docs) > 2*x.count+1024 || x.tagWaste > len(x.tagPool)/2+1024 {
		x.compact()
	}
}

func (x *Index) applyOne(c change) {
	slot, exists := x.slotOf(c.id)
	switch {
	case c.doc == nil:
		if !exists {
			return
		}
		x.removePostings(slot, c.oldTerms)
		x.totalLen -= uint64(x.lens[slot])
		x.slots.remove(c.id, x.idOf)
		x.tagWaste += int(x.docs[slot].ntags)
		x.docs[slot], x.lens[slot], x.static[slot] = docInfo{}, 0, 0
		x.count--
	case exists:
		length := x.lens[slot]
		if c.reindex {
			x.removePostings(slot, c.oldTerms)
			length = x.addPostings(slot, c.newTerms)
			x.totalLen += uint64(length) - uint64(x.lens[slot])
		}
		c.doc.id = x.docs[slot].id
		x.set(slot, c.doc, length)
	default:
		slot = uint32(len(x.docs))
		length := x.addPostings(slot, c.newTerms)
		x.totalLen += uint64(length)
		c.doc.id = x.ids.add(c.doc.id)
		x.set(slot, c.doc, length)
		x.slots.insert(c.id, slot, x.idOf)
		x.count++
	}
}

// set stores d (its id already in the arena) in slot, which is in use or
// the next free one.
func (x *Index) set(slot uint32, d *newDoc, length uint32) {
	if int(slot) == len(x.docs) {
		x.docs = append(x.docs, docInfo{})
		x.lens = append(x.lens, 0)
		x.static = append(x.static, 0)
	}
	doc := &x.docs[slot]
	old := doc.id != ""
	doc.id = d.id
	doc.expiresAt, doc.updatedAt, doc.createdAt = d.expiresAt, d.updatedAt, d.createdAt
	doc.ns, doc.agent = x.strs.intern(d.namespace), x.strs.intern(d.agentID)
	doc.priority, doc.tier, doc.scope = d.priority, d.tier, d.scope
	x.setTags(doc, d.tags, old)
	x.lens[slot] = length
	x.static[slot] = d.static
}

// addPostings adds slot to each term's postings; returns the length.
func (x *Index) addPostings(slot uint32, terms []keyword.TermFreq) uint32 {
	var n uint32
	for _, t := range terms {
		n += t.Freq
		id, _ := x.termID(t.Term, true)
		x.add(&x.lists[id], slot, t.Freq, lastUnknown)
	}
	return n
}

func (x *Index) removePostings(slot uint32, terms []keyword.TermFreq) {
	for _, t := range terms {
		if id, ok := x.termID(t.Term, false); ok {
			x.remove(&x.lists[id], slot)
		}
	}
}

// compact renumbers slots densely once deletes have left most of them
// empty, and rebuilds the tables from what is still in use. The
// renumbering keeps order, so postings stay sorted.
func (x *Index) compact() {
	y := New()
	remap := make([]uint32, len(x.docs))
	for slot := range x.docs {
		d := &x.docs[slot]
		if d.id == "" {
			continue
		}
		s := uint32(len(y.docs))
		remap[slot] = s
		y.set(s, &newDoc{
			id: y.ids.add(d.id), namespace: x.ns(d), agentID: x.strs.strs[d.agent], tags: x.tagsOf(d),
			expiresAt: d.expiresAt, updatedAt: d.updatedAt, createdAt: d.createdAt,
			priority: d.priority, tier: d.tier, scope: d.scope, static: x.static[slot],
		}, x.lens[slot])
		y.slots.insert(d.id, s, y.idOf)
		y.count++
	}
	y.totalLen = x.totalLen
	y.loadLast = []uint32{}
	for id := range x.lists {
		l := &x.lists[id]
		if l.n == 0 {
			continue
		}
		tid, _ := y.termID(x.terms[id], true)
		x.each(l, func(slot, tf uint32) bool {
			y.add(&y.lists[tid], remap[slot], tf, y.lastOf(tid))
			y.loadLast[tid] = remap[slot]
			return true
		})
	}
	y.loaded()
	x.takeTables(y)
}

// takeTables moves everything but the lock and the scratch pool from y.
func (x *Index) takeTables(y *Index) {
	x.docs, x.lens, x.static, x.count = y.docs, y.lens, y.static, y.count
	x.slots, x.ids = y.slots, y.ids
	x.terms, x.termText, x.termIDs, x.lists, x.blocks = y.terms, y.termText, y.termIDs, y.lists, y.blocks
	x.totalLen, x.strs, x.tagPool, x.tagWaste, x.loadLast = y.totalLen, y.strs, y.tagPool, y.tagWaste, nil
}

// lastOf is the highest slot of a list being built, for appends
// (lastUnknown: look it up).
func (x *Index) lastOf(tid uint32) uint32 {
	if x.lists[tid].n == 0 {
		return lastUnknown
	}
	return x.loadLast[tid]
}

// Load adds a stored memory while the index is being rebuilt at open;
// walk visits its stored term list. Memories must come in one pass (each
// takes the next slot), so postings stay sorted; call Loaded after the last.
func (x *Index) Load(m *aimemoryv1.Memory, walk func(yield func(term []byte, tf uint32)) error) error {
	if x.loadLast == nil {
		x.loadLast = make([]uint32, len(x.lists))
	}
	return x.loadDoc(docFromMemory(m), walk)
}

// loadDoc adds d in the next slot, with loadLast tracking each list's
// highest slot.
func (x *Index) loadDoc(d *newDoc, walk func(yield func(term []byte, tf uint32)) error) error {
	slot := uint32(len(x.docs))
	var length uint32
	err := walk(func(term []byte, tf uint32) {
		// The term is only looked up or copied, never kept, so it need
		// not be a string of its own.
		id, _ := x.termID(bytesString(term), true)
		x.add(&x.lists[id], slot, tf, x.lastOf(id))
		x.loadLast[id] = slot
		length += tf
	})
	if err != nil {
		return err
	}
	x.totalLen += uint64(length)
	d.id = x.ids.add(d.id)
	x.set(slot, d, length)
	x.slots.insert(d.id, slot, x.idOf)
	x.count++
	return nil
}

// Replay applies a backend's log of changes since a snapshot: deletions
// (Memory nil, OldTerms as the index holds them) and additions (Memory
// and NewTerms), at most one of each per id. Unlike Apply, which edits
// one block per posting, it rewrites each list a deletion touches once and
// appends the additions as a load does, so replaying thousands of
// memories costs about one pass over the postings.
func (x *Index) Replay(changes []Change) {
	x.mu.Lock()
	defer x.mu.Unlock()
	drop := make([]bool, len(x.docs))
	touched := map[uint32]bool{}
	for _, c := range changes {
		slot, ok := x.slotOf(c.ID)
		if c.Memory != nil || !ok {
			continue
		}
		drop[slot] = true
		for _, t := range c.OldTerms {
			if id, ok := x.termID(t.Term, false); ok {
				touched[id] = true
			}
		}
		x.totalLen -= uint64(x.lens[slot])
		x.slots.remove(c.ID, x.idOf)
		x.tagWaste += int(x.docs[slot].ntags)
		x.docs[slot], x.lens[slot], x.static[slot] = docInfo{}, 0, 0
		x.count--
	}
	var dropped []uint32
	for slot, d := range drop {
		if d {
			dropped = append(dropped, uint32(slot))
		}
	}
	var keep []posting
	for id := range touched {
		keep = x.dropSlots(&x.lists[id], dropped, drop, keep)
	}
	x.loadLast = slices.Repeat([]uint32{lastUnknown}, len(x.lists))
	for _, c := range changes {
		if c.Memory == nil {
			continue
		}
		terms := c.NewTerms
		x.loadDoc(docFromMemory(c.Memory), func(yield func(term []byte, tf uint32)) error {
			for _, t := range terms {
				yield([]byte(t.Term), t.Freq)
			}
			return nil
		})
	}
	x.loadLast = nil
	x.packLists()
	if len(x.docs) > 2*x.count+1024 || x.tagWaste > len(x.tagPool)/2+1024 {
		x.compact()
	}
}

// dropSlots rewrites l without the postings of the dropped slots (sorted;
// drop marks the same). Blocks holding none of them are copied as they
// are: each block decodes alone.
func (x *Index) dropSlots(l *plist, dropped []uint32, drop []bool, keep []posting) []posting {
	var one [1]block
	bs := x.blocksOf(l, &one)
	var data []byte
	var out []block
	for i, b := range bs {
		start, end := b.off, blockEnd(l, bs, i)
		hi := uint32(math.MaxUint32)
		if i+1 < len(bs) {
			hi = bs[i+1].first
		}
		j, _ := slices.BinarySearch(dropped, b.first)
		if l.big != 0 && (j == len(dropped) || dropped[j] >= hi) {
			out = append(out, block{first: b.first, off: uint32(len(data)), n: b.n})
			data = append(data, l.data[start:end]...)
			continue
		}
		keep = keep[:0]
		decodeBlock(l.data[start:end], func(slot, tf uint32) bool {
			if !drop[slot] {
				keep = append(keep, posting{slot, tf})
			}
			return true
		})
		if len(keep) > 0 {
			out = append(out, block{first: keep[0].slot, off: uint32(len(data)), n: uint32(len(keep))})
			data = encodeBlock(data, keep)
		}
	}
	var n uint32
	for _, b := range out {
		n += b.n
	}
	x.setBlocks(l, data, n, out)
	return keep
}

// setBlocks makes l the postings data in blocks bs.
func (x *Index) setBlocks(l *plist, data []byte, n uint32, bs []block) {
	if n == 0 {
		data = nil
	}
	l.data, l.n = data, n
	switch {
	case len(bs) > 1 && l.big != 0:
		x.blocks[l.big-1] = bs
	case len(bs) > 1:
		x.blocks = append(x.blocks, bs)
		l.big = uint32(len(x.blocks))
	case l.big != 0:
		x.blocks[l.big-1] = nil // the entry is left unused until compaction
		l.big = 0
	}
}

// Loaded ends a rebuild: appending left up to half of each postings
// list's capacity unused.
func (x *Index) Loaded() { x.loaded() }

func (x *Index) loaded() {
	x.loadLast = nil
	x.packLists()
	for i, bs := range x.blocks {
		x.blocks[i] = slices.Clone(bs)
	}
	x.docs = slices.Clone(x.docs)
	x.tagPool = slices.Clone(x.tagPool)
	x.lens = slices.Clone(x.lens)
	x.static = slices.Clone(x.static)
	x.terms = slices.Clone(x.terms)
	x.lists = slices.Clone(x.lists)
}

// Has reports whether memory id is indexed.
func (x *Index) Has(id string) bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	_, ok := x.slotOf(id)
	return ok
}

// packLists moves every postings list into one allocation, each capped so
// that growing one moves it out again.
func (x *Index) packLists() {
	total := 0
	for i := range x.lists {
		total += len(x.lists[i].data)
	}
	buf := make([]byte, 0, total)
	for i := range x.lists {
		l := &x.lists[i]
		start := len(buf)
		buf = append(buf, l.data...)
		l.data = buf[start:len(buf):len(buf)]
		if len(l.data) == 0 {
			l.data = nil
		}
	}
}

// Replace makes x the index y is (y must not be used after), under x's
// lock: a reader sees the old index or the new, never a mix. A backend
// reloads its index this way when it cannot catch up.
func (x *Index) Replace(y *Index) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.takeTables(y)
}

package index

import (
	"encoding/binary"
	"slices"
	"strings"

	"github.com/ai-memory/ai-memory/internal/engine/keyword"
)

// Query is one keyword search over the index.
type Query struct {
	Terms  []string // distinct, stemmed
	All    bool     // every term must occur (else any)
	Filter *Filter
	// Prefix: under All, a term no memory holds matches the indexed terms
	// it begins (at least minPrefix bytes): "postgres" finds "PostgreSQL".
	Prefix bool
	LiveAt int64 // hide memories expired at this time; 0 = show all
	Limit  int
	Now    int64
}

// scratch accumulates per-slot BM25 sums and matched-term counts; pooled so
// a query on 100k memories does not allocate and zero a megabyte.
type scratch struct {
	sum     []float64
	matched []uint16
	touched []uint32
}

func (x *Index) getScratch() *scratch {
	s, _ := x.scratch.Get().(*scratch)
	if s == nil {
		s = &scratch{}
	}
	if n := len(x.docs); len(s.sum) < n {
		s.sum = make([]float64, n+n/4)
		s.matched = make([]uint16, n+n/4)
	}
	return s
}

// accumulate adds one block's postings of the i-th rarest query term
// (under all, only to slots that matched every rarer one; again: a slot
// may have matched term i already, by another term of its prefix group,
// and then only adds its score). The decoding is decodeBlock's, inlined:
// this loop is where a query spends its time.
func (s *scratch) accumulate(b []byte, i int, all, again bool, idf float64, lens []uint32, avgLen float64) {
	sum, matched, touched := s.sum, s.matched, s.touched
	var slot uint32
	for k := 0; k < len(b); {
		var v uint64
		if c := b[k]; c < 0x80 {
			v = uint64(c)
			k++
		} else {
			var n int
			v, n = binary.Uvarint(b[k:])
			k += n
		}
		slot += uint32(v >> 2)
		tf := uint32(v & 3)
		if tf == 0 {
			w, n := binary.Uvarint(b[k:])
			k += n
			tf = uint32(w)
		}
		m := matched[slot]
		if all && int(m) != i {
			if again && int(m) == i+1 {
				sum[slot] += keyword.TermScore(idf, tf, lens[slot], avgLen)
			}
			continue
		}
		if m == 0 {
			touched = append(touched, slot)
		}
		matched[slot] = m + 1
		sum[slot] += keyword.TermScore(idf, tf, lens[slot], avgLen)
	}
	s.touched = touched
}

// useIntersect is off in a test that checks intersect against the scan.
var useIntersect = true

// intersect is accumulate under ALL for the i-th term's list (blocks bs)
// when few slots are still in the running: s.touched holds them in slot
// order (the rarest list's), so the blocks are visited once, in order, and
// only those holding a candidate are decoded. It returns how many
// candidates the term kept.
func (s *scratch) intersect(l *plist, bs []block, i int, idf float64, lens []uint32, avgLen float64) int {
	kept, j := 0, -1
	var b []byte // block j; k bytes of it decoded, the last posting (cur, tf)
	k, cur, tf, have := 0, uint32(0), uint32(0), false
	for _, slot := range s.touched {
		if int(s.matched[slot]) != i {
			continue
		}
		nj := max(j, 0)
		for nj+1 < len(bs) && bs[nj+1].first <= slot {
			nj++
		}
		if nj != j {
			j, b, k, cur, have = nj, l.data[bs[nj].off:blockEnd(l, bs, nj)], 0, 0, false
		}
		for (!have || cur < slot) && k < len(b) {
			v, n := binary.Uvarint(b[k:])
			k += n
			cur += uint32(v >> 2)
			if tf = uint32(v & 3); tf == 0 {
				w, n := binary.Uvarint(b[k:])
				k += n
				tf = uint32(w)
			}
			have = true
		}
		if have && cur == slot {
			s.matched[slot]++
			s.sum[slot] += keyword.TermScore(idf, tf, lens[slot], avgLen)
			kept++
		}
	}
	return kept
}

func (x *Index) putScratch(s *scratch) {
	for _, slot := range s.touched {
		s.sum[slot] = 0
		s.matched[slot] = 0
	}
	s.touched = s.touched[:0]
	x.scratch.Put(s)
}

// Search returns the best q.Limit matches, best first. It reads only the
// postings of the query's terms, never every memory.
func (x *Index) Search(q Query) []Hit {
	if len(q.Terms) == 0 || q.Limit <= 0 {
		return nil
	}
	x.mu.RLock()
	defer x.mu.RUnlock()

	// A query term's postings: one list, or under Prefix the lists of the
	// terms it begins (a memory matches the term once whichever it holds).
	type termPostings struct {
		ls []*plist
		n  int // postings in all
	}
	n := x.count
	if n == 0 {
		return nil
	}
	avgLen := float64(x.totalLen) / float64(n)
	var lists []termPostings
	for _, t := range q.Terms {
		var tp termPostings
		if l := x.list(t); l != nil {
			tp.ls = []*plist{l}
		} else if q.All && q.Prefix {
			tp.ls = x.prefixed(t)
		}
		if len(tp.ls) == 0 {
			if q.All {
				return nil
			}
			continue
		}
		for _, l := range tp.ls {
			tp.n += int(l.n)
		}
		lists = append(lists, tp)
	}
	if len(lists) == 0 {
		return nil
	}
	// Rarest first: under ALL, later terms only add to slots still in the running.
	slices.SortFunc(lists, func(a, b termPostings) int { return a.n - b.n })

	s := x.getScratch()
	defer x.putScratch(s)
	alive := 0 // under ALL: slots that matched every term so far
	for i, tp := range lists {
		var one [1]block
		l := tp.ls[0]
		bs := x.blocksOf(l, &one)
		if q.All && i > 0 && len(tp.ls) == 1 && len(bs) > 1 && alive*32 < int(l.n) && useIntersect {
			// Few candidates left against a long list: decode only the
			// blocks that may hold one.
			alive = s.intersect(l, bs, i, keyword.IDF(int(l.n), n), x.lens, avgLen)
		} else {
			for k, l := range tp.ls {
				idf := keyword.IDF(int(l.n), n)
				bs := x.blocksOf(l, &one)
				for j, b := range bs {
					s.accumulate(l.data[b.off:blockEnd(l, bs, j)], i, q.All, k > 0, idf, x.lens, avgLen)
				}
			}
			switch {
			case !q.All || i+1 == len(lists): // no count needed
				alive = 1
			case i == 0:
				alive = len(s.touched)
			default:
				alive = 0
				for _, slot := range s.touched {
					if int(s.matched[slot]) == i+1 {
						alive++
					}
				}
			}
		}
		if q.All && alive == 0 {
			return nil
		}
	}

	top := &topK{k: q.Limit}
	for _, slot := range s.touched {
		if q.All && int(s.matched[slot]) != len(lists) {
			continue
		}
		// Most candidates of a common word cannot reach the top: skip them
		// without reading their docInfo.
		if top.full() && s.sum[slot]*x.static[slot]*maxRecency < top.worst() {
			continue
		}
		d := &x.docs[slot]
		if (q.LiveAt != 0 && !d.live(q.LiveAt)) || (q.Filter != nil && !q.Filter.match(x, d)) {
			continue
		}
		sc := score(s.sum[slot], x.static[slot], d, q.Now)
		top.offer(d, sc, sc)
	}
	return top.sorted()
}

// minPrefix is the shortest query term matched as a prefix (Query.Prefix).
const minPrefix = 3

// prefixed is the postings of every indexed term that term begins, when
// term is at least minPrefix bytes (a walk of the term table: only for a
// word that matched nothing exactly).
func (x *Index) prefixed(term string) []*plist {
	if len(term) < minPrefix {
		return nil
	}
	var out []*plist
	for id, t := range x.terms {
		if len(t) > len(term) && strings.HasPrefix(t, term) && x.lists[id].n > 0 {
			out = append(out, &x.lists[id])
		}
	}
	return out
}

// List returns the live memories matching f, priority desc then updated_at
// desc then id. It walks the doc table, which lives in memory.
func (x *Index) List(f *Filter, liveAt int64, limit int) []Hit {
	if limit <= 0 {
		return nil
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	top := &topK{k: limit}
	for i := range x.docs {
		d := &x.docs[i]
		if d.id == "" || !d.live(liveAt) || !f.match(x, d) {
			continue
		}
		top.offer(d, float64(d.priority), 0)
	}
	return top.sorted()
}

// ListBoth is List and, from the same scan, the limit most recently
// updated (updated_at desc, then id).
func (x *Index) ListBoth(f *Filter, liveAt int64, limit int) (byPriority, recent []Hit) {
	if limit <= 0 {
		return nil, nil
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	top, last := &topK{k: limit}, &topK{k: limit}
	for i := range x.docs {
		d := &x.docs[i]
		if d.id == "" || !d.live(liveAt) || !f.match(x, d) {
			continue
		}
		top.offer(d, float64(d.priority), 0)
		last.offer(d, 0, 0) // equal keys: better() orders by updated_at, then id
	}
	return top.sorted(), last.sorted()
}

// Related finds up to limit memories of namespace (expired included, except
// the one with id exclude) sharing any of terms. It gathers a few
// candidates from the rarest terms first, which are the telling ones, and
// stops there, so a title full of common words does not cost a scan of
// half the index; the candidates are then ranked by BM25 over all terms.
func (x *Index) Related(terms []string, namespace, exclude string, limit int) []Hit {
	x.mu.RLock()
	defer x.mu.RUnlock()
	n := x.count
	if n == 0 || limit <= 0 {
		return nil
	}
	// Namespaces compare as their numbers; one no memory has, has none.
	ns, ok := x.strs.ids[namespace]
	if !ok {
		return nil
	}
	var lists []*plist
	for _, t := range terms {
		if l := x.list(t); l != nil {
			lists = append(lists, l)
		}
	}
	slices.SortFunc(lists, func(a, b *plist) int { return int(a.n) - int(b.n) })
	enough := 4 * limit
	cands := make([]uint32, 0, enough) // few: a slice, not a map
	for _, l := range lists {
		if len(cands) >= enough {
			break
		}
		x.each(l, func(slot, _ uint32) bool {
			d := &x.docs[slot]
			if d.ns == ns && d.id != exclude && d.id != "" && !slices.Contains(cands, slot) {
				cands = append(cands, slot)
			}
			return len(cands) < enough
		})
	}
	avgLen := float64(x.totalLen) / float64(n)
	top := &topK{k: limit}
	for _, slot := range cands {
		d := &x.docs[slot]
		var sc float64
		for _, l := range lists {
			if tf, found := x.find(l, slot); found {
				sc += keyword.TermScore(keyword.IDF(int(l.n), n), tf, x.lens[slot], avgLen)
			}
		}
		top.offer(d, sc, sc)
	}
	return top.sorted()
}

package index

// DocFreqs returns, for each term, how many memories hold it, and the
// number of memories indexed: the statistics the Corpus API serves.
func (x *Index) DocFreqs(terms []string) ([]uint64, int) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	out := make([]uint64, len(terms))
	for i, t := range terms {
		if l := x.list(t); l != nil {
			out[i] = uint64(l.n)
		}
	}
	return out, x.count
}

// DocFreqsWithin is DocFreqs counting only the memories of namespaces
// visible allows (a caller's, for whom the store-wide figures would count
// other tenants' memories): it walks each term's postings and the doc
// table, so it costs what they hold.
func (x *Index) DocFreqsWithin(terms []string, visible func(ns string) bool) ([]uint64, int) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	seen := map[uint32]bool{} // a namespace's answer, asked once
	ok := func(d *docInfo) bool {
		v, asked := seen[d.ns]
		if !asked {
			v = visible(x.ns(d))
			seen[d.ns] = v
		}
		return v
	}
	out := make([]uint64, len(terms))
	for i, t := range terms {
		if l := x.list(t); l != nil {
			x.each(l, func(slot, _ uint32) bool {
				if d := &x.docs[slot]; d.id != "" && ok(d) {
					out[i]++
				}
				return true
			})
		}
	}
	n := 0
	for i := range x.docs {
		if d := &x.docs[i]; d.id != "" && ok(d) {
			n++
		}
	}
	return out, n
}

// TagCounts counts the live memories matching f that carry each tag. It
// walks the doc table (in memory: about a millisecond at 100k memories).
func (x *Index) TagCounts(f *Filter, liveAt int64) map[string]uint64 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	counts := map[uint32]uint64{}
	for i := range x.docs {
		d := &x.docs[i]
		if d.id == "" || d.ntags == 0 || !d.live(liveAt) || !f.match(x, d) {
			continue
		}
		for _, id := range x.tagIDs(d) {
			counts[id]++
		}
	}
	out := make(map[string]uint64, len(counts))
	for id, n := range counts {
		out[x.strs.strs[id]] = n
	}
	return out
}

// Matching reports for each id whether it is a live memory matching f.
func (x *Index) Matching(ids []string, f *Filter, liveAt int64) []bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	out := make([]bool, len(ids))
	for i, id := range ids {
		if slot, ok := x.slotOf(id); ok {
			d := &x.docs[slot]
			out[i] = d.live(liveAt) && f.match(x, d)
		}
	}
	return out
}

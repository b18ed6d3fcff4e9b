package index

import (
	"encoding/binary"
	"slices"
	"sort"
)

// A postings list is packed: blocks of up to blockSize postings, each a
// run of uvarints. A posting is (slot delta << 2 | tf) when tf < 4, else
// (slot delta << 2) followed by tf; the first delta of a block counts from
// slot 0, so a block decodes alone and a change rewrites one block only.
// Most postings take one or two bytes instead of eight.
type plist struct {
	data []byte
	n    uint32 // postings: the term's document frequency
	big  uint32 // 1 + index into Index.blocks when the list has a block table; 0 = one block
}

// block is one entry of a long list's block table.
type block struct {
	first uint32 // slot of its first posting
	off   uint32 // where it starts in data
	n     uint32
	// last is its highest slot once known, 0 until then: appends to a long
	// list need the tail block's, and decoding it for every new memory's
	// every term was a third of applying a store.
	last uint32
}

const blockSize = 64

func appendPosting(b []byte, delta, tf uint32) []byte {
	if tf < 4 {
		return binary.AppendUvarint(b, uint64(delta)<<2|uint64(tf))
	}
	b = binary.AppendUvarint(b, uint64(delta)<<2)
	return binary.AppendUvarint(b, uint64(tf))
}

// decodeBlock calls fn for each posting of one encoded block, until fn
// returns false; it reports whether fn never did.
func decodeBlock(b []byte, fn func(slot, tf uint32) bool) bool {
	var slot uint32
	for i := 0; i < len(b); {
		v, k := binary.Uvarint(b[i:])
		i += k
		slot += uint32(v >> 2)
		tf := uint32(v & 3)
		if tf == 0 {
			w, k := binary.Uvarint(b[i:])
			i += k
			tf = uint32(w)
		}
		if !fn(slot, tf) {
			return false
		}
	}
	return true
}

func encodeBlock(b []byte, ps []posting) []byte {
	var prev uint32
	for _, p := range ps {
		b = appendPosting(b, p.slot-prev, p.tf)
		prev = p.slot
	}
	return b
}

// posting says that the document in slot holds a term tf times.
type posting struct {
	slot uint32
	tf   uint32
}

// blocksOf is l's block table; a one-block list gets one in one.
func (x *Index) blocksOf(l *plist, one *[1]block) []block {
	if l.big != 0 {
		return x.blocks[l.big-1]
	}
	one[0] = block{off: 0, n: l.n}
	return one[:]
}

// each calls fn for every posting of l in slot order, until fn returns false.
func (x *Index) each(l *plist, fn func(slot, tf uint32) bool) {
	if l.big == 0 {
		decodeBlock(l.data, fn)
		return
	}
	bs := x.blocks[l.big-1]
	for i, b := range bs {
		if !decodeBlock(l.data[b.off:blockEnd(l, bs, i)], fn) {
			return
		}
	}
}

// blockAt is the block of l that holds slot, or would.
func blockAt(bs []block, slot uint32) int {
	return max(0, sort.Search(len(bs), func(i int) bool { return bs[i].first > slot })-1)
}

func blockEnd(l *plist, bs []block, i int) uint32 {
	if i+1 < len(bs) {
		return bs[i+1].off
	}
	return uint32(len(l.data))
}

// find returns slot's term frequency in l.
func (x *Index) find(l *plist, slot uint32) (uint32, bool) {
	var one [1]block
	bs := x.blocksOf(l, &one)
	i := blockAt(bs, slot)
	var tf uint32
	decodeBlock(l.data[bs[i].off:blockEnd(l, bs, i)], func(s, f uint32) bool {
		if s == slot {
			tf = f
		}
		return s < slot
	})
	return tf, tf != 0
}

// lastSlot is the highest slot in l (which is not empty).
func (x *Index) lastSlot(l *plist) uint32 {
	var one [1]block
	bs := x.blocksOf(l, &one)
	tail := &bs[len(bs)-1]
	if tail.last != 0 {
		return tail.last
	}
	var last uint32
	decodeBlock(l.data[tail.off:], func(s, _ uint32) bool { last = s; return true })
	tail.last = last
	return last
}

// add inserts (or replaces) slot's posting. New documents take the
// highest slot, so the common case appends without decoding, given last
// (the list's highest slot, or lastUnknown).
func (x *Index) add(l *plist, slot, tf, last uint32) {
	if l.n == 0 {
		l.data = appendPosting(l.data[:0], slot, tf)
		l.n = 1
		return
	}
	if last == lastUnknown {
		last = x.lastSlot(l)
	}
	if slot > last {
		x.appendPosting(l, slot, tf, last)
		return
	}
	x.rewrite(l, slot, func(ps []posting) []posting {
		i, found := slices.BinarySearchFunc(ps, slot, cmpSlot)
		if found {
			ps[i].tf = tf
			return ps
		}
		l.n++
		return slices.Insert(ps, i, posting{slot, tf})
	})
}

const lastUnknown = ^uint32(0)

func (x *Index) appendPosting(l *plist, slot, tf, last uint32) {
	var one [1]block
	bs := x.blocksOf(l, &one)
	tail := &bs[len(bs)-1]
	l.n++
	if tail.n < blockSize {
		l.data = appendPosting(l.data, slot-last, tf)
		tail.n++
		tail.last = slot
		return
	}
	// Start a block: a one-block list gets its table now.
	if l.big == 0 {
		x.blocks = append(x.blocks, []block{{first: x.firstSlot(l), off: 0, n: tail.n, last: last}})
		l.big = uint32(len(x.blocks))
	}
	x.blocks[l.big-1] = append(x.blocks[l.big-1], block{first: slot, off: uint32(len(l.data)), n: 1, last: slot})
	l.data = appendPosting(l.data, slot, tf)
}

func (x *Index) firstSlot(l *plist) uint32 {
	v, _ := binary.Uvarint(l.data)
	return uint32(v >> 2)
}

// remove deletes slot's posting, if any.
func (x *Index) remove(l *plist, slot uint32) {
	if l.n == 0 {
		return
	}
	x.rewrite(l, slot, func(ps []posting) []posting {
		i, found := slices.BinarySearchFunc(ps, slot, cmpSlot)
		if !found {
			return ps
		}
		l.n--
		return slices.Delete(ps, i, i+1)
	})
}

// rewrite decodes the block of l that holds slot, lets edit change its
// postings, and encodes it back in place (splitting a block grown to
// twice blockSize, dropping an emptied one).
func (x *Index) rewrite(l *plist, slot uint32, edit func([]posting) []posting) {
	var one [1]block
	bs := x.blocksOf(l, &one)
	i := blockAt(bs, slot)
	start, end := bs[i].off, blockEnd(l, bs, i)
	var ps []posting
	decodeBlock(l.data[start:end], func(s, tf uint32) bool { ps = append(ps, posting{s, tf}); return true })
	ps = edit(ps)
	var enc []byte
	var parts []block
	for len(ps) > 0 {
		n := len(ps)
		if n >= 2*blockSize {
			n = blockSize
		}
		parts = append(parts, block{first: ps[0].slot, off: start + uint32(len(enc)), n: uint32(n)})
		enc = encodeBlock(enc, ps[:n])
		ps = ps[n:]
	}
	l.data = slices.Replace(l.data, int(start), int(end), enc...)
	if l.n == 0 {
		l.data = nil
		if l.big != 0 {
			x.blocks[l.big-1] = nil
			l.big = 0
		}
		return
	}
	if l.big == 0 && len(parts) <= 1 {
		return
	}
	if l.big == 0 {
		x.blocks = append(x.blocks, nil)
		l.big = uint32(len(x.blocks))
		bs = nil
		i = 0
	}
	diff := uint32(len(enc)) - (end - start) // wraps for a shrink; the sums below wrap back
	bs = slices.Replace(x.blocks[l.big-1], i, min(i+1, len(x.blocks[l.big-1])), parts...)
	for j := i + len(parts); j < len(bs); j++ {
		bs[j].off += diff
	}
	x.blocks[l.big-1] = bs
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

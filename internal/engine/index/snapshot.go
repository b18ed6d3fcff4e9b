package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"

	"github.com/ai-memory/ai-memory/sdk/record"
)

// A snapshot is the whole index as bytes, close to its memory layout, so
// that an engine start decodes it instead of re-reading every record and
// term list: the doc table, the string tables and each term's packed
// postings as they are. A backend stores it with a log of what changed
// since (boltstore/snapshot.go). A CRC-32C covers it, and Decode checks
// every length and number as well, so a damaged snapshot is an error (and
// a rebuild from the term lists), not a wrong index or a crash.

var snapshotMagic = []byte("aim-index-1\n")

// Encode writes the index as a snapshot.
func (x *Index) Encode() []byte {
	x.mu.RLock()
	defer x.mu.RUnlock()
	size := len(snapshotMagic) + 64*len(x.docs)
	for i := range x.lists {
		size += len(x.terms[i]) + len(x.lists[i].data) + 8
	}
	w := make([]byte, 0, size)
	w = append(w, snapshotMagic...)
	w = binary.AppendUvarint(w, uint64(len(x.docs)))
	w = binary.AppendUvarint(w, uint64(x.count))
	w = binary.AppendUvarint(w, x.totalLen)
	w = appendStrings(w, x.strs.strs[1:])
	for slot := range x.docs {
		d := &x.docs[slot]
		w = appendString(w, d.id)
		if d.id == "" {
			continue
		}
		w = binary.AppendVarint(w, d.expiresAt)
		w = binary.AppendVarint(w, d.updatedAt)
		w = binary.AppendVarint(w, d.createdAt)
		w = binary.AppendUvarint(w, uint64(d.ns))
		w = binary.AppendUvarint(w, uint64(d.agent))
		w = binary.AppendUvarint(w, uint64(d.ntags))
		for _, t := range x.tagIDs(d) {
			w = binary.AppendUvarint(w, uint64(t))
		}
		w = binary.AppendVarint(w, int64(d.priority))
		w = append(w, byte(d.tier), byte(d.scope))
		w = binary.LittleEndian.AppendUint64(w, math.Float64bits(x.static[slot]))
		w = binary.AppendUvarint(w, uint64(x.lens[slot]))
	}
	live := 0
	for i := range x.lists {
		if x.lists[i].n > 0 {
			live++
		}
	}
	w = binary.AppendUvarint(w, uint64(live))
	for i := range x.lists {
		l := &x.lists[i]
		if l.n == 0 {
			continue
		}
		w = appendString(w, x.terms[i])
		w = binary.AppendUvarint(w, uint64(l.n))
		w = appendString(w, bytesString(l.data))
		var bs []block
		if l.big != 0 {
			bs = x.blocks[l.big-1]
		}
		w = binary.AppendUvarint(w, uint64(len(bs)))
		for _, b := range bs {
			w = binary.AppendUvarint(w, uint64(b.first))
			w = binary.AppendUvarint(w, uint64(b.off))
			w = binary.AppendUvarint(w, uint64(b.n))
		}
	}
	return binary.LittleEndian.AppendUint32(w, crc32.Checksum(w, castagnoli))
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func appendString(w []byte, s string) []byte {
	w = binary.AppendUvarint(w, uint64(len(s)))
	return append(w, s...)
}

func appendStrings(w []byte, ss []string) []byte {
	w = binary.AppendUvarint(w, uint64(len(ss)))
	for _, s := range ss {
		w = appendString(w, s)
	}
	return w
}

// reader decodes a snapshot; the first error sticks and every later read
// returns zero values.
type reader struct {
	b   []byte
	err error
}

var errSnapshot = errors.New("corrupt index snapshot")

func (r *reader) fail() {
	if r.err == nil {
		r.err = errSnapshot
	}
	r.b = nil
}

func (r *reader) uvarint(limit uint64) uint64 {
	v, k := binary.Uvarint(r.b)
	if k <= 0 || v > limit {
		r.fail()
		return 0
	}
	r.b = r.b[k:]
	return v
}

func (r *reader) varint() int64 {
	v, k := binary.Varint(r.b)
	if k <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[k:]
	return v
}

func (r *reader) bytes(n uint64) []byte {
	if uint64(len(r.b)) < n {
		r.fail()
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

// str returns the next string as a view into the snapshot.
func (r *reader) str() []byte { return r.bytes(r.uvarint(uint64(len(r.b)))) }

func (r *reader) strings() []string {
	n := r.uvarint(uint64(len(r.b)))
	out := make([]string, 0, n)
	for range n {
		out = append(out, string(r.str()))
	}
	return out
}

// Decode rebuilds an index from a snapshot written by Encode. The index
// does not keep b.
func Decode(b []byte) (*Index, error) {
	if len(b) < len(snapshotMagic)+4 || string(b[:len(snapshotMagic)]) != string(snapshotMagic) {
		return nil, fmt.Errorf("%w: unknown format", errSnapshot)
	}
	sum := b[len(b)-4:]
	b = b[:len(b)-4]
	if binary.LittleEndian.Uint32(sum) != crc32.Checksum(b, castagnoli) {
		return nil, fmt.Errorf("%w: checksum", errSnapshot)
	}
	r := &reader{b: b[len(snapshotMagic):]}
	x := New()
	slots := r.uvarint(uint64(len(r.b)))
	count := r.uvarint(slots)
	x.totalLen = r.uvarint(math.MaxUint64)
	strs := r.strings()
	for _, s := range strs {
		x.strs.intern(s)
	}
	if r.err != nil || len(x.strs.strs) != len(strs)+1 {
		return nil, errSnapshot
	}
	// Sizes come from the snapshot: trust them only as far as its length.
	capSlots := min(slots, uint64(len(r.b))/8)
	x.docs = make([]docInfo, 0, capSlots)
	x.slots.grow(x.idOf, int(min(count, capSlots)))
	x.lens = make([]uint32, 0, capSlots)
	x.static = make([]float64, 0, capSlots)
	nstrs := uint64(len(x.strs.strs) - 1)
	for slot := range slots {
		id := r.str()
		if len(id) == 0 {
			x.docs, x.lens, x.static = append(x.docs, docInfo{}), append(x.lens, 0), append(x.static, 0)
			continue
		}
		d := docInfo{id: x.ids.add(bytesString(id))}
		d.expiresAt, d.updatedAt, d.createdAt = r.varint(), r.varint(), r.varint()
		d.ns, d.agent = uint32(r.uvarint(nstrs)), uint32(r.uvarint(nstrs))
		d.ntags, d.tags = uint8(r.uvarint(record.MaxTags)), uint32(len(x.tagPool))
		for range d.ntags {
			x.tagPool = append(x.tagPool, uint32(r.uvarint(nstrs)))
		}
		p := r.varint()
		if p < math.MinInt8 || p > math.MaxInt8 {
			r.fail()
		}
		d.priority = int8(p)
		tb := r.bytes(2)
		st := r.bytes(8)
		length := r.uvarint(math.MaxUint32)
		if r.err != nil {
			return nil, r.err
		}
		d.tier, d.scope = int8(tb[0]), int8(tb[1])
		if d.tier < -1 || int(d.tier) >= len(record.Tiers) || d.scope < -1 || int(d.scope) >= len(record.Scopes) {
			return nil, fmt.Errorf("%w: tier %d scope %d", errSnapshot, d.tier, d.scope)
		}
		x.docs = append(x.docs, d)
		x.lens = append(x.lens, uint32(length))
		x.static = append(x.static, math.Float64frombits(binary.LittleEndian.Uint64(st)))
		if !x.slots.insert(d.id, uint32(slot), x.idOf) {
			return nil, fmt.Errorf("%w: id %q twice", errSnapshot, d.id)
		}
		x.count++
	}
	if uint64(x.count) != count {
		return nil, fmt.Errorf("%w: %d memories, header says %d", errSnapshot, x.count, count)
	}
	nterms := r.uvarint(uint64(len(r.b)))
	x.terms = make([]string, 0, min(nterms, uint64(len(r.b))/4))
	x.lists = make([]plist, 0, cap(x.terms))
	x.termIDs.grow(x.termOf, cap(x.terms))
	for range nterms {
		term := r.str()
		n := r.uvarint(uint64(count))
		data := r.str()
		nblocks := r.uvarint(n)
		if r.err != nil || n == 0 {
			return nil, errSnapshot
		}
		id := uint32(len(x.terms))
		x.terms = append(x.terms, x.termText.add(bytesString(term)))
		x.lists = append(x.lists, plist{})
		if !x.termIDs.insert(x.terms[id], id, x.termOf) {
			return nil, fmt.Errorf("%w: term %q twice", errSnapshot, term)
		}
		l := &x.lists[id]
		l.data, l.n = data, uint32(n) // a view into b until packLists
		if nblocks > 0 {
			bs := make([]block, nblocks)
			for i := range bs {
				bs[i] = block{first: uint32(r.uvarint(slots)), off: uint32(r.uvarint(uint64(len(data)))), n: uint32(r.uvarint(n))}
			}
			x.blocks = append(x.blocks, bs)
			l.big = uint32(len(x.blocks))
		}
		if err := x.checkList(l, slots); err != nil || r.err != nil {
			return nil, fmt.Errorf("%w: postings of %q", errSnapshot, term)
		}
	}
	if r.err != nil || len(r.b) != 0 {
		return nil, errSnapshot
	}
	x.packLists()
	return x, nil
}

// checkList makes sure a decoded list can be read safely: its blocks are
// in order and hold what the table says, and every slot is in range.
func (x *Index) checkList(l *plist, slots uint64) error {
	var one [1]block
	bs := x.blocksOf(l, &one)
	var total uint32
	prev := int64(-1)
	for i, b := range bs {
		end := blockEnd(l, bs, i)
		if b.off > end || end > uint32(len(l.data)) || (i == 0 && b.off != 0) || b.n == 0 {
			return errSnapshot
		}
		n, last, ok := x.checkBlock(l.data[b.off:end], prev, slots)
		if !ok || n != b.n || (l.big != 0 && n > 0 && x.firstOf(l.data[b.off:end]) != b.first) {
			return errSnapshot
		}
		prev = last
		total += n
	}
	if total != l.n {
		return errSnapshot
	}
	return nil
}

func (x *Index) firstOf(b []byte) uint32 {
	v, _ := binary.Uvarint(b)
	return uint32(v >> 2)
}

// checkBlock decodes one untrusted block: slots ascending past prev, each
// below slots and in use, tf in its shortest form. It returns the count
// and the last slot.
func (x *Index) checkBlock(b []byte, prev int64, slots uint64) (uint32, int64, bool) {
	var slot uint64
	var n uint32
	for i := 0; i < len(b); n++ {
		v, k := binary.Uvarint(b[i:])
		if k <= 0 {
			return 0, 0, false
		}
		i += k
		slot += v >> 2
		if v&3 == 0 {
			w, k := binary.Uvarint(b[i:])
			if k <= 0 || w < 4 || w > math.MaxUint32 {
				return 0, 0, false
			}
			i += k
		}
		// (A posting of a deleted slot would only be a hit that
		// Search's caller finds no record for; the encoder writes none.)
		if int64(slot) <= prev || slot >= slots {
			return 0, 0, false
		}
		prev = int64(slot)
	}
	return n, prev, true
}

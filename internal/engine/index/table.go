package index

import (
	"hash/maphash"
	"unsafe"
)

// table maps strings to uint32 values with open addressing (linear
// probing): about 8 bytes a key instead of a Go map's 40, because it keeps
// no keys. The caller keeps them; keyOf returns the key of a stored value.
type table struct {
	seed maphash.Seed
	vals []uint32 // value+1; 0 = empty
	n    int
}

func newTable() table { return table{seed: maphash.MakeSeed()} }

func (t *table) hash(key string) int {
	return int(maphash.String(t.seed, key) & uint64(len(t.vals)-1))
}

// find returns the value stored under key.
func (t *table) find(key string, keyOf func(uint32) string) (uint32, bool) {
	if t.n == 0 {
		return 0, false
	}
	mask := len(t.vals) - 1
	for i := t.hash(key); ; i = (i + 1) & mask {
		v := t.vals[i]
		if v == 0 {
			return 0, false
		}
		if keyOf(v-1) == key {
			return v - 1, true
		}
	}
}

// insert stores v under key; false (and nothing stored) if key is there.
func (t *table) insert(key string, v uint32, keyOf func(uint32) string) bool {
	if 4*(t.n+1) > 3*len(t.vals) {
		t.grow(keyOf, t.n+1)
	}
	mask := len(t.vals) - 1
	i := t.hash(key)
	for ; t.vals[i] != 0; i = (i + 1) & mask {
		if keyOf(t.vals[i]-1) == key {
			return false
		}
	}
	t.vals[i] = v + 1
	t.n++
	return true
}

// grow makes room for n keys.
func (t *table) grow(keyOf func(uint32) string, n int) {
	size := max(64, len(t.vals))
	for 4*n > 3*size {
		size *= 2
	}
	if size == len(t.vals) {
		return
	}
	old := t.vals
	t.vals = make([]uint32, size)
	mask := len(t.vals) - 1
	for _, v := range old {
		if v != 0 {
			i := t.hash(keyOf(v - 1))
			for t.vals[i] != 0 {
				i = (i + 1) & mask
			}
			t.vals[i] = v
		}
	}
}

// remove deletes key, shifting back the entries probed past it so that no
// tombstones are needed.
func (t *table) remove(key string, keyOf func(uint32) string) {
	if t.n == 0 {
		return
	}
	mask := len(t.vals) - 1
	i := t.hash(key)
	for {
		v := t.vals[i]
		if v == 0 {
			return
		}
		if keyOf(v-1) == key {
			break
		}
		i = (i + 1) & mask
	}
	t.vals[i] = 0
	t.n--
	for j := (i + 1) & mask; t.vals[j] != 0; j = (j + 1) & mask {
		k := t.hash(keyOf(t.vals[j] - 1))
		// Leave the entry at j where its home k lies cyclically in (i, j].
		if (i < j && i < k && k <= j) || (i > j && (i < k || k <= j)) {
			continue
		}
		t.vals[i], t.vals[j] = t.vals[j], 0
		i = j
	}
}

// arena holds many small strings in shared chunks, saving each its own
// allocation. Chunks are never written after a string is cut from them.
type arena struct {
	chunks [][]byte
}

const arenaChunk = 64 << 10

func (a *arena) add(s string) string {
	if len(s) == 0 {
		return ""
	}
	if len(s) > arenaChunk/4 {
		return string([]byte(s)) // a copy of its own
	}
	n := len(a.chunks)
	if n == 0 || cap(a.chunks[n-1])-len(a.chunks[n-1]) < len(s) {
		a.chunks = append(a.chunks, make([]byte, 0, arenaChunk))
		n++
	}
	c := a.chunks[n-1]
	start := len(c)
	c = append(c, s...)
	a.chunks[n-1] = c
	return unsafe.String(&c[start], len(s))
}

// bytesString views b as a string without copying, for a lookup that does
// not keep it.
func bytesString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

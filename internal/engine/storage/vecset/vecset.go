// Package vecset is the in-memory copy of a store's vectors and its exact
// (brute-force cosine) search, shared by every backend so that Nearest
// and hybrid search answer alike on all of them. A backend keeps the
// vectors durably in its own format and feeds this set from them.
package vecset

import (
	"errors"
	"hash/fnv"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/ai-memory/ai-memory/internal/engine/index"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// DefaultMinSimilarity is hybrid search's least cosine of a semantic
// candidate when the request sets none (an endpoint's default; the local
// model has its own).
var DefaultMinSimilarity = 0.5

// EmbedText is what is embedded for a memory (spec §1.4).
func EmbedText(m *aimemoryv1.Memory) string { return m.GetTitle() + " " + m.GetContent() }

// Hash is the hash of an embedded text kept with its vector: a vector is
// of a record's current text while the two agree.
func Hash(text string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(text))
	return h.Sum64()
}

// TextHash is the hash of m's embedded text.
func TextHash(m *aimemoryv1.Memory) uint64 { return Hash(EmbedText(m)) }

// Entry is one memory's vector: by model, of the text with hash Hash,
// unit length, 8-bit (quant.go).
type Entry struct {
	Model string
	Hash  uint64
	Scale float32
	Q     []int8
}

// Entries checks PutVectors' arguments and makes their entries
// (normalized and quantized, with the hash of the text embedded).
func Entries(model string, puts []storage.VectorPut) ([]*Entry, error) {
	es := make([]*Entry, len(puts))
	for i, p := range puts {
		if model == "" || len(p.Vector) == 0 || len(p.Vector) > 1<<16 {
			return nil, errors.New("vector: a model and 1 to 65536 dimensions")
		}
		scale, q := Quantize(p.Vector)
		es[i] = &Entry{Model: model, Scale: scale, Q: q, Hash: Hash(p.Text)}
	}
	return es, nil
}

// Normalize is v scaled to unit length (zero stays zero).
func Normalize(v []float32) []float32 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	if s == 0 {
		return out
	}
	inv := float32(1 / math.Sqrt(s))
	for i, x := range v {
		out[i] = x * inv
	}
	return out
}

// Set is the in-memory copy: entries in a slice for scanning, and their
// positions by id. kind[i] numbers es[i]'s model and dimensions (kinds),
// so the scan skips other models' vectors without reading their entries.
// Safe for concurrent use.
type Set struct {
	mu    sync.RWMutex
	ids   []string
	es    []*Entry
	kind  []int32
	pos   map[string]int
	kinds map[kindKey]int32
}

// kindKey is a model and a dimension count: vectors a query can be
// compared with.
type kindKey struct {
	model string
	dims  int
}

// New is an empty set.
func New() *Set { return &Set{pos: map[string]int{}, kinds: map[kindKey]int32{}} }

// kindOf numbers e's model and dimensions (held under the write lock).
func (s *Set) kindOf(e *Entry) int32 {
	k := kindKey{e.Model, len(e.Q)}
	n, ok := s.kinds[k]
	if !ok {
		n = int32(len(s.kinds))
		s.kinds[k] = n
	}
	return n
}

// Put sets id's entry; nil removes it.
func (s *Set) Put(id string, e *Entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.pos[id]; ok {
		if e != nil {
			s.es[i], s.kind[i] = e, s.kindOf(e)
			return
		}
		last := len(s.ids) - 1
		s.ids[i], s.es[i], s.kind[i] = s.ids[last], s.es[last], s.kind[last]
		s.pos[s.ids[i]] = i
		s.ids, s.es, s.kind = s.ids[:last], s.es[:last], s.kind[:last]
		delete(s.pos, id)
		return
	}
	if e != nil {
		s.pos[id] = len(s.ids)
		s.ids = append(s.ids, id)
		s.es = append(s.es, e)
		s.kind = append(s.kind, s.kindOf(e))
	}
}

// Get is id's entry; nil when it has none.
func (s *Set) Get(id string) *Entry {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if i, ok := s.pos[id]; ok {
		return s.es[i]
	}
	return nil
}

// Has reports whether id has a vector by model.
func (s *Set) Has(id, model string) bool {
	e := s.Get(id)
	return e != nil && e.Model == model
}

// Len is the number of vectors held.
func (s *Set) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.ids)
}

// Status counts, of the live memories ids, those with a vector by model
// and those with a vector by another (a model change: they need a reindex).
func (s *Set) Status(ids []string, model string) (current, other int) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, id := range ids {
		if i, ok := s.pos[id]; ok {
			if s.es[i].Model == model {
				current++
			} else {
				other++
			}
		}
	}
	return current, other
}

// Missing is up to limit of the live memories ids (sorted here) after the
// id after with no vector by model, in id order: a reindex's next batch.
func (s *Set) Missing(ids []string, model, after string, limit int) []index.Hit {
	slices.Sort(ids)
	var hits []index.Hit
	for _, id := range ids {
		if id <= after || s.Has(id, model) {
			continue
		}
		hits = append(hits, index.Hit{ID: id})
		if len(hits) == limit {
			break
		}
	}
	return hits
}

// Nearest is the limit live memories of idx matching f whose vectors by
// model are closest to q (cosine), best first, with cosine at least minCos:
// the first limit of ByScore's order of every such memory.
//
// One pass scores every vector into a reused buffer and counts the scores
// by band (a histogram of scoreBands over [-1, 1]). Then, from the best
// band down, the vectors of enough bands to give 4·limit candidates are
// sorted and put to the filter, 8 times as many bands' worth at a time
// while the filter leaves fewer than limit: so the filter is asked about
// vectors in score order, about as many as it needs, and no list of every
// candidate is made or sorted.
func (s *Set) Nearest(idx *index.Index, f *index.Filter, q []float32, model string, limit int, minCos float64, now int64) []index.Hit {
	if limit <= 0 {
		return nil
	}
	qq := quantizeQuery(q)
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	clear(sc.bands[:])
	s.mu.RLock()
	defer s.mu.RUnlock() // the index is read under it; it never takes this lock
	kind, ok := s.kinds[kindKey{model, len(qq.q)}]
	if !ok {
		return nil
	}
	sc.scores = slices.Grow(sc.scores[:0], len(s.es))[:len(s.es)]
	for i, k := range s.kind {
		d := math.Inf(-1) // not a candidate
		if k == kind {
			if c := qq.cos(s.es[i]); c >= minCos {
				d = c
				sc.bands[band(d)]++
			}
		}
		sc.scores[i] = d
	}
	var out []index.Hit
	hi, want := scoreBands, 4*limit
	for hi > 0 && len(out) < limit {
		lo, n := hi, 0
		for lo > 0 && n < want {
			lo--
			n += int(sc.bands[lo])
		}
		sc.hits = sc.hits[:0]
		for i, d := range sc.scores {
			if d != math.Inf(-1) {
				if b := band(d); b >= lo && b < hi {
					sc.hits = append(sc.hits, index.Hit{ID: s.ids[i], Score: d})
				}
			}
		}
		out = append(out, Filtered(idx, f, ByScore(sc.hits), limit-len(out), now)...)
		hi, want = lo, 8*want
	}
	return out
}

// scoreBands is how many bands the scores of Nearest's histogram fall in.
const scoreBands = 4096

// band is the band of a cosine (within [-1, 1], but rounding may step out).
func band(d float64) int {
	return max(0, min(scoreBands-1, int((d+1)*scoreBands/2)))
}

// scratch is a Nearest's buffers, reused across queries.
type scratch struct {
	scores []float64
	bands  [scoreBands]uint32
	hits   []index.Hit
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// ByScore sorts hits best first, equal scores by id: every backend
// answers in one order, whatever order it holds its vectors in.
func ByScore(hits []index.Hit) []index.Hit {
	slices.SortFunc(hits, func(a, b index.Hit) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return strings.Compare(a.ID, b.ID)
	})
	return hits
}

// Filtered is the first limit of ranked hits that are live memories of
// idx matching f, asking the index in chunks.
func Filtered(idx *index.Index, f *index.Filter, ranked []index.Hit, limit int, now int64) []index.Hit {
	var out []index.Hit
	for start := 0; start < len(ranked) && len(out) < limit; start += 4 * limit {
		chunk := ranked[start:min(len(ranked), start+4*limit)]
		ids := make([]string, len(chunk))
		for i, c := range chunk {
			ids[i] = c.ID
		}
		for i, ok := range idx.Matching(ids, f, now) {
			if ok && len(out) < limit {
				out = append(out, chunk[i])
			}
		}
	}
	return out
}

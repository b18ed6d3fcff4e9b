package boltstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"sync"

	bolt "go.etcd.io/bbolt"

	"github.com/ai-memory/ai-memory/internal/engine/index"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// Vectors live beside the records (bucket vectors: id → model, the hash of
// the text embedded, float32s), written only while the record still has
// the text that was embedded, and removed in the transaction that removes
// the record or changes its title or content. So a stored vector is
// always of the record's current text; a record without one (new, edited,
// or embedded by another model) is what a reindex fills in. A copy lives
// in memory for brute-force cosine search (vectorSet).

var bucketVectors = []byte("vectors")

// EmbedText is what is embedded for a memory (spec §1.4).
func EmbedText(m *aimemoryv1.Memory) string { return m.GetTitle() + " " + m.GetContent() }

func textHash(m *aimemoryv1.Memory) uint64 {
	h := fnv.New64a()
	h.Write([]byte(EmbedText(m)))
	return h.Sum64()
}

type vecEntry struct {
	model string
	hash  uint64
	v     []float32 // unit length
}

func encodeVector(e *vecEntry) []byte {
	b := binary.AppendUvarint(nil, uint64(len(e.model)))
	b = append(b, e.model...)
	b = binary.BigEndian.AppendUint64(b, e.hash)
	b = binary.AppendUvarint(b, uint64(len(e.v)))
	for _, x := range e.v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

func decodeVector(b []byte) (*vecEntry, error) {
	bad := errors.New("malformed vector")
	n, k := binary.Uvarint(b)
	if k <= 0 || uint64(len(b)-k) < n {
		return nil, bad
	}
	e := &vecEntry{model: string(b[k : k+int(n)])}
	b = b[k+int(n):]
	if len(b) < 8 {
		return nil, bad
	}
	e.hash, b = binary.BigEndian.Uint64(b), b[8:]
	dim, k := binary.Uvarint(b)
	if k <= 0 || uint64(len(b)-k) != 4*dim {
		return nil, bad
	}
	b = b[k:]
	e.v = make([]float32, dim)
	for i := range e.v {
		e.v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return e, nil
}

func normalize(v []float32) []float32 {
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

// vectorSet is the in-memory copy: entries in a slice for scanning, and
// their positions by id.
type vectorSet struct {
	mu  sync.RWMutex
	ids []string
	es  []*vecEntry
	pos map[string]int
}

func newVectorSet() *vectorSet { return &vectorSet{pos: map[string]int{}} }

func (s *vectorSet) set(id string, e *vecEntry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.pos[id]; ok {
		if e != nil {
			s.es[i] = e
			return
		}
		last := len(s.ids) - 1
		s.ids[i], s.es[i] = s.ids[last], s.es[last]
		s.pos[s.ids[i]] = i
		s.ids, s.es = s.ids[:last], s.es[:last]
		delete(s.pos, id)
		return
	}
	if e != nil {
		s.pos[id] = len(s.ids)
		s.ids = append(s.ids, id)
		s.es = append(s.es, e)
	}
}

// HasVector reports whether id has a vector by model.
func (s *Store) HasVector(id, model string) bool { return s.vecs.has(id, model) }

func (s *vectorSet) has(id, model string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	i, ok := s.pos[id]
	return ok && s.es[i].model == model
}

// loadVectors fills the in-memory set from the bucket.
func (s *Store) loadVectors() error {
	s.vecs = newVectorSet()
	return s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketVectors)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			e, err := decodeVector(v)
			if err != nil {
				return fmt.Errorf("vector %s: %w", k, err)
			}
			s.vecs.set(string(k), e)
			return nil
		})
	})
}

// dropVector removes id's vector in the write's transaction (the memory
// is going, or its text changed).
func (w *writeTx) dropVector(id string) error {
	b := w.tx.Bucket(bucketVectors)
	if b.Get([]byte(id)) == nil {
		return nil
	}
	w.vecChanges = append(w.vecChanges, vecChange{id: id})
	return b.Delete([]byte(id))
}

type vecChange struct {
	id string
	e  *vecEntry // nil: dropped
}

// PutVectors stores embeddings by model in one transaction, each only if
// its memory still has the text that was embedded (a later edit's own
// embedding will follow).
func (s *Store) PutVectors(ctx context.Context, model string, puts []storage.VectorPut) (stored int, err error) {
	es := make([]*vecEntry, len(puts))
	for i, p := range puts {
		if model == "" || len(p.Vector) == 0 || len(p.Vector) > 1<<16 {
			return 0, errors.New("vector: a model and 1 to 65536 dimensions")
		}
		h := fnv.New64a()
		h.Write([]byte(p.Text))
		es[i] = &vecEntry{model: model, v: normalize(p.Vector), hash: h.Sum64()}
	}
	err = s.write(ctx, func(w *writeTx) error {
		stored = 0
		b := w.tx.Bucket(bucketVectors)
		for i, p := range puts {
			m, err := w.get(p.ID)
			if err != nil {
				return err
			}
			if m == nil || textHash(m) != es[i].hash {
				continue
			}
			if err := b.Put([]byte(p.ID), encodeVector(es[i])); err != nil {
				return err
			}
			w.vecChanges = append(w.vecChanges, vecChange{id: p.ID, e: es[i]})
			stored++
		}
		return nil
	})
	return stored, err
}

// VectorStatus counts live memories, those with a vector by model, and
// vectors of other models (a model change: they need a reindex).
func (s *Store) VectorStatus(model string) (memories, current, other int) {
	ids := s.idx.IDs()
	s.vecs.mu.RLock()
	defer s.vecs.mu.RUnlock()
	for _, id := range ids {
		if i, ok := s.vecs.pos[id]; ok {
			if s.vecs.es[i].model == model {
				current++
			} else {
				other++
			}
		}
	}
	return len(ids), current, other
}

// MissingVectors lists up to limit memories (by id order) with no vector
// by model, after the id after (a reindex's resume point).
func (s *Store) MissingVectors(ctx context.Context, model, after string, limit int) ([]*aimemoryv1.Memory, error) {
	ids := s.idx.IDs()
	slices.Sort(ids)
	var hits []index.Hit
	for _, id := range ids {
		if id <= after || s.vecs.has(id, model) {
			continue
		}
		hits = append(hits, index.Hit{ID: id})
		if len(hits) == limit {
			break
		}
	}
	return s.records(hits)
}

// dot is the dot product, four lanes at a time (the scan's whole cost).
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}

// nearest is the limit live memories matching f whose vectors by model are
// closest to q (cosine), best first, with cosine at least minCos.
func (s *Store) nearest(f *index.Filter, q []float32, model string, limit int, minCos float64) []index.Hit {
	q = normalize(q)
	type scored struct {
		id  string
		cos float64
	}
	var all []scored
	s.vecs.mu.RLock()
	for i, e := range s.vecs.es {
		if e.model != model || len(e.v) != len(q) {
			continue
		}
		if d := float64(dot(e.v, q)); d >= minCos {
			all = append(all, scored{s.vecs.ids[i], d})
		}
	}
	s.vecs.mu.RUnlock()
	slices.SortFunc(all, func(a, b scored) int {
		switch {
		case a.cos > b.cos:
			return -1
		case a.cos < b.cos:
			return 1
		}
		return 0
	})
	now := s.nowNanos()
	var out []index.Hit
	for start := 0; start < len(all) && len(out) < limit; start += 4 * limit {
		chunk := all[start:min(len(all), start+4*limit)]
		ids := make([]string, len(chunk))
		for i, c := range chunk {
			ids[i] = c.id
		}
		for i, ok := range s.idx.Matching(ids, f, now) {
			if ok && len(out) < limit {
				out = append(out, index.Hit{ID: chunk[i].id, Score: chunk[i].cos})
			}
		}
	}
	return out
}

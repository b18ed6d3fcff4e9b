package boltstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	bolt "go.etcd.io/bbolt"

	"github.com/ai-memory/ai-memory/internal/engine/index"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/vecset"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Vectors live beside the records (bucket vectors: id → vecset.Entry's
// Encode: model, the hash of the text embedded, 8-bit components), written only while the record still has
// the text that was embedded, and removed in the transaction that removes
// the record or changes its title or content. So a stored vector is
// always of the record's current text; a record without one (new, edited,
// or embedded by another model) is what a reindex fills in. A copy lives
// in memory for brute-force cosine search (vecset.Set).

var bucketVectors = []byte("vectors")

// EmbedText is what is embedded for a memory (spec §1.4).
func EmbedText(m *aimemoryv1.Memory) string { return vecset.EmbedText(m) }

func textHash(m *aimemoryv1.Memory) uint64 { return vecset.TextHash(m) }

// decodeVectorV5 reads schema 5's float32 value (model, hash, float32s),
// for migrateVectorsTo8Bit.
func decodeVectorV5(b []byte) (*vecset.Entry, error) {
	bad := errors.New("malformed vector")
	n, k := binary.Uvarint(b)
	if k <= 0 || uint64(len(b)-k) < n {
		return nil, bad
	}
	model := string(b[k : k+int(n)])
	b = b[k+int(n):]
	if len(b) < 8 {
		return nil, bad
	}
	hash, b := binary.BigEndian.Uint64(b), b[8:]
	dim, k := binary.Uvarint(b)
	if k <= 0 || uint64(len(b)-k) != 4*dim {
		return nil, bad
	}
	b = b[k:]
	v := make([]float32, dim)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	scale, q := vecset.Quantize(v)
	return &vecset.Entry{Model: model, Hash: hash, Scale: scale, Q: q}, nil
}

// HasVector reports whether id has a vector by model.
func (s *Store) HasVector(id, model string) bool { return s.vecs.Has(id, model) }

// loadVectors fills the in-memory set from the bucket.
func (s *Store) loadVectors() error {
	s.vecs = vecset.New()
	return s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketVectors)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			e, err := vecset.Decode(v)
			if err != nil {
				return fmt.Errorf("vector %s: %w", k, err)
			}
			s.vecs.Put(string(k), e)
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
	e  *vecset.Entry // nil: dropped
}

// PutVectors stores embeddings by model in one transaction, each only if
// its memory still has the text that was embedded (a later edit's own
// embedding will follow).
func (s *Store) PutVectors(ctx context.Context, model string, puts []storage.VectorPut) (stored int, err error) {
	es, err := vecset.Entries(model, puts)
	if err != nil {
		return 0, err
	}
	err = s.write(ctx, func(w *writeTx) error {
		stored = 0
		b := w.tx.Bucket(bucketVectors)
		for i, p := range puts {
			m, err := w.get(p.ID)
			if err != nil {
				return err
			}
			if m == nil || textHash(m) != es[i].Hash {
				continue
			}
			if err := b.Put([]byte(p.ID), es[i].Encode()); err != nil {
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
	current, other = s.vecs.Status(ids, model)
	return len(ids), current, other
}

// MissingVectors lists up to limit memories (by id order) with no vector
// by model, after the id after (a reindex's resume point).
func (s *Store) MissingVectors(ctx context.Context, model, after string, limit int) ([]*aimemoryv1.Memory, error) {
	return s.records(s.vecs.Missing(s.idx.IDs(), model, after, limit))
}

// nearest is the limit live memories matching f whose vectors by model are
// closest to q (cosine), best first, with cosine at least minCos.
func (s *Store) nearest(f *index.Filter, q []float32, model string, limit int, minCos float64) []index.Hit {
	return s.vecs.Nearest(s.idx, f, q, model, limit, minCos, s.nowNanos())
}

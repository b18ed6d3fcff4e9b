package boltstore

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	"github.com/ai-memory/ai-memory/internal/engine/storage/vecset"
)

// vectorDims is a common small embedding size (all-MiniLM-L6-v2).
const vectorDims = 384

func randomVector(r *rand.Rand) []float32 {
	v := make([]float32, vectorDims)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// withVectors gives every memory of the n-memory bench store a random
// vector by model "bench", thousands per transaction (setup).
func withVectors(b *testing.B, n int) *Store {
	s := benchStore(b, n)
	if s.HasVector(s.idx.IDs()[0], "bench") {
		return s
	}
	r := rand.New(rand.NewPCG(1, 2))
	ids := s.idx.IDs()
	for start := 0; start < len(ids); start += 5000 {
		err := s.write(storagetest.Operator(), func(w *writeTx) error {
			for _, id := range ids[start:min(len(ids), start+5000)] {
				m, err := w.get(id)
				if err != nil || m == nil {
					return err
				}
				scale, q := vecset.Quantize(randomVector(r))
				e := &vecset.Entry{Model: "bench", Hash: textHash(m), Scale: scale, Q: q}
				w.vecChanges = append(w.vecChanges, vecChange{id: id, e: e})
				if err := w.tx.Bucket(bucketVectors).Put([]byte(id), e.Encode()); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	return s
}

// Hybrid recall: keyword candidates plus a brute-force cosine scan of
// every vector, fused (the query's embedding is given: the endpoint's own
// time is not the engine's).
func benchHybrid(b *testing.B, n int) {
	s := withVectors(b, n)
	r := rand.New(rand.NewPCG(3, 4))
	benchSearch(b, n, recallReq, func() *storage.Hybrid {
		return &storage.Hybrid{Vector: randomVector(r), Model: "bench", MinSimilarity: -1}
	})
	_ = s
}

func BenchmarkHybridRecall10k(b *testing.B)  { benchHybrid(b, 10_000) }
func BenchmarkHybridRecall100k(b *testing.B) { benchHybrid(b, 100_000) }

// TestVectorMigrationTo8Bit: a schema 5 float32 vector reads back 8-bit,
// within the rounding, with its model and hash.
func TestVectorMigrationTo8Bit(t *testing.T) {
	v5 := []byte{1, 'm', 0, 0, 0, 0, 0, 0, 0, 42, 2}
	for _, x := range []float32{0.6, -0.8} {
		v5 = binary.LittleEndian.AppendUint32(v5, math.Float32bits(x))
	}
	e, err := decodeVectorV5(v5)
	if err != nil || e.Model != "m" || e.Hash != 42 || fmt.Sprintf("%.2f", e.Vector()) != "[0.60 -0.80]" {
		t.Fatalf("%+v %v", e, err)
	}
	if _, err := decodeVectorV5(v5[:5]); err == nil {
		t.Fatal("a cut vector decoded")
	}
}

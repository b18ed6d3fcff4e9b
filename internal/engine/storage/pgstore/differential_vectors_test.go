package pgstore

import (
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	"github.com/ai-memory/ai-memory/internal/engine/storage/vecset"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// vectorDims is small, so that random queries land near stored vectors.
const vectorDims = 3

var vectorModels = []string{"m1", "m2"}

func (d *differ) vector() []float32 {
	v := make([]float32, vectorDims)
	for i := range v {
		v[i] = float32(d.rng.NormFloat64())
	}
	return v
}

// vectorOp is one of the vector operations: put (of the memory's text, or
// one in eight of a stale one), nearest, hybrid search, status and missing.
func (d *differ) vectorOp(which func(storage.Backend) int) (string, func(storage.Backend) answer) {
	ctx := storagetest.Operator()
	model := vectorModels[d.rng.IntN(len(vectorModels))]
	switch r := d.rng.IntN(10); {
	case r < 4:
		labels := []string{d.label(), d.label()}
		vs := [][]float32{d.vector(), d.vector()}
		stale := d.rng.IntN(8) == 0
		return fmt.Sprintf("put vectors %v by %s (stale %v)", labels, model, stale), func(s storage.Backend) answer {
			var puts []storage.VectorPut
			for i, l := range labels {
				id := d.idOf(which(s), l)
				p := storage.VectorPut{ID: id, Text: "stale text", Vector: vs[i]}
				if g, err := s.GetMemories(ctx, &aimemoryv1.GetMemoriesRequest{Ids: []string{id}}); err == nil && len(g.GetMemories()) == 1 && !stale {
					p.Text = vecset.EmbedText(g.GetMemories()[0])
				}
				puts = append(puts, p)
			}
			n, err := s.PutVectors(ctx, model, puts)
			has := []bool{s.HasVector(puts[0].ID, model), s.HasVector(puts[1].ID, model)}
			return answer{msg: wrapperspb.String(fmt.Sprintf("stored %d, has %v", n, has)), err: err}
		}
	case r < 6:
		f := &aimemoryv1.Filter{}
		if d.rng.IntN(2) == 0 {
			f.Namespace = namespaces[1+d.rng.IntN(len(namespaces)-1)]
		}
		q, limit := d.vector(), 1+d.rng.IntN(8)
		return fmt.Sprintf("nearest %v by %s in %v limit %d", q, model, f, limit), func(s storage.Backend) answer {
			near, err := s.Nearest(ctx, f, q, model, limit)
			return answer{msg: &aimemoryv1.SearchMemoriesResponse{Results: near}, err: err}
		}
	case r < 8:
		text, q := d.text(3), d.vector()
		limit := uint32(1 + d.rng.IntN(10))
		return fmt.Sprintf("hybrid %q %v by %s limit %d", text, q, model, limit), func(s storage.Backend) answer {
			r, err := s.SearchMemories(ctx, &aimemoryv1.SearchMemoriesRequest{Query: text, Match: aimemoryv1.MatchMode_MATCH_MODE_ANY,
				Limit: limit}, &storage.Hybrid{Vector: q, Model: model})
			return answer{msg: r, err: err}
		}
	default:
		return fmt.Sprintf("vector status and missing by %s", model), func(s storage.Backend) answer {
			mem, cur, other := s.VectorStatus(model)
			missing, err := s.MissingVectors(ctx, model, "", 1000)
			// Missing is in id order, which differs between backends: the
			// labels are compared as a set.
			labels := make([]string, 0, len(missing))
			for _, m := range missing {
				labels = append(labels, d.names[which(s)][m.GetId()])
			}
			slices.Sort(labels)
			return answer{msg: wrapperspb.String(fmt.Sprintf("status %d %d %d, missing %v", mem, cur, other, labels)), err: err}
		}
	}
}

// exportOp exports everything. Records come in id order, which differs
// between backends (ids are random): each is rendered with its ids
// renamed, and the renderings compared sorted.
func (d *differ) exportOp() (string, func(storage.Backend) answer) {
	return "export", func(s storage.Backend) answer {
		b := 0
		if _, ok := storage.As[*Store](s); ok {
			b = 1
		}
		var lines []string
		err := s.Export(storagetest.Operator(), func(r *aimemoryv1.ExportRecord) error {
			lines = append(lines, d.normalize(b, answer{msg: r}))
			return nil
		})
		slices.Sort(lines)
		return answer{msg: wrapperspb.String(strings.Join(lines, "\n")), err: err}
	}
}

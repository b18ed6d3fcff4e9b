package pgstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/boltstore"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// TestDifferential applies one random sequence of operations to bbolt and
// to PostgreSQL, on one clock, and requires identical answers: records,
// outcomes, errors, and search and list results in the same order with the
// same scores. Ids are random per backend, so each is renamed to the
// order of its creation before comparing. AI_MEMORY_DIFF_SEED replays a
// sequence; AI_MEMORY_DIFF_OPS sets its length.
func TestDifferential(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("AI_MEMORY_DIFF_SEED"); v != "" {
		seed, _ = strconv.ParseUint(v, 10, 64)
	}
	ops := 400
	if v := os.Getenv("AI_MEMORY_DIFF_OPS"); v != "" {
		ops, _ = strconv.Atoi(v)
	}
	t.Logf("seed %d (AI_MEMORY_DIFF_SEED=%d replays it), %d operations", seed, seed, ops)
	clk := storagetest.NewClock()
	opts := storage.Options{Now: clk.Now}
	bolt, err := boltstore.Open(context.Background(), filepath.Join(t.TempDir(), "memory.db"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bolt.Close() })
	pg := open(t, opts)
	d := &differ{t: t, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), names: [2]map[string]string{{}, {}}, now: clk.Now}
	backends := [2]storage.Backend{bolt, pg}

	for i := range ops {
		op, call := d.randomOp()
		var got [2]string
		for b, s := range backends {
			got[b] = d.normalize(b, call(s))
		}
		if got[0] != got[1] {
			t.Fatalf("op %d %s (seed %d): bbolt and postgres differ\nbbolt:    %s\npostgres: %s", i, op, seed, got[0], got[1])
		}
		clk.Add(time.Duration(1+d.rng.IntN(5)) * time.Millisecond)
		if d.rng.IntN(40) == 0 {
			clk.Add(7 * time.Hour) // short memories expire
		}
	}
	t.Logf("%d memories created, %d searches ranked several results", d.made, d.ranked)
	for _, s := range backends {
		if err := s.(storagetest.Checker).CheckConsistency(context.Background()); err != nil {
			t.Error(err)
		}
	}
}

type differ struct {
	t     *testing.T
	rng   *rand.Rand
	names [2]map[string]string // per backend: id → "m<n>", in creation order
	made  int                  // memories created (the same on both, or the test has failed)
	// ranked counts the searches that returned more than one result, so
	// the log shows the orders compared were orders.
	ranked int
	now    func() time.Time // the backends' clock
}

// answer is one backend's reply to one operation.
type answer struct {
	msg proto.Message
	err error
}

var (
	words      = strings.Fields("lock zebra deploy database index rust go postgres cache queue retry timeout token graph merge the of and")
	namespaces = []string{"", "proj", "proj/sub", "other"}
	tiers      = []string{"", "short", "mid", "long"}
)

func (d *differ) text(n int) string {
	ws := make([]string, 1+d.rng.IntN(n))
	for i := range ws {
		ws[i] = words[d.rng.IntN(len(words))]
	}
	return strings.Join(ws, " ")
}

// id is a known memory's label; one in ten is an id no memory has.
func (d *differ) label() string {
	if d.made == 0 || d.rng.IntN(10) == 0 {
		return "unknown"
	}
	return "m" + strconv.Itoa(d.rng.IntN(d.made))
}

// idOf is label's id on backend b.
func (d *differ) idOf(b int, label string) string {
	for id, l := range d.names[b] {
		if l == label {
			return id
		}
	}
	return "no-such-id-" + label
}

func (d *differ) randomOp() (string, func(storage.Backend) answer) {
	ctx := context.Background()
	which := func(s storage.Backend) int { // the backend's index, for id lookups
		if _, ok := s.(*boltstore.Store); ok {
			return 0
		}
		return 1
	}
	if d.rng.IntN(6) == 0 {
		return d.eventOp() // differential_events_test.go
	}
	switch r := d.rng.IntN(100); {
	case r < 35:
		m := &aimemoryv1.Memory{
			Title:      d.text(2),
			Content:    d.text(12),
			Namespace:  namespaces[d.rng.IntN(len(namespaces))],
			Tier:       tiers[d.rng.IntN(len(tiers))],
			Priority:   int32(1 + d.rng.IntN(10)),
			Confidence: float64(1+d.rng.IntN(10)) / 10,
		}
		if d.rng.IntN(3) == 0 {
			m.Tags = []string{words[d.rng.IntN(len(words))]}
		}
		policy := aimemoryv1.ConflictPolicy(d.rng.IntN(4))
		return fmt.Sprintf("store %q in %q (%v)", m.Title, m.Namespace, policy), func(s storage.Backend) answer {
			r, err := s.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: proto.Clone(m).(*aimemoryv1.Memory), OnConflict: policy})
			if err == nil && r.Outcome == aimemoryv1.StoreOutcome_STORE_OUTCOME_CREATED {
				bi := which(s)
				d.names[bi][r.Memory.Id] = "m" + strconv.Itoa(len(d.names[bi]))
				if bi == 1 {
					d.made = len(d.names[1])
				}
			}
			return answer{r, err}
		}
	case r < 50:
		q, all := d.text(3), d.rng.IntN(2) == 0
		match := aimemoryv1.MatchMode_MATCH_MODE_ANY
		if all {
			match = aimemoryv1.MatchMode_MATCH_MODE_ALL
		}
		limit := uint32(1 + d.rng.IntN(10))
		return fmt.Sprintf("search %q %v limit %d", q, match, limit), func(s storage.Backend) answer {
			r, err := s.SearchMemories(ctx, &aimemoryv1.SearchMemoriesRequest{Query: q, Match: match, Limit: limit})
			if which(s) == 1 && len(r.GetResults()) > 1 {
				d.ranked++
			}
			return answer{r, err}
		}
	case r < 58:
		f := &aimemoryv1.Filter{}
		if d.rng.IntN(2) == 0 {
			f.Namespace = namespaces[1+d.rng.IntN(len(namespaces)-1)]
		}
		limit := uint32(1 + d.rng.IntN(20))
		return fmt.Sprintf("list %v limit %d", f, limit), func(s storage.Backend) answer {
			r, err := s.ListMemories(ctx, &aimemoryv1.ListMemoriesRequest{Filter: f, Limit: limit})
			return answer{r, err}
		}
	case r < 70:
		label := d.label()
		req := &aimemoryv1.UpdateMemoryRequest{}
		switch d.rng.IntN(3) {
		case 0:
			c := d.text(8)
			req.Content = &c
		case 1:
			ti := d.text(2)
			req.Title = &ti
		default:
			tier := tiers[1+d.rng.IntN(len(tiers)-1)]
			req.Tier = &tier
		}
		return fmt.Sprintf("update %s %v", label, req), func(s storage.Backend) answer {
			r := proto.Clone(req).(*aimemoryv1.UpdateMemoryRequest)
			r.Id = d.idOf(which(s), label)
			resp, err := s.UpdateMemory(ctx, r)
			return answer{resp, err}
		}
	case r < 78:
		labels := []string{d.label(), d.label()}
		return fmt.Sprintf("touch %v", labels), func(s storage.Backend) answer {
			ids := []string{d.idOf(which(s), labels[0]), d.idOf(which(s), labels[1])}
			r, err := s.TouchMemories(ctx, &aimemoryv1.TouchMemoriesRequest{Ids: ids})
			return answer{r, err}
		}
	case r < 84:
		label, archive := d.label(), d.rng.IntN(2) == 0
		return fmt.Sprintf("delete %s archive %v", label, archive), func(s storage.Backend) answer {
			r, err := s.DeleteMemories(ctx, &aimemoryv1.DeleteMemoriesRequest{Ids: []string{d.idOf(which(s), label)}, Archive: archive})
			return answer{r, err}
		}
	case r < 87:
		archive := d.rng.IntN(2) == 0
		return fmt.Sprintf("gc archive %v", archive), func(s storage.Backend) answer {
			r, err := s.CollectGarbage(ctx, &aimemoryv1.CollectGarbageRequest{Archive: archive})
			return answer{r, err}
		}
	case r < 90:
		labels := []string{d.label(), d.label()}
		return fmt.Sprintf("get archived %v", labels), func(s storage.Backend) answer {
			r, err := s.GetArchived(ctx, &aimemoryv1.GetArchivedRequest{Ids: []string{d.idOf(which(s), labels[0]), d.idOf(which(s), labels[1])}, IncludeVersions: true})
			return answer{r, err}
		}
	case r < 92:
		labels := []string{d.label(), d.label()}
		return fmt.Sprintf("get %v", labels), func(s storage.Backend) answer {
			r, err := s.GetMemories(ctx, &aimemoryv1.GetMemoriesRequest{Ids: []string{d.idOf(which(s), labels[0]), d.idOf(which(s), labels[1])}})
			return answer{r, err}
		}
	case r < 96:
		return "stats", func(s storage.Backend) answer {
			r, err := s.Stats(ctx)
			if r != nil {
				// A file's size and a database's are not comparable, nor
				// archive rows in two formats.
				r.DbSizeBytes, r.ArchiveSizeBytes = 0, 0
			}
			return answer{r, err}
		}
	default:
		text := d.text(6)
		return fmt.Sprintf("term stats %q", text), func(s storage.Backend) answer {
			r, err := s.TermStats(ctx, &aimemoryv1.TermStatsRequest{Text: text, Tags: true})
			return answer{r, err}
		}
	}
}

// normalize renders an answer with each id replaced by its label.
func (d *differ) normalize(b int, a answer) string {
	var out string
	if a.msg != nil {
		out = prototext.MarshalOptions{}.Format(a.msg)
	}
	if a.err != nil {
		out += " error: " + a.err.Error()
	}
	for id, label := range d.names[b] {
		out = strings.ReplaceAll(out, id, label)
	}
	return out
}

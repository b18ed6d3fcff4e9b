package pgstore

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/audit"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/boltstore"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
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
	ops := 1500
	if v := os.Getenv("AI_MEMORY_DIFF_OPS"); v != "" {
		ops, _ = strconv.Atoi(v)
	}
	t.Logf("seed %d (AI_MEMORY_DIFF_SEED=%d replays it), %d operations", seed, seed, ops)
	clk := storagetest.NewClock()
	opts := storage.Options{Now: clk.Now, Governance: diffGovernance, Audit: audit.Ephemeral()} // one key: the same hashes
	bolt, err := boltstore.Open(storagetest.Operator(), filepath.Join(t.TempDir(), "memory.db"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bolt.Close() })
	pg := open(t, opts)
	d := &differ{t: t, clk: clk, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), names: [2]map[string]string{{}, {}}, did: map[string]int{}, now: clk.Now}
	backends := [2]storage.Backend{records.New(bolt), records.New(pg)}

	for i := range ops {
		op, call := d.randomOp()
		var got [2]string
		for b, s := range backends {
			a := call(s)
			d.notePending(b, a.err)
			got[b] = d.normalize(b, a)
		}
		if got[0] != got[1] {
			t.Fatalf("op %d %s (seed %d): bbolt and postgres differ\nbbolt:    %s\npostgres: %s", i, op, seed, got[0], got[1])
		}
		clk.Add(time.Duration(1+d.rng.IntN(5)) * time.Millisecond)
		if d.rng.IntN(40) == 0 {
			clk.Add(7 * time.Hour) // short memories expire
		}
	}
	t.Logf("%d memories created, %d searches ranked several results, %d links created, %d link reads found links; lifecycle: %v; %d writes queued, %d approvals accepted, %d executed",
		d.made, d.ranked, d.linked, d.traversed, d.did, d.pends[1], d.votes, d.executed)
	for _, s := range backends {
		c, ok := storage.As[storagetest.Checker](s)
		if !ok {
			t.Fatalf("%T has no consistency check", s)
		}
		if err := c.CheckConsistency(storagetest.Operator()); err != nil {
			t.Error(err)
		}
	}
}

type differ struct {
	t     *testing.T
	clk   *storagetest.Clock
	rng   *rand.Rand
	names [2]map[string]string // per backend: id → "m<n>" (memories) or "p<n>" (pending actions), in creation order
	made  int                  // memories created (the same on both, or the test has failed)
	mems  [2]int               // per backend: memories named
	pends [2]int               // per backend: pending actions named
	// votes counts approvals accepted, executed those that ran their action.
	votes, executed int
	// ranked counts the searches that returned more than one result, so
	// the log shows the orders compared were orders.
	ranked int
	// did counts the lifecycle operations that changed or found something
	// (on postgres), so the log shows they were exercised, not refused.
	did map[string]int
	// linked and traversed count the links created and the link reads
	// that found some (on postgres), for the same reason.
	linked, traversed int
	ends              []string         // labels of linked memories, for reads and unlinks to pick
	now               func() time.Time // the backends' clock
}

// answer is one backend's reply to one operation.
type answer struct {
	msg  proto.Message
	err  error
	text string // already normalized (an answer whose order is not comparable)
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
	ctx := storagetest.Operator()
	which := func(s storage.Backend) int { // the backend's index, for id lookups
		if _, ok := storage.As[*boltstore.Store](s); ok {
			return 0
		}
		return 1
	}
	if d.rng.IntN(6) == 0 {
		return d.eventOp() // differential_events_test.go
	}
	if d.rng.IntN(8) == 0 {
		return d.vectorOp(which)
	}
	if d.rng.IntN(40) == 0 {
		return d.exportOp()
	}
	switch r := d.rng.IntN(185); {
	case r >= 160:
		return d.govOp(which)
	case r >= 130:
		return d.lifecycleOp(ctx, which)
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
		who, name := d.caller()
		return fmt.Sprintf("store %q in %q (%v) as %q", m.Title, m.Namespace, policy, name), func(s storage.Backend) answer {
			r, err := s.StoreMemory(who, &aimemoryv1.StoreMemoryRequest{Memory: proto.Clone(m).(*aimemoryv1.Memory), OnConflict: policy})
			if err == nil && r.Outcome == aimemoryv1.StoreOutcome_STORE_OUTCOME_CREATED {
				d.nameMemory(which(s), r.Memory.Id)
			}
			return answer{msg: r, err: err}
		}
	case r < 50:
		q, all := d.text(3), d.rng.IntN(2) == 0
		match := aimemoryv1.MatchMode_MATCH_MODE_ANY
		if all {
			match = aimemoryv1.MatchMode_MATCH_MODE_ALL
		}
		limit := uint32(1 + d.rng.IntN(10))
		return fmt.Sprintf("search %q %v limit %d", q, match, limit), func(s storage.Backend) answer {
			r, err := s.SearchMemories(ctx, &aimemoryv1.SearchMemoriesRequest{Query: q, Match: match, Limit: limit}, nil)
			if which(s) == 1 && len(r.GetResults()) > 1 {
				d.ranked++
			}
			return answer{msg: r, err: err}
		}
	case r < 58:
		f := &aimemoryv1.Filter{}
		if d.rng.IntN(2) == 0 {
			f.Namespace = namespaces[1+d.rng.IntN(len(namespaces)-1)]
		}
		limit, recent := uint32(1+d.rng.IntN(20)), d.rng.IntN(2) == 0
		return fmt.Sprintf("list %v limit %d recent %v", f, limit, recent), func(s storage.Backend) answer {
			r, err := s.ListMemories(ctx, &aimemoryv1.ListMemoriesRequest{Filter: f, Limit: limit, WithRecent: recent})
			return answer{msg: r, err: err}
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
		who, name := d.caller()
		return fmt.Sprintf("update %s %v as %q", label, req, name), func(s storage.Backend) answer {
			r := proto.Clone(req).(*aimemoryv1.UpdateMemoryRequest)
			r.Id = d.idOf(which(s), label)
			resp, err := s.UpdateMemory(who, r)
			return answer{msg: resp, err: err}
		}
	case r < 78:
		labels := []string{d.label(), d.label()}
		return fmt.Sprintf("touch %v", labels), func(s storage.Backend) answer {
			ids := []string{d.idOf(which(s), labels[0]), d.idOf(which(s), labels[1])}
			r, err := s.TouchMemories(ctx, &aimemoryv1.TouchMemoriesRequest{Ids: ids})
			return answer{msg: r, err: err}
		}
	case r < 84:
		label, archive := d.label(), d.rng.IntN(2) == 0
		who, name := d.caller()
		return fmt.Sprintf("delete %s archive %v as %q", label, archive, name), func(s storage.Backend) answer {
			r, err := s.DeleteMemories(who, &aimemoryv1.DeleteMemoriesRequest{Ids: []string{d.idOf(which(s), label)}, Archive: archive})
			return answer{msg: r, err: err}
		}
	case r < 87:
		archive := d.rng.IntN(2) == 0
		return fmt.Sprintf("gc archive %v", archive), func(s storage.Backend) answer {
			r, err := s.CollectGarbage(ctx, &aimemoryv1.CollectGarbageRequest{Archive: archive})
			if r != nil {
				// Both collect by expiry, then id: memories expiring at
				// once (touched together) come in the order of their
				// random ids, so compare them in label order.
				names := d.names[which(s)]
				slices.SortStableFunc(r.Collected, func(a, b string) int { return strings.Compare(names[a], names[b]) })
				slices.SortStableFunc(r.Memories, func(a, b *aimemoryv1.MemoryRef) int { return strings.Compare(names[a.Id], names[b.Id]) })
			}
			return answer{msg: r, err: err}
		}
	case r < 90:
		labels := []string{d.label(), d.label()}
		return fmt.Sprintf("get archived %v", labels), func(s storage.Backend) answer {
			r, err := s.GetArchived(ctx, &aimemoryv1.GetArchivedRequest{Ids: []string{d.idOf(which(s), labels[0]), d.idOf(which(s), labels[1])}, IncludeVersions: true})
			d.sortLinks(which(s), r.GetLinks(), nil)
			return answer{msg: r, err: err}
		}
	case r < 92:
		labels, links := []string{d.label(), d.label()}, d.rng.IntN(2) == 0
		return fmt.Sprintf("get %v links %v", labels, links), func(s storage.Backend) answer {
			r, err := s.GetMemories(ctx, &aimemoryv1.GetMemoriesRequest{Ids: []string{d.idOf(which(s), labels[0]), d.idOf(which(s), labels[1])}, IncludeLinks: links})
			d.sortLinks(which(s), r.GetLinks(), nil)
			return answer{msg: r, err: err}
		}
	case r < 96:
		return "stats", func(s storage.Backend) answer {
			r, err := s.Stats(ctx)
			if r != nil {
				// A file's size and a database's are not comparable, nor
				// archive rows in two formats.
				r.DbSizeBytes, r.ArchiveSizeBytes = 0, 0
			}
			return answer{msg: r, err: err}
		}
	case r < 100:
		text := d.text(6)
		return fmt.Sprintf("term stats %q", text), func(s storage.Backend) answer {
			r, err := s.TermStats(ctx, &aimemoryv1.TermStatsRequest{Text: text, Tags: true})
			return answer{msg: r, err: err}
		}
	}
	return d.graphOp(which)
}

// lifecycleOp is one of the archive lifecycle's operations: forget,
// promote, consolidate, restore, purge, and the archive's list and stats.
// Rows archived by one operation share their archived_at, and ids are
// random per backend, so lists whose order ties on archived_at are
// compared in label order (sortByLabel).
func (d *differ) lifecycleOp(ctx context.Context, which func(storage.Backend) int) (string, func(storage.Backend) answer) {
	switch r := d.rng.IntN(30); {
	case r < 6:
		req := &aimemoryv1.ForgetRequest{DryRun: d.rng.IntN(3) == 0}
		if d.rng.IntN(3) > 0 {
			req.Pattern = d.text(2)
		}
		if d.rng.IntN(2) == 0 {
			req.Namespace = namespaces[1+d.rng.IntN(len(namespaces)-1)]
		}
		if d.rng.IntN(3) == 0 {
			req.Tier = tiers[d.rng.IntN(len(tiers))]
		}
		return fmt.Sprintf("forget %v", req), func(s storage.Backend) answer {
			r, err := s.Forget(ctx, proto.Clone(req).(*aimemoryv1.ForgetRequest))
			d.count(s, "forget", r.GetMatched() > 0)
			return answer{msg: r, err: err}
		}
	case r < 10:
		label, to := d.label(), ""
		if d.rng.IntN(2) == 0 {
			to = namespaces[1+d.rng.IntN(len(namespaces)-1)]
			if to == "proj/sub" {
				to = "proj" // an ancestor of some
			}
		}
		return fmt.Sprintf("promote %s to %q", label, to), func(s storage.Backend) answer {
			r, err := s.PromoteMemory(ctx, &aimemoryv1.PromoteMemoryRequest{Id: d.idOf(which(s), label), ToNamespace: to})
			d.count(s, "promote", err == nil)
			if err == nil && !r.Merged && r.Memory.Id != d.idOf(which(s), label) {
				d.nameMemory(which(s), r.Memory.Id)
			}
			return answer{msg: r, err: err}
		}
	case r < 12:
		labels, title := []string{d.label(), d.label()}, d.text(2)
		return fmt.Sprintf("consolidate %v as %q", labels, title), func(s storage.Backend) answer {
			r, err := s.Consolidate(ctx, &aimemoryv1.ConsolidateRequest{
				Ids: []string{d.idOf(which(s), labels[0]), d.idOf(which(s), labels[1])}, Title: title, Summary: "summary of " + title})
			d.count(s, "consolidate", err == nil)
			if err == nil {
				d.nameMemory(which(s), r.Memory.Id)
			}
			return answer{msg: r, err: err}
		}
	case r < 20:
		label, merge, version := d.label(), d.rng.IntN(2) == 0, d.rng.IntN(3)-1 // -1: the archive row, else that version
		pick := -1                                                              // ≥ 0: the pick-th archived memory in label order instead
		if d.rng.IntN(3) > 0 {
			pick = d.rng.IntN(1 << 20)
		}
		return fmt.Sprintf("restore %s (pick %d) merge %v version %d", label, pick, merge, version), func(s storage.Backend) answer {
			id := d.idOf(which(s), label)
			if pick >= 0 {
				l, err := s.ListArchived(ctx, &aimemoryv1.ListArchivedRequest{Limit: 1000})
				if err != nil {
					return answer{msg: nil, err: err}
				}
				sortByLabel(d, which(s), l.Archived, func(a *aimemoryv1.ArchivedMemory) (int64, string) { return 0, a.Memory.Id })
				if len(l.Archived) > 0 && l.Total == uint32(len(l.Archived)) { // a whole list: the same set on both
					id = l.Archived[pick%len(l.Archived)].Memory.Id
				}
			}
			req := &aimemoryv1.RestoreMemoryRequest{Id: id, Merge: merge}
			if version >= 0 {
				h, err := s.GetArchived(ctx, &aimemoryv1.GetArchivedRequest{Ids: []string{id}, IncludeVersions: true})
				if err != nil {
					return answer{msg: nil, err: err}
				}
				req.VersionAt = 12345 // no such version
				if n := len(h.Versions); n > 0 {
					req.VersionAt = h.Versions[version%n].ArchivedAt
				}
			}
			r, err := s.RestoreMemory(ctx, req)
			d.count(s, fmt.Sprintf("restore(merged %v, version %v)", r.GetMerged(), req.VersionAt != 0), err == nil)
			return answer{msg: r, err: err}
		}
	case r < 24:
		req := &aimemoryv1.PurgeArchiveRequest{DryRun: d.rng.IntN(3) == 0}
		labels := []string{d.label(), d.label()}
		byIDs := d.rng.IntN(2) == 0
		if !byIDs {
			req.Before = d.clk.Now().Add(-time.Duration(d.rng.IntN(12)) * time.Hour).UnixNano()
		}
		return fmt.Sprintf("purge %v ids %v", req, labels), func(s storage.Backend) answer {
			r := proto.Clone(req).(*aimemoryv1.PurgeArchiveRequest)
			if byIDs {
				r.Ids = []string{d.idOf(which(s), labels[0]), d.idOf(which(s), labels[1])}
			}
			resp, err := s.PurgeArchive(ctx, r)
			d.count(s, "purge", resp.GetPurged()+resp.GetVersionsPurged() > 0)
			if resp != nil && resp.Purged > uint32(len(resp.Memories)) {
				resp.Memories = nil // which of rows tied on archived_at are reported depends on the ids
			}
			if resp != nil {
				sortByLabel(d, which(s), resp.Memories, func(m *aimemoryv1.MemoryRef) (int64, string) { return 0, m.Id })
			}
			return answer{msg: resp, err: err}
		}
	case r < 28:
		req := &aimemoryv1.ListArchivedRequest{Limit: 1000}
		if d.rng.IntN(2) == 0 {
			req.Namespace = namespaces[1+d.rng.IntN(len(namespaces)-1)]
		}
		if d.rng.IntN(2) == 0 {
			req.Reason = []string{storage.ArchiveReasonForget, storage.ArchiveReasonSuperseded, storage.ArchiveReasonDelete, "bogus"}[d.rng.IntN(4)]
		}
		return fmt.Sprintf("list archived %v", req), func(s storage.Backend) answer {
			r, err := s.ListArchived(ctx, req)
			d.count(s, "list archived", r.GetTotal() > 0)
			if r != nil && r.Total > uint32(len(r.Archived)) {
				r.Archived, r.Versions = nil, nil // as in purge: a cut through rows tied on archived_at
			}
			if r != nil {
				// Versions pair with rows: sort the pairs.
				type pair struct {
					a *aimemoryv1.ArchivedMemory
					n uint32
				}
				ps := make([]pair, len(r.Archived))
				for i := range r.Archived {
					ps[i] = pair{r.Archived[i], r.Versions[i]}
				}
				sortByLabel(d, which(s), ps, func(p pair) (int64, string) { return -p.a.ArchivedAt, p.a.Memory.Id })
				for i, p := range ps {
					r.Archived[i], r.Versions[i] = p.a, p.n
				}
			}
			return answer{msg: r, err: err}
		}
	default:
		return "archive stats", func(s storage.Backend) answer {
			r, err := s.ArchiveStats(ctx)
			if r != nil {
				r.SizeBytes = 0 // rows in two formats
			}
			return answer{msg: r, err: err}
		}
	}
}

// relations are the link relations the graph operations draw from: the
// default (""), the four known, and one that is refused.
var (
	relations = []string{"", "related_to", "supersedes", "contradicts", "derived_from", "likes"}
	entities  = []string{"Postgres", "Redis", "Zebra", "Straße"}
	aliases   = []string{"pg", "PG", "postgresql", "strasse", "zeb", "cache", " "}
)

// graphOp is a random link or entity operation.
func (d *differ) graphOp(which func(storage.Backend) int) (string, func(storage.Backend) answer) {
	ctx := storagetest.Operator()
	switch r := d.rng.IntN(30); {
	case r < 12:
		src, dst, rel := d.near(), d.near(), relations[d.rng.IntN(len(relations))]
		by := "ai:t"
		if d.rng.IntN(20) == 0 {
			by = ""
		}
		return fmt.Sprintf("link %s→%s %q by %q", src, dst, rel, by), func(s storage.Backend) answer {
			b := which(s)
			r, err := s.PutLink(storagetest.OperatorAs(by), &aimemoryv1.PutLinkRequest{SourceId: d.idOf(b, src), TargetId: d.idOf(b, dst), Relation: rel})
			if b == 1 && r.GetOutcome() == aimemoryv1.PutLinkOutcome_PUT_LINK_OUTCOME_CREATED {
				d.linked++
				d.ends = append(d.ends, src, dst)
			}
			return answer{msg: r, err: err}
		}
	case r < 17:
		src, dst, rel := d.near(), d.near(), relations[1+d.rng.IntN(len(relations)-1)]
		req := &aimemoryv1.InvalidateLinkRequest{Relation: rel}
		if d.rng.IntN(4) == 0 {
			req.ValidUntil = proto.Int64(1) // an end before any start
		}
		return fmt.Sprintf("unlink %s→%s %v", src, dst, req), func(s storage.Backend) answer {
			b := which(s)
			q := proto.Clone(req).(*aimemoryv1.InvalidateLinkRequest)
			q.SourceId, q.TargetId = d.idOf(b, src), d.idOf(b, dst)
			r, err := s.InvalidateLink(storagetest.OperatorAs("ai:u"), q)
			return answer{msg: r, err: err}
		}
	case r < 23:
		labels := []string{d.near()}
		for d.rng.IntN(2) == 0 && len(labels) < 4 {
			labels = append(labels, d.near())
		}
		req := &aimemoryv1.GetLinksRequest{
			Direction:       aimemoryv1.Direction(d.rng.IntN(4)),
			IncludeNodes:    d.rng.IntN(2) == 0,
			IncludeArchived: d.rng.IntN(2) == 0,
		}
		if d.rng.IntN(4) == 0 {
			req.Relation = relations[1+d.rng.IntN(len(relations)-1)]
		}
		return fmt.Sprintf("get links %v %v", labels, req), func(s storage.Backend) answer {
			b := which(s)
			q := proto.Clone(req).(*aimemoryv1.GetLinksRequest)
			for _, l := range labels {
				q.Ids = append(q.Ids, d.idOf(b, l))
			}
			r, err := s.GetLinks(ctx, q)
			if b == 1 && len(r.GetLinks()) > 0 {
				d.traversed++
			}
			d.sortLinks(b, r.GetLinks(), r.GetNodes())
			return answer{msg: r, err: err}
		}
	case r < 24:
		src := d.near()
		req := &aimemoryv1.TraverseRequest{
			MaxDepth: int32(1 + d.rng.IntN(4)), Direction: aimemoryv1.Direction(d.rng.IntN(4)), Limit: int32(1 + d.rng.IntN(8)),
		}
		if d.rng.IntN(4) == 0 {
			req.Relation = relations[1+d.rng.IntN(len(relations)-1)]
		}
		if d.rng.IntN(4) == 0 {
			req.ValidAt = d.now().UnixNano() - int64(d.rng.IntN(200))*int64(time.Millisecond)
		}
		return fmt.Sprintf("traverse %s %v", src, req), func(s storage.Backend) answer {
			q := proto.Clone(req).(*aimemoryv1.TraverseRequest)
			q.SourceId = d.idOf(which(s), src)
			r, err := s.Traverse(ctx, q)
			return answer{msg: r, err: err}
		}
	case r < 25:
		src, limit := d.near(), uint32(d.rng.IntN(4))
		return fmt.Sprintf("timeline %s limit %d", src, limit), func(s storage.Backend) answer {
			r, err := s.LinkTimeline(ctx, &aimemoryv1.LinkTimelineRequest{SourceId: d.idOf(which(s), src), Limit: limit})
			return answer{msg: r, err: err}
		}
	case r < 28:
		req := &aimemoryv1.RegisterEntityRequest{
			CanonicalName: entities[d.rng.IntN(len(entities))],
			Namespace:     namespaces[d.rng.IntN(len(namespaces))],
		}
		for d.rng.IntN(2) == 0 && len(req.Aliases) < 3 {
			req.Aliases = append(req.Aliases, aliases[d.rng.IntN(len(aliases))])
		}
		return fmt.Sprintf("register %v", req), func(s storage.Backend) answer {
			r, err := s.RegisterEntity(storagetest.OperatorAs("ai:reg"), proto.Clone(req).(*aimemoryv1.RegisterEntityRequest))
			if err == nil && r.Created {
				d.nameMemory(which(s), r.Entity.Id)
			}
			return answer{msg: r, err: err}
		}
	default:
		alias, ns := aliases[d.rng.IntN(len(aliases))], ""
		if d.rng.IntN(2) == 0 {
			ns = namespaces[1+d.rng.IntN(len(namespaces)-1)]
		}
		return fmt.Sprintf("entity %q in %q", alias, ns), func(s storage.Backend) answer {
			r, err := s.GetEntityByAlias(ctx, &aimemoryv1.GetEntityByAliasRequest{Alias: alias, Namespace: ns})
			return answer{msg: r, err: err}
		}
	}
}

// count counts a lifecycle operation on postgres that did something.
func (d *differ) count(s storage.Backend, op string, did bool) {
	if _, ok := storage.As[*Store](s); ok && did {
		d.did[op]++
	}
}

// sortByLabel orders l by key's time, then by the label of its id on
// backend b: the order both backends agree on whatever their ids.
func sortByLabel[T any](d *differ, b int, l []T, key func(T) (int64, string)) {
	slices.SortStableFunc(l, func(x, y T) int {
		tx, ix := key(x)
		ty, iy := key(y)
		return cmp.Or(cmp.Compare(tx, ty), cmp.Compare(d.names[b][ix], d.names[b][iy]))
	})
}

// near is a label for a graph operation: mostly an end of a link made
// before or one of the dozen newest memories (so links meet and reads find
// them), one in ten unknown.
func (d *differ) near() string {
	if len(d.ends) > 0 && d.rng.IntN(2) == 0 {
		return d.ends[d.rng.IntN(len(d.ends))]
	}
	if d.made == 0 || d.rng.IntN(10) == 0 {
		return "unknown"
	}
	return "m" + strconv.Itoa(d.made-1-d.rng.IntN(min(d.made, 12)))
}

// sortLinks puts links and nodes in the order of their labels: a backend
// answers in id order, and ids differ between the two.
func (d *differ) sortLinks(b int, links []*aimemoryv1.Link, nodes []*aimemoryv1.NodeSummary) {
	name := func(id string) string { return d.names[b][id] }
	slices.SortStableFunc(links, func(x, y *aimemoryv1.Link) int {
		return cmp.Or(cmp.Compare(name(x.SourceId), name(y.SourceId)), cmp.Compare(name(x.TargetId), name(y.TargetId)), cmp.Compare(x.Relation, y.Relation))
	})
	slices.SortStableFunc(nodes, func(x, y *aimemoryv1.NodeSummary) int { return cmp.Compare(name(x.Id), name(y.Id)) })
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
	out += a.text
	for id, label := range d.names[b] {
		out = strings.ReplaceAll(out, id, label)
	}
	return out
}

package pgstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/pgstore/pgtest"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/seam"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	"github.com/ai-memory/ai-memory/internal/testwait"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// peers opens two stores (two engines) on one fresh database, on one clock.
func peers(t *testing.T) [2]*Store {
	t.Helper()
	dsn := pgtest.DSN(t)
	clk := storagetest.NewClock()
	var out [2]*Store
	for i := range out {
		s, err := Open(storagetest.Operator(), dsn, storage.Options{Now: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		out[i] = s
	}
	return out
}

func storeOK(t *testing.T, s *Store, title string) string {
	t.Helper()
	r, err := records.New(s).StoreMemory(storagetest.Operator(), &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: title, Content: "x", Confidence: 1}})
	if err != nil {
		t.Fatal(err)
	}
	return r.Memory.Id
}

// TestPeerGraphSeen: links and entities written through one engine are
// read by the other right after the write is acknowledged, and a delete
// through one takes the links the other wrote.
func TestPeerGraphSeen(t *testing.T) {
	ctx := storagetest.Operator()
	e := peers(t)
	a, b, c := storeOK(t, e[0], "a"), storeOK(t, e[1], "b"), storeOK(t, e[0], "c")
	for i, l := range [][2]string{{a, b}, {b, c}, {c, a}} {
		if _, err := records.New(e[i%2]).PutLink(ctx, &aimemoryv1.PutLinkRequest{SourceId: l[0], TargetId: l[1]}); err != nil {
			t.Fatal(err)
		}
		resp, err := records.New(e[1-i%2]).GetLinks(ctx, &aimemoryv1.GetLinksRequest{Ids: []string{l[0]}, Direction: aimemoryv1.Direction_DIRECTION_OUT})
		if err != nil || len(resp.Links) != 1 || resp.Links[0].TargetId != l[1] {
			t.Fatalf("the peer's read of link %d = %v, %v", i, resp, err)
		}
	}
	if _, err := records.New(e[0]).RegisterEntity(ctx, &aimemoryv1.RegisterEntityRequest{CanonicalName: "PostgreSQL", Namespace: "infra", Aliases: []string{"pg"}}); err != nil {
		t.Fatal(err)
	}
	if r, err := records.New(e[1]).GetEntityByAlias(ctx, &aimemoryv1.GetEntityByAliasRequest{Alias: "PG"}); err != nil || r.Entity == nil || r.Entity.CanonicalName != "PostgreSQL" {
		t.Fatalf("the peer's lookup = %v, %v", r, err)
	}
	if _, err := records.New(e[1]).DeleteMemories(ctx, &aimemoryv1.DeleteMemoriesRequest{Ids: []string{a}}); err != nil {
		t.Fatal(err)
	}
	if st, err := e[0].Stats(ctx); err != nil || st.Links != 1 {
		t.Fatalf("links after the peer's delete = %v, %v", st.GetLinks(), err)
	}
	for i, s := range e {
		if err := s.CheckConsistency(ctx); err != nil {
			t.Errorf("engine %d: %v", i, err)
		}
	}
}

// TestPeersRaceForAliases: two engines registering at once, with no lock
// between them. The same entity registered from both is created once and
// reused by every other call; rival entities claiming one alias leave it
// held by exactly one, the others refused with a conflict and written
// nothing.
func TestPeersRaceForAliases(t *testing.T) {
	ctx := storagetest.Operator()
	e := peers(t)
	const rounds = 12
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		created   = map[string]int{}
		ids       = map[string]bool{}
		conflicts int
	)
	for w := range 4 {
		wg.Go(func() {
			s := e[w%2]
			for i := range rounds {
				// The same entity from every writer, and a rival per writer
				// claiming the shared alias "hot i".
				names := []string{fmt.Sprint("shared ", i), fmt.Sprintf("rival %d of %d", w, i)}
				if w%2 == 1 {
					names[0], names[1] = names[1], names[0]
				}
				for _, name := range names {
					r, err := records.New(s).RegisterEntity(ctx, &aimemoryv1.RegisterEntityRequest{CanonicalName: name, Namespace: "ns", Aliases: []string{fmt.Sprint("HOT ", i)}})
					mu.Lock()
					switch {
					case errors.Is(err, storage.ErrConflict):
						conflicts++
					case err != nil:
						t.Errorf("writer %d register %q: %v", w, name, err)
					default:
						ids[r.Entity.Id] = true
						if r.Created {
							created[name]++
						}
					}
					mu.Unlock()
				}
			}
		})
	}
	testwait.Wait(t, &wg, "the entity writers")
	for i := range rounds {
		holders := 0
		for _, name := range append([]string{fmt.Sprint("shared ", i)}, "rival 0 of "+fmt.Sprint(i), "rival 1 of "+fmt.Sprint(i), "rival 2 of "+fmt.Sprint(i), "rival 3 of "+fmt.Sprint(i)) {
			if created[name] > 1 {
				t.Errorf("%q created %d times", name, created[name])
			}
			holders += created[name]
		}
		if holders != 1 {
			t.Errorf("round %d: %d entities hold alias 'hot %d', want 1", i, holders, i)
		}
	}
	var aliases, dup int
	if err := e[0].pool.QueryRow(ctx, `SELECT count(*), count(*) - count(DISTINCT (folded, namespace)) FROM entity_aliases WHERE folded LIKE 'hot %'`).Scan(&aliases, &dup); err != nil {
		t.Fatal(err)
	}
	if aliases != rounds || dup != 0 {
		t.Errorf("%d 'hot' alias rows (%d duplicates), want %d", aliases, dup, rounds)
	}
	t.Logf("%d entities, %d conflicts refused", len(ids), conflicts)
	for i, s := range e {
		if err := s.CheckConsistency(ctx); err != nil {
			t.Errorf("engine %d: %v", i, err)
		}
	}
}

// TestPeerLinkRacesDelete: one engine links to memories while the other
// deletes them. Every link call either succeeds, while the memory is
// there, or answers not found (a link insert racing the delete is a
// serialization failure under SERIALIZABLE, retried, not a foreign key
// error); no link outlives its memory.
func TestPeerLinkRacesDelete(t *testing.T) {
	ctx := storagetest.Operator()
	e := peers(t)
	hub := storeOK(t, e[0], "hub")
	const n = 40
	ids := make([]string, n)
	for i := range ids {
		ids[i] = storeOK(t, e[0], fmt.Sprint("leaf ", i))
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for _, id := range ids {
			for _, rel := range []string{"related_to", "supersedes", "contradicts"} {
				_, err := records.New(e[0]).PutLink(ctx, &aimemoryv1.PutLinkRequest{SourceId: hub, TargetId: id, Relation: rel})
				if err != nil && !errors.Is(err, storage.ErrNotFound) {
					t.Errorf("link to %s: %v", id, err)
				}
			}
		}
	})
	wg.Go(func() {
		for _, id := range ids {
			if _, err := records.New(e[1]).DeleteMemories(ctx, &aimemoryv1.DeleteMemoriesRequest{Ids: []string{id}}); err != nil {
				t.Errorf("delete %s: %v", id, err)
			}
		}
	})
	testwait.Wait(t, &wg, "the linker and the deleter")
	if st, err := e[0].Stats(ctx); err != nil || st.Links != 0 || st.Total != 1 {
		t.Fatalf("after the race: %d links, %d memories, %v; want 0, 1", st.GetLinks(), st.GetTotal(), err)
	}
	if err := e[0].CheckConsistency(ctx); err != nil {
		t.Error(err)
	}
}

// TestTraverseReadsOneSnapshot: every level of a walk reads the snapshot
// of its first read, as on bbolt; a link a peer commits between two levels
// is not walked (each level was a snapshot of its own before Traverse was
// written once above the seam).
func TestTraverseReadsOneSnapshot(t *testing.T) {
	ctx := storagetest.Operator()
	e := peers(t)
	a, b, c := storeOK(t, e[0], "a"), storeOK(t, e[0], "b"), storeOK(t, e[0], "c")
	if _, err := records.New(e[0]).PutLink(ctx, &aimemoryv1.PutLinkRequest{SourceId: a, TargetId: b}); err != nil {
		t.Fatal(err)
	}
	hooked := &afterFirstLinks{Store: e[0], then: func() error {
		_, err := records.New(e[1]).PutLink(ctx, &aimemoryv1.PutLinkRequest{SourceId: b, TargetId: c})
		return err
	}}
	walk := &aimemoryv1.TraverseRequest{SourceId: a, MaxDepth: 2, Limit: 10, Direction: aimemoryv1.Direction_DIRECTION_OUT}
	resp, err := records.New(hooked).Traverse(ctx, walk)
	if err != nil || hooked.then != nil || len(resp.Nodes) != 1 || resp.Nodes[0].Id != b {
		t.Fatalf("walk with b → c committed after its first level = %v, %v (hook ran: %v); want b only", resp, err, hooked.then == nil)
	}
	if resp, err = records.New(e[0]).Traverse(ctx, walk); err != nil || len(resp.Nodes) != 2 {
		t.Fatalf("the next walk = %v, %v; want b and c", resp, err)
	}
}

// afterFirstLinks is a Store whose read transactions run then (once)
// right after their first Links read.
type afterFirstLinks struct {
	*Store
	then func() error
}

func (s *afterFirstLinks) Read(ctx context.Context, fn func(seam.Tx) error) error {
	return s.Store.Read(ctx, func(t seam.Tx) error { return fn(linksHook{Tx: t, s: s}) })
}

type linksHook struct {
	seam.Tx
	s *afterFirstLinks
}

func (t linksHook) Links(ids []string, dir aimemoryv1.Direction, relation string, archived bool) (out, in map[string][]*aimemoryv1.Link, err error) {
	if out, in, err = t.Tx.Links(ids, dir, relation, archived); err != nil || t.s.then == nil {
		return out, in, err
	}
	then := t.s.then
	t.s.then = nil
	return out, in, then()
}

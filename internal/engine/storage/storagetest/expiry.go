package storagetest

import (
	"errors"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

func testExpiredHiddenFromListAndSearchVisibleToGetCollectedByGC(t *testing.T, o Opener) {
	ctx := Operator()
	s, clk := o.open(t, storage.Options{})
	short := Store(t, s, Mem("Short lived", "ephemeral fact", Tier("short")))
	mid := Store(t, s, Mem("Mid lived", "ephemeral other fact"))
	long := Store(t, s, Mem("Long lived", "ephemeral lasting fact", Tier("long")))
	start := clk.Now().UnixNano()
	if short.ExpiresAt != start+int64(6*time.Hour) || mid.ExpiresAt != start+int64(7*24*time.Hour) || long.ExpiresAt != 0 {
		t.Fatalf("expiries short %d mid %d long %d (now %d)", short.ExpiresAt, mid.ExpiresAt, long.ExpiresAt, start)
	}
	// A long memory given an expiry is collected like any other.
	longExp := Store(t, s, Mem("Long with expiry", "ephemeral", Tier("long")))
	if _, err := s.UpdateMemory(ctx, &aimemoryv1.UpdateMemoryRequest{Id: longExp.Id, ExpiresAt: proto.Int64(start + int64(time.Hour))}); err != nil {
		t.Fatal(err)
	}
	if exp, _ := s.HasExpired(ctx); exp {
		t.Fatal("HasExpired before anything expired")
	}
	if resp, _ := s.CollectGarbage(ctx, &aimemoryv1.CollectGarbageRequest{Archive: true}); len(resp.Collected) != 0 {
		t.Fatalf("GC collected %v before expiry", resp.Collected)
	}

	clk.Add(6*time.Hour + time.Second)
	list, err := s.ListMemories(ctx, &aimemoryv1.ListMemoriesRequest{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if got := memTitles(list.Memories); len(got) != 2 {
		t.Errorf("list shows %q, want the mid and long memories", got)
	}
	if got := TitlesOf(Search(t, s, &aimemoryv1.SearchMemoriesRequest{Query: "ephemeral"})); len(got) != 2 {
		t.Errorf("search shows %q, want the mid and long memories", got)
	}
	if get(t, s, short.Id) == nil {
		t.Error("get hides an expired-but-uncollected memory")
	}
	if exp, _ := s.HasExpired(ctx); !exp {
		t.Error("HasExpired = false with two expired memories")
	}

	resp, err := s.CollectGarbage(ctx, &aimemoryv1.CollectGarbageRequest{Archive: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Collected) != 2 {
		t.Fatalf("collected %v, want the short one and the long one with an expiry", resp.Collected)
	}
	if get(t, s, short.Id) != nil || get(t, s, longExp.Id) != nil {
		t.Error("collected memories still readable")
	}
	a, err := s.Archived(ctx, short.Id)
	if err != nil {
		t.Fatal(err)
	}
	if a.Reason != storage.ArchiveReasonTTL || a.OriginalTier != "short" || a.OriginalExpiresAt != short.ExpiresAt ||
		a.ArchivedAt != clk.Now().UnixNano() || a.Memory.Title != "Short lived" {
		t.Errorf("archive row = %+v", a)
	}
	if a, err := s.Archived(ctx, longExp.Id); err != nil || a.OriginalTier != "long" {
		t.Errorf("archive of long memory = %+v, %v", a, err)
	}
	if exp, _ := s.HasExpired(ctx); exp {
		t.Error("HasExpired after GC")
	}
	check(t, s)

	// GC without archive deletes only.
	clk.Add(7 * 24 * time.Hour)
	if resp, _ := s.CollectGarbage(ctx, &aimemoryv1.CollectGarbageRequest{}); len(resp.Collected) != 1 || resp.Collected[0] != mid.Id {
		t.Errorf("second GC collected %v", resp.Collected)
	}
	if _, err := s.Archived(ctx, mid.Id); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("archive of mid without archive flag: %v", err)
	}
	check(t, s)
	if st, _ := s.Stats(ctx); st.Total != 1 || st.Archived != 2 {
		t.Errorf("stats total %d archived %d", st.Total, st.Archived)
	}
}

func testTouch(t *testing.T, o Opener) {
	ctx := Operator()
	s, clk := o.open(t, storage.Options{})
	touch := func(id string) *aimemoryv1.Memory {
		t.Helper()
		resp, err := s.TouchMemories(ctx, &aimemoryv1.TouchMemoriesRequest{Ids: []string{id, "no-such-id"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Memories) != 1 {
			t.Fatalf("touch returned %d memories", len(resp.Memories))
		}
		return resp.Memories[0]
	}

	t.Run("never shortens expiry", func(t *testing.T) {
		m := Store(t, s, Mem("Fresh mid", "x"))
		got := touch(m.Id)
		if got.ExpiresAt != m.ExpiresAt {
			t.Errorf("touch moved a 7-day expiry to %v", time.Duration(got.ExpiresAt-m.ExpiresAt))
		}
		if got.AccessCount != 1 || got.LastAccessedAt != clk.Now().UnixNano() || got.UpdatedAt != m.UpdatedAt {
			t.Errorf("touched = %+v", got)
		}
	})
	t.Run("extends a short memory about to expire", func(t *testing.T) {
		m := Store(t, s, Mem("Short", "x", Tier("short")))
		clk.Add(5*time.Hour + 50*time.Minute)
		got := touch(m.Id)
		if want := clk.Now().Add(time.Hour).UnixNano(); got.ExpiresAt != want {
			t.Errorf("expiry after touch = %d, want now+1h = %d", got.ExpiresAt, want)
		}
	})
	t.Run("mid promotes to long at five accesses, short never", func(t *testing.T) {
		m := Store(t, s, Mem("Popular", "x"))
		sh := Store(t, s, Mem("Popular short", "x", Tier("short")))
		var got, gotShort *aimemoryv1.Memory
		for range 5 {
			clk.Add(time.Minute)
			got, gotShort = touch(m.Id), touch(sh.Id)
		}
		// A read is not an edit: updated_at (which feeds recency) stays.
		if got.Tier != "long" || got.ExpiresAt != 0 || got.UpdatedAt != m.UpdatedAt {
			t.Errorf("after 5 touches: tier %s expires %d updated %d (was %d)", got.Tier, got.ExpiresAt, got.UpdatedAt, m.UpdatedAt)
		}
		if gotShort.Tier != "short" || gotShort.ExpiresAt == 0 {
			t.Errorf("short memory promoted: %+v", gotShort)
		}
		check(t, s)
	})
	t.Run("priority never rises with access", func(t *testing.T) {
		m := Store(t, s, Mem("Hot", "x", Tier("long"), prio(9)))
		for i := 1; i <= 20; i++ {
			if got := touch(m.Id); got.Priority != 9 {
				t.Fatalf("after %d touches priority %d, want 9", i, got.Priority)
			}
		}
	})
}

func testCustomTTL(t *testing.T, o Opener) {
	s, clk := o.open(t, storage.Options{TTL: storage.TTL{Short: time.Minute, Mid: time.Hour, Long: 48 * time.Hour}})
	now := clk.Now().UnixNano()
	for tierName, want := range map[string]int64{"short": now + int64(time.Minute), "mid": now + int64(time.Hour), "long": now + int64(48*time.Hour)} {
		if m := Store(t, s, Mem("t "+tierName, "x", Tier(tierName))); m.ExpiresAt != want {
			t.Errorf("%s expires %d, want %d", tierName, m.ExpiresAt, want)
		}
	}
}

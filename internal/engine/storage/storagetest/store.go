package storagetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func testStoreDefaults(t *testing.T, o Opener) {
	s, clk := o.open(t, storage.Options{})
	m := Store(t, s, &aimemoryv1.Memory{
		Title: "t", Content: "c", Id: "caller-id", AccessCount: 7, CreatedAt: 1, ExpiresAt: 1,
	})
	now := clk.Now().UnixNano()
	want := &aimemoryv1.Memory{
		Id: m.Id, Tier: "mid", Namespace: "global", Title: "t", Content: "c", Priority: 5,
		Confidence: 0, Source: "claude", CreatedAt: now, UpdatedAt: now,
		ExpiresAt: now + int64(7*24*time.Hour), MetadataJson: []byte("{}"),
		CreatedBy: OperatorCaller.Principal, UpdatedBy: OperatorCaller.Principal,
	}
	if !uuidV4.MatchString(m.Id) {
		t.Errorf("id %q is not a lowercase UUID v4", m.Id)
	}
	if !proto.Equal(m, want) {
		t.Errorf("stored %v\nwant %v", m, want)
	}
	if got := get(t, s, m.Id); !proto.Equal(got, want) {
		t.Errorf("read back %v", got)
	}
}

func testStoreConflictPolicies(t *testing.T, o Opener) {
	ctx := Operator()
	s, clk := o.open(t, storage.Options{})
	orig := Store(t, s, Mem("Title", "first", InNS("ns"), Tier("long"), prio(3),
		Tags("a"), meta(`{"agent_id":"alice","k":1}`),
		func(m *aimemoryv1.Memory) { m.Source = "user"; m.Confidence = 0.9 }))

	t.Run("error", func(t *testing.T) {
		_, err := s.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{
			Memory: Mem("Title", "second", InNS("ns")), OnConflict: aimemoryv1.ConflictPolicy_CONFLICT_POLICY_ERROR,
		})
		want := fmt.Sprintf("CONFLICT: memory with title 'Title' already exists in namespace 'ns' (existing id: %s)", orig.Id)
		if !errors.Is(err, storage.ErrConflict) || err.Error() != want {
			t.Errorf("err = %v, want %s", err, want)
		}
		// Another namespace, or other bytes, is no conflict.
		Store(t, s, Mem("Title", "other ns", InNS("ns2")))
		Store(t, s, Mem("title", "other case", InNS("ns")))
	})

	t.Run("version", func(t *testing.T) {
		for _, want := range []string{"Title (2)", "Title (3)"} {
			resp, err := s.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{
				Memory: Mem("Title", "v", InNS("ns")), OnConflict: aimemoryv1.ConflictPolicy_CONFLICT_POLICY_VERSION,
			})
			if err != nil || resp.Memory.Title != want || resp.Outcome != aimemoryv1.StoreOutcome_STORE_OUTCOME_CREATED {
				t.Fatalf("version store = %v, %v; want title %q", resp, err, want)
			}
		}
		// A free title is stored as given.
		resp, err := s.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{
			Memory: Mem("Fresh", "v", InNS("ns")), OnConflict: aimemoryv1.ConflictPolicy_CONFLICT_POLICY_VERSION,
		})
		if err != nil || resp.Memory.Title != "Fresh" {
			t.Errorf("version of free title = %v, %v", resp, err)
		}
		// A title at the length limit has no room for a suffix.
		long := strings.Repeat("x", record.MaxTitleChars)
		Store(t, s, Mem(long, "v", InNS("ns")))
		_, err = s.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{
			Memory: Mem(long, "v", InNS("ns")), OnConflict: aimemoryv1.ConflictPolicy_CONFLICT_POLICY_VERSION,
		})
		var fe *record.FieldError
		if !errors.As(err, &fe) || fe.Field != "title" {
			t.Errorf("versioning a maximal title: %v", err)
		}
	})

	t.Run("merge", func(t *testing.T) {
		clk.Add(time.Hour)
		for _, policy := range []aimemoryv1.ConflictPolicy{aimemoryv1.ConflictPolicy_CONFLICT_POLICY_MERGE, aimemoryv1.ConflictPolicy_CONFLICT_POLICY_UNSPECIFIED} {
			resp, err := s.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{
				Memory: Mem("Title", "merged "+policy.String(), InNS("ns"), Tier("short"), prio(8), Tags("b", "c"),
					meta(`{"agent_id":"mallory","k":2}`), func(m *aimemoryv1.Memory) { m.Source = "api"; m.Confidence = 0.4 }),
				OnConflict: policy,
			})
			if err != nil {
				t.Fatal(err)
			}
			m := resp.Memory
			if resp.Outcome != aimemoryv1.StoreOutcome_STORE_OUTCOME_MERGED || m.Id != orig.Id || len(resp.PotentialContradictions) != 0 {
				t.Errorf("outcome %v id %s contradictions %v", resp.Outcome, m.Id, resp.PotentialContradictions)
			}
			if m.Content != "merged "+policy.String() || !reflect.DeepEqual(m.Tags, []string{"b", "c"}) || m.Priority != 8 || m.Confidence != 0.4 {
				t.Errorf("content/tags/priority/confidence not replaced: %v", m)
			}
			if m.Tier != "long" || m.ExpiresAt != 0 || m.Source != "user" || m.CreatedAt != orig.CreatedAt || m.UpdatedAt != clk.Now().UnixNano() {
				t.Errorf("tier/expiry/source/timestamps wrong: %v", m)
			}
			var md map[string]any
			json.Unmarshal(m.MetadataJson, &md)
			if md["agent_id"] != "alice" || md["k"] != 2.0 {
				t.Errorf("metadata = %s", m.MetadataJson)
			}
		}
	})

	t.Run("merge raises tier and refreshes expiry", func(t *testing.T) {
		short := Store(t, s, Mem("Up", "x", Tier("short")))
		clk.Add(time.Hour)
		m := Store(t, s, Mem("Up", "y", Tier("mid"), meta(`{"agent_id":"bob"}`)))
		if m.Id != short.Id || m.Tier != "mid" || m.ExpiresAt != clk.Now().Add(7*24*time.Hour).UnixNano() {
			t.Errorf("merged %v", m)
		}
		// No agent_id before: the new one is taken.
		if !strings.Contains(string(m.MetadataJson), "bob") {
			t.Errorf("metadata %s", m.MetadataJson)
		}
		m = Store(t, s, Mem("Up", "z", Tier("short")))
		if m.Tier != "mid" || m.ExpiresAt != clk.Now().Add(7*24*time.Hour).UnixNano() {
			t.Errorf("tier lowered or expiry not refreshed: %v", m)
		}
	})

	t.Run("expired but uncollected counts as existing", func(t *testing.T) {
		old := Store(t, s, Mem("Stale", "x", Tier("short")))
		clk.Add(7 * time.Hour)
		_, err := s.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: Mem("Stale", "y"), OnConflict: aimemoryv1.ConflictPolicy_CONFLICT_POLICY_ERROR})
		if !errors.Is(err, storage.ErrConflict) {
			t.Errorf("ERROR on expired duplicate: %v", err)
		}
		m := Store(t, s, Mem("Stale", "revived", Tier("short")))
		if m.Id != old.Id || m.ExpiresAt != clk.Now().Add(6*time.Hour).UnixNano() {
			t.Errorf("merge into expired row: %v", m)
		}
		if got := TitlesOf(Search(t, s, &aimemoryv1.SearchMemoriesRequest{Query: "revived"})); len(got) != 1 {
			t.Errorf("revived memory not live: %q", got)
		}
	})
	check(t, s)
}

func testPotentialContradictions(t *testing.T, o Opener) {
	s, clk := o.open(t, storage.Options{})
	a := Store(t, s, Mem("Database migrations", "x", InNS("p")))
	b := Store(t, s, Mem("Other", "run the migration tool", InNS("p"), Tier("short")))
	Store(t, s, Mem("Elsewhere", "migrations", InNS("q")))
	Store(t, s, Mem("Unrelated", "nothing here", InNS("p")))
	clk.Add(7 * time.Hour) // b expires: still counted
	resp, err := s.StoreMemory(Operator(), &aimemoryv1.StoreMemoryRequest{Memory: Mem("Migration order", "y", InNS("p"))})
	if err != nil {
		t.Fatal(err)
	}
	got := slices.Clone(resp.PotentialContradictions)
	slices.Sort(got)
	want := []string{a.Id, b.Id}
	slices.Sort(want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("contradictions %v, want %v", got, want)
	}
	for i := range 8 {
		Store(t, s, Mem(fmt.Sprintf("order %d", i), "x", InNS("p")))
	}
	resp, _ = s.StoreMemory(Operator(), &aimemoryv1.StoreMemoryRequest{Memory: Mem("order again", "y", InNS("p"))})
	if len(resp.PotentialContradictions) != maxContradictions || slices.Contains(resp.PotentialContradictions, resp.Memory.Id) {
		t.Errorf("contradictions %v", resp.PotentialContradictions)
	}
}

func testUpdate(t *testing.T, o Opener) {
	ctx := Operator()
	s, clk := o.open(t, storage.Options{})
	m := Store(t, s, Mem("Note", "x", meta(`{"agent_id":"alice"}`)))
	other := Store(t, s, Mem("Taken", "x"))
	clk.Add(time.Minute)
	now := clk.Now().UnixNano()
	upd := func(req *aimemoryv1.UpdateMemoryRequest) (*aimemoryv1.Memory, error) {
		req.Id = m.Id
		resp, err := s.UpdateMemory(ctx, req)
		return resp.GetMemory(), err
	}

	_, err := upd(&aimemoryv1.UpdateMemoryRequest{Title: proto.String("Taken")})
	want := fmt.Sprintf("CONFLICT: memory with title 'Taken' already exists in namespace 'global' (existing id: %s)", other.Id)
	if !errors.Is(err, storage.ErrConflict) || err.Error() != want {
		t.Errorf("title collision: %v", err)
	}
	got, err := upd(&aimemoryv1.UpdateMemoryRequest{MetadataJson: []byte(`{"agent_id":"mallory","x":1}`)})
	if err != nil || !strings.Contains(string(got.MetadataJson), `"alice"`) || !strings.Contains(string(got.MetadataJson), `"x"`) {
		t.Errorf("metadata update = %s, %v", got.GetMetadataJson(), err)
	}
	if got.UpdatedAt != now {
		t.Errorf("updated_at %d, want %d", got.UpdatedAt, now)
	}
	got, _ = upd(&aimemoryv1.UpdateMemoryRequest{Tier: proto.String("long")})
	if got.Tier != "long" || got.ExpiresAt != 0 {
		t.Errorf("raise to long: %v", got)
	}
	got, _ = upd(&aimemoryv1.UpdateMemoryRequest{Tier: proto.String("short")})
	if got.Tier != "short" || got.ExpiresAt != now+int64(6*time.Hour) {
		t.Errorf("tier to short: %v", got)
	}
	got, _ = upd(&aimemoryv1.UpdateMemoryRequest{ExpiresAt: proto.Int64(now + 5)})
	if got.ExpiresAt != now+5 {
		t.Errorf("explicit expiry: %v", got)
	}
	got, _ = upd(&aimemoryv1.UpdateMemoryRequest{ClearExpiresAt: true})
	if got.ExpiresAt != 0 {
		t.Errorf("clear expiry: %v", got)
	}
	got, _ = upd(&aimemoryv1.UpdateMemoryRequest{SetTags: true})
	if len(got.Tags) != 0 {
		t.Errorf("clear tags: %v", got.Tags)
	}
	if _, err := s.UpdateMemory(ctx, &aimemoryv1.UpdateMemoryRequest{Id: "missing"}); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("missing id: %v", err)
	}
	check(t, s)
}

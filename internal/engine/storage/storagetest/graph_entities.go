package storagetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

func register(t *testing.T, s storage.Backend, name, ns string, aliases ...string) *aimemoryv1.RegisterEntityResponse {
	t.Helper()
	resp, err := s.RegisterEntity(OperatorAs("ai:reg"), &aimemoryv1.RegisterEntityRequest{
		CanonicalName: name, Namespace: ns, Aliases: aliases,
	})
	if err != nil {
		t.Fatalf("register %q: %v", name, err)
	}
	return resp
}

func aliasTexts(e *aimemoryv1.Entity) []string {
	var out []string
	for _, a := range e.GetAliases() {
		out = append(out, a.Alias)
	}
	return out
}

func lookup(t *testing.T, s storage.Backend, alias, ns string) *aimemoryv1.Entity {
	t.Helper()
	resp, err := s.GetEntityByAlias(Operator(), &aimemoryv1.GetEntityByAliasRequest{Alias: alias, Namespace: ns})
	if err != nil {
		t.Fatalf("lookup %q: %v", alias, err)
	}
	return resp.Entity
}

// aliasState describes what the aliases resolve to in ns (holder and its
// alias set, or none) and how many memories there are: equal states mean
// nothing entity-related was written in between.
func aliasState(t *testing.T, s storage.Backend, ns string, aliases ...string) string {
	t.Helper()
	out := fmt.Sprintf("memories=%d", stats(t, s).Total)
	for _, a := range aliases {
		e := lookup(t, s, a, ns)
		if e == nil {
			out += fmt.Sprintf(" %s→none", a)
			continue
		}
		var names []string
		for _, al := range e.Aliases {
			names = append(names, al.Alias)
		}
		out += fmt.Sprintf(" %s→%s%q", a, e.Id, names)
	}
	return out
}

func testRegisterEntity(t *testing.T, o Opener) {
	s, clk := o.open(t, storage.Options{})
	r := register(t, s, "  PostgreSQL ", " infra/db ", "postgres", "PG", "pg ", "Postgres")
	e := r.Entity
	if !r.Created || e.CanonicalName != "PostgreSQL" || e.Namespace != "infra/db" {
		t.Fatalf("register = %v", r)
	}
	// The canonical name is an alias; duplicates under case folding collapse
	// to the first form given.
	if got := aliasTexts(e); !slices.Equal(got, []string{"PG", "PostgreSQL", "postgres"}) {
		t.Fatalf("aliases = %v", got)
	}
	if e.Aliases[0].AddedBy != "ai:reg" {
		t.Errorf("added_by = %q", e.Aliases[0].AddedBy)
	}
	m := get(t, s, e.Id)
	var meta map[string]any
	json.Unmarshal(m.MetadataJson, &meta)
	if m.Tier != "long" || m.ExpiresAt != 0 || m.Content != "PostgreSQL" || m.Priority != 7 || m.Source != "api" ||
		!slices.Equal(m.Tags, []string{"entity"}) || meta["kind"] != "entity" {
		t.Fatalf("entity memory = %v", m)
	}

	// Registering again reuses it and adds only what is new, later in order.
	clk.Add(time.Second)
	r2, err := s.RegisterEntity(OperatorAs("ai:other"), &aimemoryv1.RegisterEntityRequest{
		CanonicalName: "PostgreSQL", Namespace: "infra/db", Aliases: []string{"PGSQL", "pg"},
		MetadataJson: []byte(`{"ignored":true}`),
	})
	if err != nil || r2.Created || r2.Entity.Id != e.Id {
		t.Fatalf("re-register = %v, %v", r2, err)
	}
	if got := aliasTexts(r2.Entity); !slices.Equal(got, []string{"PG", "PostgreSQL", "postgres", "PGSQL"}) {
		t.Fatalf("aliases after re-register = %v", got)
	}
	if m2 := get(t, s, e.Id); string(m2.MetadataJson) != string(m.MetadataJson) {
		t.Errorf("reuse changed metadata: %s", m2.MetadataJson)
	}

	// Lookup folds case (Unicode), with or without a namespace.
	for _, alias := range []string{"postgresql", "POSTGRES", " pgsql ", "Pg"} {
		if got := lookup(t, s, alias, "infra/db"); got == nil || got.Id != e.Id {
			t.Errorf("lookup %q in namespace = %v", alias, got)
		}
		if got := lookup(t, s, alias, ""); got == nil || got.Id != e.Id {
			t.Errorf("lookup %q anywhere = %v", alias, got)
		}
	}
	if got := lookup(t, s, "pg", "infra"); got != nil {
		t.Errorf("namespace match must be exact: %v", got)
	}
	if got := lookup(t, s, "mysql", ""); got != nil {
		t.Errorf("unknown alias = %v", got)
	}
}

func testAliasFoldingIsUnicode(t *testing.T, o Opener) {
	s, _ := o.open(t, storage.Options{})
	e := register(t, s, "Straße", "geo", "ΣΊΣΥΦΟΣ", "Kelvin").Entity
	for _, alias := range []string{"STRASSE", "strasse", "σίσυφος", "ΣΊΣΥΦΟς", "\u212Aelvin", "Stra\u00dfe"} {
		if got := lookup(t, s, alias, "geo"); got == nil || got.Id != e.Id {
			t.Errorf("lookup %q = %v", alias, got)
		}
	}
	// Decomposed and composed forms of é are the same alias.
	e2 := register(t, s, "Caf\u00e9", "geo").Entity
	if got := lookup(t, s, "CAFE\u0301", "geo"); got == nil || got.Id != e2.Id {
		t.Errorf("NFC lookup = %v", got)
	}
}

func testAliasUniquePerNamespaceWritesNothingOnConflict(t *testing.T, o Opener) {
	ctx := Operator()
	s, clk := o.open(t, storage.Options{})
	pg := register(t, s, "PostgreSQL", "infra", "pg").Entity
	probe := []string{"pg", "PostgreSQL", "Pagination", "paging", "pages", "postgresql"}
	before := aliasState(t, s, "infra", probe...)

	// A new entity claiming an alias another entity holds: an error naming
	// that entity, and neither the memory nor any alias is written.
	_, err := s.RegisterEntity(ctx, &aimemoryv1.RegisterEntityRequest{CanonicalName: "Pagination", Namespace: "infra", Aliases: []string{"paging", "PG"}})
	if !errors.Is(err, storage.ErrConflict) || !strings.Contains(err.Error(), "aliases[1]") || !strings.Contains(err.Error(), pg.Id) || !strings.Contains(err.Error(), "PostgreSQL") {
		t.Fatalf("conflict = %v", err)
	}
	if got := aliasState(t, s, "infra", probe...); got != before {
		t.Fatalf("a refused registration wrote:\n%s\nwas\n%s", got, before)
	}
	// The same for an existing entity adding a taken alias.
	pag := register(t, s, "Pagination", "infra", "paging").Entity
	if got := lookup(t, s, "PAGING", "infra"); got == nil || got.Id != pag.Id || len(got.Aliases) != 2 {
		t.Fatalf("paging = %v", got)
	}
	after := aliasState(t, s, "infra", probe...)
	_, err = s.RegisterEntity(ctx, &aimemoryv1.RegisterEntityRequest{CanonicalName: "Pagination", Namespace: "infra", Aliases: []string{"pages", "postgresql"}})
	if !errors.Is(err, storage.ErrConflict) || !strings.Contains(err.Error(), pg.Id) {
		t.Fatalf("conflict on reuse = %v", err)
	}
	if got := aliasState(t, s, "infra", probe...); got != after {
		t.Fatalf("a refused alias addition wrote:\n%s\nwas\n%s", got, after)
	}
	// The canonical name of a new entity clashing with another's alias.
	if _, err := s.RegisterEntity(ctx, &aimemoryv1.RegisterEntityRequest{CanonicalName: "PG", Namespace: "infra"}); !errors.Is(err, storage.ErrConflict) || !strings.Contains(err.Error(), "canonical_name") {
		t.Fatalf("canonical name conflict = %v", err)
	}
	// Another namespace is free to use it.
	if r := register(t, s, "Pagination", "web", "PG"); !r.Created {
		t.Fatal("other namespace")
	}
	// Without a namespace, the newest entity holding the alias wins.
	clk.Add(time.Second)
	newer := register(t, s, "Pg Bouncer", "ops", "pg").Entity
	if got := lookup(t, s, "pg", ""); got == nil || got.Id != newer.Id {
		t.Fatalf("newest wins = %v", got)
	}
	// An ordinary memory with the title blocks registration.
	Store(t, s, Mem("Redis", "cache", InNS("infra")))
	if _, err := s.RegisterEntity(ctx, &aimemoryv1.RegisterEntityRequest{CanonicalName: "Redis", Namespace: "infra"}); !errors.Is(err, storage.ErrConflict) || !strings.Contains(err.Error(), "not an entity") {
		t.Fatalf("title collision = %v", err)
	}
	check(t, s)
}

func testRegisterEntityValidation(t *testing.T, o Opener) {
	ctx := Operator()
	s, _ := o.open(t, storage.Options{})
	for _, tc := range []struct {
		req  *aimemoryv1.RegisterEntityRequest
		want string
	}{
		{&aimemoryv1.RegisterEntityRequest{Namespace: "n"}, "canonical_name: must not be empty"},
		{&aimemoryv1.RegisterEntityRequest{CanonicalName: "x", Namespace: "a//b"}, "namespace"},
		{&aimemoryv1.RegisterEntityRequest{CanonicalName: "x", Namespace: "n", Aliases: []string{"ok", " "}}, "aliases[1]: must not be empty"},
		{&aimemoryv1.RegisterEntityRequest{CanonicalName: "x", Namespace: "n", Aliases: []string{"a\x01"}}, "aliases[0]: must not contain control"},
		{&aimemoryv1.RegisterEntityRequest{CanonicalName: "x", Namespace: "n", Aliases: make([]string, 101)}, "aliases: must have at most 100"},
		{&aimemoryv1.RegisterEntityRequest{CanonicalName: "x", Namespace: "n", MetadataJson: []byte(`[1]`)}, "metadata"},
		{&aimemoryv1.RegisterEntityRequest{CanonicalName: "x", Namespace: "n", MetadataJson: []byte(`{"scope":"galaxy"}`)}, "scope"},
	} {
		if _, err := s.RegisterEntity(ctx, tc.req); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err %v, want %q", tc.req, err, tc.want)
		}
	}
	// Who registers is the verified caller: one without a principal registers nothing.
	if _, err := s.RegisterEntity(OperatorAs(""), &aimemoryv1.RegisterEntityRequest{CanonicalName: "x", Namespace: "n"}); err == nil || !strings.Contains(err.Error(), "registered_by") {
		t.Errorf("no principal: err %v, want registered_by", err)
	}
	if got := aliasState(t, s, "n", "x", "ok", "a"); got != "memories=0 x→none ok→none a→none" {
		t.Fatalf("bad input wrote: %s", got)
	}
	if _, err := s.GetEntityByAlias(ctx, &aimemoryv1.GetEntityByAliasRequest{Alias: " "}); err == nil {
		t.Error("blank alias accepted")
	}
	if _, err := s.GetEntityByAlias(ctx, &aimemoryv1.GetEntityByAliasRequest{Alias: "x", Namespace: "/x"}); err == nil {
		t.Error("bad namespace accepted")
	}
}

// TestEntityCascadeOnDelete: deleting an entity removes its alias rows and
// its links in the same transaction; the alias is then free again.
func testEntityCascadeOnDelete(t *testing.T, o Opener) {
	ctx := Operator()
	s, _ := o.open(t, storage.Options{})
	e := register(t, s, "Alice", "people", "al", "ally").Entity
	fact := Store(t, s, Mem("Alice likes tea", "x", InNS("people")))
	putLinkOK(t, s, e.Id, fact.Id, "related_to", "ai:t")
	if _, err := s.DeleteMemories(ctx, &aimemoryv1.DeleteMemoriesRequest{Ids: []string{e.Id}}); err != nil {
		t.Fatal(err)
	}
	if got := aliasState(t, s, "people", "Alice", "al", "ally"); got != "memories=1 Alice→none al→none ally→none" {
		t.Fatalf("aliases left: %s", got)
	}
	if n := stats(t, s).Links; n != 0 {
		t.Fatalf("links left: %d", n)
	}
	if got := lookup(t, s, "al", ""); got != nil {
		t.Fatalf("deleted entity resolves: %v", got)
	}
	if r := register(t, s, "Albert", "people", "al"); !r.Created {
		t.Fatal("alias not freed")
	}
	check(t, s)
}

// TestEntityMovedByUpdate: an update that moves an entity takes its aliases
// along (refused when one is taken there); a new title becomes an alias.
func testEntityMovedByUpdate(t *testing.T, o Opener) {
	ctx := Operator()
	s, clk := o.open(t, storage.Options{})
	e := register(t, s, "Alice", "team-a", "al").Entity
	register(t, s, "Alan", "team-b", "AL")
	ns := "team-b"
	if _, err := s.UpdateMemory(ctx, &aimemoryv1.UpdateMemoryRequest{Id: e.Id, Namespace: &ns}); !errors.Is(err, storage.ErrConflict) || !strings.Contains(err.Error(), "namespace: alias 'al'") {
		t.Fatalf("move into a taken alias = %v", err)
	}
	if got := get(t, s, e.Id); got.Namespace != "team-a" {
		t.Fatalf("refused move moved: %v", got)
	}
	ns = "team-c"
	title := "Alice Smith"
	clk.Add(time.Second)
	if _, err := s.UpdateMemory(ctx, &aimemoryv1.UpdateMemoryRequest{Id: e.Id, Namespace: &ns, Title: &title}); err != nil {
		t.Fatal(err)
	}
	if got := lookup(t, s, "al", "team-a"); got != nil {
		t.Errorf("alias left behind: %v", got)
	}
	got := lookup(t, s, "alice smith", "team-c")
	if got == nil || got.Id != e.Id || got.CanonicalName != "Alice Smith" || !slices.Equal(aliasTexts(got), []string{"Alice", "al", "Alice Smith"}) {
		t.Fatalf("moved entity = %v", got)
	}
	check(t, s)
}

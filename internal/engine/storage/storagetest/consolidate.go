package storagetest

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// testConsolidate: the new memory is long, merged by the rules (tags,
// priority, access counts, metadata with derived_from); the sources are
// archived (reason consolidated) with their links and the derived_from
// links; a restore brings a source and its provenance link back live; a
// bad request changes nothing.
func testConsolidate(t *testing.T, o Opener) {
	ctx := Operator()
	s, _ := o.open(t, storage.Options{})
	a := Store(t, s, Mem("Alpha", "The port is 8080.", Tags("net", "ops"), prio(7), meta(`{"agent_id":"ann","k":1,"x":"a"}`), Tier("short")))
	b := Store(t, s, Mem("Beta", "The host is db1.", Tags("db", "ops"), meta(`{"agent_id":"bob","x":"b"}`), InNS("team")))
	other := Store(t, s, Mem("Other", "unrelated"))
	link(t, s, a.Id, other.Id)
	title := map[string]string{a.Id: "Alpha", b.Id: "Beta", other.Id: "Other"}

	before := stats(t, s).Total
	for _, bad := range []struct {
		req  *aimemoryv1.ConsolidateRequest
		want string
	}{
		{&aimemoryv1.ConsolidateRequest{Ids: []string{a.Id}, Title: "T", Summary: "s"}, "ids: must hold 2 to 100 ids (got 1)"},
		{&aimemoryv1.ConsolidateRequest{Ids: []string{a.Id, a.Id}, Title: "T", Summary: "s"}, "ids[1]: must not repeat an id"},
		{&aimemoryv1.ConsolidateRequest{Ids: []string{a.Id, b.Id}, Title: "", Summary: "s"}, "title"},
		{&aimemoryv1.ConsolidateRequest{Ids: []string{a.Id, b.Id}, Title: "T", Summary: " "}, "summary"},
		{&aimemoryv1.ConsolidateRequest{Ids: []string{a.Id, b.Id}, Title: "T", Summary: "s", Namespace: "a//b"}, "namespace"},
		{&aimemoryv1.ConsolidateRequest{Ids: []string{a.Id, b.Id}, Title: "T", Summary: "s", AgentId: "bad agent!"}, "agent_id"},
		{&aimemoryv1.ConsolidateRequest{Ids: []string{a.Id, "00000000-0000-4000-8000-000000000000"}, Title: "T", Summary: "s"}, "not found"},
		{&aimemoryv1.ConsolidateRequest{Ids: []string{a.Id, b.Id}, Title: "Alpha", Summary: "s"}, "Alpha"},
	} {
		_, err := s.Consolidate(ctx, bad.req)
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("consolidate %v: %v, want an error containing %q", bad.req, err, bad.want)
		}
	}
	if got := stats(t, s).Total; got != before {
		t.Fatalf("refused consolidates changed the count: %d → %d", before, got)
	}

	if _, err := s.SetStandard(as("ai:carol"), &aimemoryv1.SetStandardRequest{Namespace: "team", Id: b.Id}); err != nil {
		t.Fatal(err)
	}
	resp, err := s.Consolidate(as("ai:carol"), &aimemoryv1.ConsolidateRequest{Ids: []string{a.Id, b.Id}, Title: "Setup", Summary: "Port 8080 on db1.", Namespace: "team"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(resp.Standards, []string{"team"}) {
		t.Errorf("standards = %v, want team (Beta was its standard)", resp.Standards)
	}
	m := resp.Memory
	title[m.Id] = "Setup"
	if m.Tier != "long" || m.ExpiresAt != 0 || m.Namespace != "team" || m.Source != "consolidation" || m.Confidence != 1 || m.Priority != 7 ||
		!slices.Equal(m.Tags, []string{"db", "net", "ops"}) || m.CreatedBy != "ai:carol" {
		t.Errorf("new memory = %v", m)
	}
	var md map[string]any
	if err := json.Unmarshal(m.MetadataJson, &md); err != nil {
		t.Fatal(err)
	}
	if md["agent_id"] != "ai:carol" || md["x"] != "b" || md["k"] != float64(1) ||
		!slices.Equal(anyStrings(md["derived_from"]), []string{a.Id, b.Id}) || !slices.Equal(anyStrings(md["consolidated_from_agents"]), []string{"ann", "bob"}) {
		t.Errorf("metadata = %s", m.MetadataJson)
	}
	if !slices.Equal(resp.Archived, []string{a.Id, b.Id}) || resp.LinksCreated != 2 {
		t.Errorf("answer = archived %v, links %d", resp.Archived, resp.LinksCreated)
	}
	if get(t, s, a.Id) != nil || get(t, s, b.Id) != nil || get(t, s, m.Id) == nil {
		t.Fatalf("after consolidate: sources still live or new memory missing")
	}
	for _, id := range []string{a.Id, b.Id} {
		r := archivedRow(t, s, id)
		if len(r.Archived) != 1 || r.Archived[0].Reason != storage.ArchiveReasonConsolidated {
			t.Errorf("archive row of %s = %v", title[id], r)
		}
	}
	if got := linkPairs(links(t, s, false, m.Id).Links, title); len(got) != 0 {
		t.Errorf("live links of the new memory = %v, want none (the sources are archived)", got)
	}
	if got := linkPairs(links(t, s, true, m.Id).Links, title); !slices.Equal(got, []string{"Setup→Alpha", "Setup→Beta"}) {
		t.Errorf("provenance with include_archived = %v", got)
	}
	check(t, s)

	// Restore Alpha: it comes back with its provenance link and its own.
	if _, err := s.RestoreMemory(ctx, &aimemoryv1.RestoreMemoryRequest{Id: a.Id}); err != nil {
		t.Fatal(err)
	}
	if got := linkPairs(links(t, s, false, a.Id).Links, title); !slices.Equal(got, []string{"Alpha→Other", "Setup→Alpha"}) {
		t.Errorf("live links of restored Alpha = %v", got)
	}
	for _, l := range links(t, s, false, a.Id).Links {
		if l.Relation == "derived_from" && l.SourceId != m.Id {
			t.Errorf("derived_from link = %v", l)
		}
	}
	check(t, s)
}

// testConsolidateGoverned: a queued consolidate writes nothing and, once
// approved, runs as its requester.
func testConsolidateGoverned(t *testing.T, o Opener) {
	f := newGovFixture(t, o, approvePolicy, nil)
	_, err := f.s.Consolidate(as("ai:bob"), &aimemoryv1.ConsolidateRequest{Ids: []string{f.inOpen.Id, f.other.Id}, Title: "bob merged", Summary: "both", Namespace: "gov"})
	var pe *storage.PendingError
	if !errors.As(err, &pe) || pe.Op != storage.OpConsolidate {
		t.Fatalf("consolidate into gov: %v, want queued", err)
	}
	if get(t, f.s, f.inOpen.Id) == nil {
		t.Fatal("a queued consolidate archived a source")
	}
	ap, err := f.s.ApprovePending(as("ai:carol"), &aimemoryv1.DecidePendingRequest{Id: pe.ID})
	if err != nil || !ap.Approved {
		t.Fatalf("approve: %v, %v", ap, err)
	}
	m := get(t, f.s, ap.Action.ResultMemoryId)
	if m == nil || m.Title != "bob merged" || m.CreatedBy != "ai:bob" || get(t, f.s, f.inOpen.Id) != nil || get(t, f.s, f.other.Id) != nil {
		t.Errorf("after approval: new memory %v; sources gone: %v", m, get(t, f.s, f.inOpen.Id) == nil)
	}
	check(t, f.s)
}

func anyStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

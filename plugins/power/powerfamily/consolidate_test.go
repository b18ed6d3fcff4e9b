package powerfamily

import (
	"context"
	"strings"
	"testing"

	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

func TestConsolidate(t *testing.T) {
	h := newHarness(t)
	a := h.memory("Port", "The payments API listens on port 8080. It runs in staging.", "api")
	b := h.memory("Host", "The payments API runs on host db1. The payments API listens on port 8080.", "db")
	c := h.memory("Owner", "Team Kappa owns the payments API.")

	var got consolidateResult
	h.OK("memory_consolidate", jsonArgs("ids", []string{a, b}, "title", "Payments API", "summary", "Port 8080 on db1.", "namespace", "svc"), &got)
	if got.ID == "" || got.Consolidated != 2 || got.LinksCreated != 2 || got.Method != "caller" || got.AutoSummary || got.SummaryPreview != "" {
		t.Fatalf("consolidate with a summary: %+v", got)
	}
	ctx := context.Background()
	mems, err := h.eng.GetMemories(ctx, &aimemoryv1.GetMemoriesRequest{Ids: []string{got.ID, a, b}})
	if err != nil || len(mems.GetMemories()) != 1 {
		t.Fatalf("after consolidate: %v, %v; want the new memory alone", mems, err)
	}
	m := mems.GetMemories()[0]
	if m.GetTier() != "long" || m.GetNamespace() != "svc" || m.GetContent() != "Port 8080 on db1." || strings.Join(m.GetTags(), ",") != "api,db" {
		t.Errorf("new memory = %v", m)
	}
	arch, err := h.eng.GetArchived(ctx, &aimemoryv1.GetArchivedRequest{Ids: []string{a, b}})
	if err != nil || len(arch.GetArchived()) != 2 || arch.GetArchived()[0].GetReason() != "consolidated" || len(arch.GetLinks()) != 2 {
		t.Fatalf("archive = %v, %v", arch, err)
	}

	// No summary and no model: extractive, the repeated sentence once.
	d := h.memory("Owner 2", "Team Kappa owns the payments API. Kappa is on call on weekdays.")
	got = consolidateResult{}
	h.OK("memory_consolidate", jsonArgs("ids", []string{c, d}, "title", "Ownership"), &got)
	if got.Method != "extractive" || !got.AutoSummary || got.Reason != "" {
		t.Fatalf("consolidate without a summary: %+v", got)
	}
	if strings.Count(got.SummaryPreview, "Team Kappa owns the payments API.") != 1 || !strings.Contains(got.SummaryPreview, "weekdays") {
		t.Errorf("extractive summary = %q", got.SummaryPreview)
	}

	e := h.memory("E", "e text")
	f := h.memory("F", "f text")
	for _, bad := range []struct{ args, want string }{
		{jsonArgs("title", "T"), "ids: is required"},
		{jsonArgs("ids", []string{e}, "title", "T"), "ids: must hold 2 to 100 ids (got 1)"},
		{jsonArgs("ids", []any{e, 7}, "title", "T"), "ids[1]: must be a string"},
		{jsonArgs("ids", []string{e, e}, "title", "T"), "ids[1]: must not repeat an id"},
		{jsonArgs("ids", "e", "title", "T"), "ids: must be an array of strings"},
		{jsonArgs("ids", []string{e, f}), "title"},
		{jsonArgs("ids", []string{e, f}, "title", "T", "summary", " "), "summary:"},
		{jsonArgs("ids", []string{e, f}, "title", "T", "summary", strings.Repeat("x", 70000)), "summary: must be at most 65536 bytes"},
		{jsonArgs("ids", []string{e, f}, "title", "T", "namespace", "a//b"), "namespace"},
		{jsonArgs("ids", []string{e, "00000000-0000-4000-8000-000000000000"}, "title", "T"), "ids[1]: memory not found"},
		{jsonArgs("ids", []string{e, "00000000-0000-4000-8000-000000000000"}, "title", "T", "summary", "s"), "not found"},
		{jsonArgs("ids", []string{e, f}, "title", "E", "summary", "s"), "E"},
		{jsonArgs("ids", []string{e, f}, "title", "T", "extra", 1), "extra"},
	} {
		h.Fails("memory_consolidate", bad.args, bad.want)
	}
	if left, _ := h.eng.GetMemories(ctx, &aimemoryv1.GetMemoriesRequest{Ids: []string{e, f}}); len(left.GetMemories()) != 2 {
		t.Errorf("a refused consolidate removed a source")
	}
}

func TestExtractiveSummary(t *testing.T) {
	texts := []string{
		"The cluster runs Postgres 16. Backups run nightly at 02:00. The cluster runs Postgres 16!",
		"Backups run nightly at 02:00 UTC. Restores are tested monthly",
		"Lunch is at noon.",
	}
	got := extractiveSummary(texts, map[string]bool{"the": true, "at": true, "is": true, "are": true})
	for _, want := range []string{"Postgres 16", "tested monthly.", "Lunch is at noon."} {
		if !strings.Contains(got, want) {
			t.Errorf("summary %q lacks %q", got, want)
		}
	}
	if strings.Count(got, "Postgres 16") != 1 || strings.Count(got, "Backups run nightly") != 1 {
		t.Errorf("summary %q repeats a fact", got)
	}
	if got := extractiveSummary([]string{"1 2 3", "4"}, nil); got == "" {
		t.Error("no summary of sources without words")
	}
}

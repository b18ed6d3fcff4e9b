package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/testwait"
)

// consolidateHost is a --profile power host of an env with the writer test
// family pinned (its restore and archived ops reach the engine's Archive
// API, whose tools are the archive family's).
func consolidateHost(t *testing.T) (*env, *host) {
	t.Helper()
	e := newEnv(t)
	e.pin("writer")
	e.writeConfig("")
	return e, e.startHost([]string{"--profile", "power"})
}

// writer calls the writer family's writer_call through the bridge.
func (h *host) writer(args map[string]any) map[string]any {
	h.t.Helper()
	return h.ok("memory_capabilities", map[string]any{"tool": "writer_call", "arguments": args})
}

func TestPowerConsolidateWithNoModel(t *testing.T) {
	_, h := consolidateHost(t)
	a := h.store("Port", "The payments API listens on port 8080. It runs in staging.", "api")
	b := h.store("Host", "The payments API runs on host db1. The payments API listens on port 8080.", "db")
	other := h.store("Runbook", "Restart the payments API with make restart.")
	h.ok("memory_capabilities", map[string]any{"tool": "memory_link", "arguments": map[string]any{"source_id": a, "target_id": other}})

	got := h.ok("memory_consolidate", map[string]any{"ids": []string{a, b}, "title": "Payments API", "namespace": "svc"})
	id, _ := got["id"].(string)
	if id == "" || got["consolidated"] != float64(2) || got["links_created"] != float64(2) || got["method"] != "extractive" || got["auto_summary"] != true {
		t.Fatalf("consolidate = %v", got)
	}
	preview, _ := got["summary_preview"].(string)
	if strings.Count(preview, "listens on port 8080") != 1 || !strings.Contains(preview, "db1") {
		t.Errorf("extractive summary = %q", preview)
	}
	m := h.getMemory(id)
	meta, _ := m["metadata"].(map[string]any)
	if strings.Join(anyStrings(meta["derived_from"]), ",") != a+","+b {
		t.Errorf("metadata = %v", m["metadata"])
	}
	if m["tier"] != "long" || m["namespace"] != "svc" || m["source"] != "consolidation" || strings.Join(anyStrings(m["tags"]), ",") != "api,db" {
		t.Errorf("new memory = %v", m)
	}
	for _, src := range []string{a, b} {
		h.fails("memory_get", map[string]any{"id": src}, "memory not found")
		row := h.writer(map[string]any{"op": "archived", "id": src})
		if row["found"] != true || row["reason"] != "consolidated" || !slices.Contains(anyStrings(row["links"]), id+" derived_from "+src) {
			t.Errorf("archive row of %s = %v", src, row)
		}
	}
	// A restore puts the source back in the graph: its provenance link
	// and its own link.
	if r := h.writer(map[string]any{"op": "restore", "id": a}); r["code"] != "OK" {
		t.Fatalf("restore: %v", r)
	}
	var pairs []string
	for _, l := range rows(h.getMemory(a)["links"]) {
		pairs = append(pairs, fmt.Sprint(l["source_id"], " ", l["relation"], " ", l["target_id"]))
	}
	slices.Sort(pairs)
	want := []string{a + " related_to " + other, id + " derived_from " + a}
	slices.Sort(want)
	if !slices.Equal(pairs, want) {
		t.Errorf("links of the restored source = %v, want %v", pairs, want)
	}

	// The caller's summary, and each documented error, which changes nothing.
	c, d := h.store("C", "c text"), h.store("D", "d text")
	got = h.ok("memory_consolidate", map[string]any{"ids": []string{c, d}, "title": "CD", "summary": "c and d"})
	if got["method"] != "caller" || got["auto_summary"] != nil || h.getMemory(got["id"].(string))["content"] != "c and d" {
		t.Fatalf("consolidate with a summary = %v", got)
	}
	e1, e2 := h.store("E", "e text"), h.store("F", "f text")
	ghost := "00000000-0000-4000-8000-000000000000"
	for _, bad := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"title": "T"}, "ids: is required"},
		{map[string]any{"ids": []string{e1}, "title": "T"}, "ids: must hold 2 to 100 ids (got 1)"},
		{map[string]any{"ids": []any{e1, 7}, "title": "T"}, "ids[1]: must be a string"},
		{map[string]any{"ids": []string{e1, e1}, "title": "T"}, "ids[1]: must not repeat an id"},
		{map[string]any{"ids": []string{e1, e2}}, "title"},
		{map[string]any{"ids": []string{e1, e2}, "title": "T", "summary": ""}, "summary:"},
		{map[string]any{"ids": []string{e1, e2}, "title": "T", "namespace": "a//b"}, "namespace"},
		{map[string]any{"ids": []string{e1, ghost}, "title": "T"}, "ids[1]: memory not found"},
		{map[string]any{"ids": []string{e1, e2}, "title": "E", "summary": "s"}, "E"},
	} {
		h.fails("memory_consolidate", bad.args, bad.want)
	}
	h.getMemory(e1)
	h.getMemory(e2)
}

// TestConsolidateKillNine kills the engine with SIGKILL while two writers
// keep consolidating groups of ten linked memories: every group is either
// consolidated whole (the new memory, all ten sources archived with their
// derived_from links) or untouched (all ten live, no new memory), and every
// acknowledged consolidate is whole.
func TestConsolidateKillNine(t *testing.T) {
	// Calls made while the engine is down fail fast and use up their
	// group, so there are groups to spare for every kill.
	const groups, size, writers, kills = 80, 10, 2, 4
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	e, h := consolidateHost(t)
	t.Cleanup(func() { // a failure here has been seen twice and not reproduced since: keep what it shows
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(e.dataDir, "engine.log"))
			t.Logf("engine.log (end):\n%s", b[max(0, len(b)-6000):])
			errs := h.stderr.String()
			t.Logf("host stderr (end):\n%s", errs[max(0, len(errs)-4000):])
		}
	})
	ids := make([][]string, groups)
	for g := range groups {
		for i := range size {
			ids[g] = append(ids[g], h.ok("memory_store", map[string]any{"format": "json", "title": fmt.Sprintf("g%d m%d", g, i),
				"content": fmt.Sprintf("Fact %d of group %d: the service runs on port %d.", i, g, 8000+i), "namespace": fmt.Sprintf("kc/g%d", g)})["id"].(string))
		}
		h.ok("memory_capabilities", map[string]any{"tool": "memory_link", "arguments": map[string]any{"source_id": ids[g][0], "target_id": ids[g][1]}})
	}

	acks := &ackLog{writes: map[string]ackedWrite{}, more: make(chan struct{}, 1)}
	next := make(chan int, groups)
	for g := range groups {
		next <- g
	}
	close(next)
	var wg sync.WaitGroup
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for g := range next {
				text, isErr, err := h.tryCall("memory_consolidate", map[string]any{"ids": ids[g], "title": fmt.Sprintf("merged g%d", g), "namespace": "kc/merged"})
				if err != nil || isErr {
					continue // not acknowledged: all or nothing, checked below
				}
				var res struct{ ID string }
				if json.Unmarshal([]byte(text), &res) != nil || res.ID == "" {
					t.Errorf("consolidate result without an id: %s", text)
					continue
				}
				acks.add(res.ID, ackedWrite{namespace: fmt.Sprint(g)})
			}
		}()
	}
	killed := map[int]bool{}
	for k := range kills {
		acks.waitFor(t, acks.count()+1+rng.IntN(3), fmt.Sprintf("consolidates before kill %d", k+1))
		pid := theEngine(t, e, killed)
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatalf("kill engine: %v", err)
		}
		killed[pid] = true
		waitExit(t, pid)
	}
	testwait.Wait(t, &wg, "the consolidating writers")
	eventually(t, 15*time.Second, "the engine to come back", func() bool {
		_, isErr, err := h.tryCall("memory_list", map[string]any{"limit": 1, "format": "json"})
		return err == nil && !isErr
	})

	merged := map[string]string{} // title → id
	for _, m := range rows(h.ok("memory_list", map[string]any{"namespace": "kc/merged", "limit": 200, "format": "json"})["memories"]) {
		merged[m["title"].(string)] = m["id"].(string)
	}
	acked := map[string]bool{}
	for _, w := range acks.writes {
		acked[w.namespace] = true
	}
	whole, untouched := 0, 0
	for g := range groups {
		live := len(rows(h.ok("memory_list", map[string]any{"namespace": fmt.Sprintf("kc/g%d", g), "limit": 200, "format": "json"})["memories"]))
		id, done := merged[fmt.Sprintf("merged g%d", g)]
		switch {
		case done && live == 0:
			whole++
			for _, src := range ids[g] {
				row := h.writer(map[string]any{"op": "archived", "id": src})
				if row["reason"] != "consolidated" || !slices.Contains(anyStrings(row["links"]), id+" derived_from "+src) {
					t.Errorf("group %d: source %s archived as %v", g, src, row)
				}
			}
		case !done && live == size:
			untouched++
			if acked[fmt.Sprint(g)] {
				t.Errorf("group %d: acknowledged consolidate lost", g)
			}
		default:
			t.Errorf("group %d: half done: merged %v, %d of %d sources live", g, done, live, size)
		}
	}
	t.Logf("%d groups consolidated whole (%d acknowledged), %d untouched, after %d kills", whole, acks.count(), untouched, kills)
	if whole < acks.count() {
		t.Errorf("%d acknowledged, only %d whole", acks.count(), whole)
	}
	h.kill9()
	for _, p := range e.enginePids() {
		syscall.Kill(p, syscall.SIGKILL)
		waitExit(t, p)
	}
	checkBolt(t, filepath.Join(e.dataDir, "memory.db"))
	checkIndex(t, filepath.Join(e.dataDir, "memory.db"))
}

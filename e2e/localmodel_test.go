package e2e

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/embed/embedtest"
	"github.com/ai-memory/ai-memory/internal/embed/modelfiles"
	"github.com/ai-memory/ai-memory/internal/engine/storage/pgstore/pgtest"
)

// withModel gives e's engines the real local embedding model (the test is
// skipped without one, and fails in CI, which brings it in from PyPI).
func (e *env) withModel(t testing.TB) {
	e.extra = append(e.extra, modelfiles.EnvDir+"="+embedtest.ModelDir(t))
}

// vectorsOf reads "N of M memories have vectors" from doctor (-1 when the
// engine does not answer).
func (e *env) vectorsOf() (n, of int) {
	m := regexp.MustCompile(`(\d+) of (\d+) memories have vectors`).FindStringSubmatch(e.coverage())
	if m == nil {
		return -1, -1
	}
	n, _ = strconv.Atoi(m[1])
	of, _ = strconv.Atoi(m[2])
	return n, of
}

// The three memories and questions of issue 26, on bbolt and on
// PostgreSQL: keyword recall finds nothing for the first and the wrong
// memory for the second; with the local model and no endpoint configured,
// recall is hybrid and finds each. memory_search "postgres" finds
// "PostgreSQL" by prefix.
func TestRecallByMeaningWithTheLocalModel(t *testing.T) {
	for _, backend := range []string{"bbolt", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			e := newEnv(t)
			if backend == "postgres" && e.dsn == "" {
				e.usePostgres(pgtest.DSN(t))
			}
			e.withModel(t)
			h := e.startHost(nil)
			defer h.close()
			h.store("Deploy day", "Deploys go out on Thursdays after the 2pm standup; never on Fridays")
			h.store("DB choice", "We chose PostgreSQL 16 over MySQL because of logical replication and JSONB")
			h.store("Go formatting", "Use gofumpt, not gofmt, in CI for the Go services")
			eventually(t, 30*time.Second, "the three memories embedded in the background", func() bool {
				n, _ := e.vectorsOf()
				return n == 3
			})
			if line := e.coverage(); !strings.Contains(line, "all-MiniLM-L6-v2 (local, 91 MB): 3 of 3 memories have vectors") {
				t.Fatalf("doctor: %s", line)
			}
			for _, c := range []struct{ tool, arg, query, want string }{
				{"memory_recall", "context", "when can I ship to production?", "Deploy day"},
				{"memory_recall", "context", "which database do we use and why", "DB choice"},
				{"memory_search", "query", "postgres", "DB choice"},
			} {
				text, isErr := h.call(c.tool, map[string]any{c.arg: c.query, "format": "json"})
				type titled []struct {
					Title string `json:"title"`
				}
				var res struct {
					Mode     string `json:"mode"`
					Memories titled `json:"memories"`
					Results  titled `json:"results"` // memory_search's key
				}
				if isErr || json.Unmarshal([]byte(text), &res) != nil {
					t.Fatalf("%s %q: %s", c.tool, c.query, text)
				}
				res.Memories = append(res.Memories, res.Results...)
				wantMode := "hybrid"
				if c.tool == "memory_search" {
					wantMode = "" // search matches words only
				}
				if res.Mode != wantMode || len(res.Memories) == 0 || res.Memories[0].Title != c.want {
					t.Errorf("%s %q: mode %q, first %v; want mode %q with %q first", c.tool, c.query, res.Mode, res.Memories, wantMode, c.want)
				}
			}
		})
	}
}

// TestLocalBackfillResumesAfterAKill, on bbolt and on PostgreSQL: memories
// stored before the model was there are embedded in the background when an
// engine with the model starts; an engine killed midway leaves the rest to
// the next one.
func TestLocalBackfillResumesAfterAKill(t *testing.T) {
	for _, backend := range []string{"bbolt", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			e := newEnv(t)
			if backend == "postgres" && e.dsn == "" {
				e.usePostgres(pgtest.DSN(t))
			}
			backfillResumes(t, e)
		})
	}
}

func backfillResumes(t *testing.T, e *env) {
	const total = 300
	h := e.startHost(nil)
	for i := range total {
		h.store(fmt.Sprintf("Note %d", i), fmt.Sprintf("Service %d keeps its settings in config/%d.toml and logs to stderr; ask team %d before changing it.", i, i, i%7))
	}
	h.close()
	eventually(t, 20*time.Second, "the engine without the model to exit", func() bool { return len(e.enginePids()) == 0 })

	e.withModel(t)
	h = e.startHost(nil)
	defer h.close()
	h.call("memory_list", map[string]any{"limit": 1}) // starts the engine, which starts the backfill
	var before int
	eventually(t, 60*time.Second, "the backfill to begin", func() bool {
		before, _ = e.vectorsOf()
		return before > 0
	})
	pid := theEngine(t, e, nil)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitExit(t, pid)
	if before >= total {
		t.Fatalf("the backfill had finished (%d of %d) before the kill: nothing left to resume", before, total)
	}
	h.call("memory_list", map[string]any{"limit": 1}) // a new engine, which resumes
	eventually(t, 120*time.Second, "every memory embedded after the restart", func() bool {
		n, of := e.vectorsOf()
		return n == total && of == total
	})
	t.Logf("%d of %d embedded when the engine was killed; the next engine embedded the rest", before, total)
}

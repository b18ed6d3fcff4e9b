package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/embed/embedtest"
	"github.com/ai-memory/ai-memory/internal/embed/modelfiles"
	"github.com/ai-memory/ai-memory/internal/engine/settings"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// TestStopJoinsEverythingAndKeepsAcknowledgedWrites stops an engine while
// writers store and the embedder embeds through an endpoint: when Serve
// returns, no goroutine of the engine's code is left (the store is closed,
// nothing may still use it), and every write it acknowledged is there
// after a restart; the rest were refused.
func TestStopJoinsEverythingAndKeepsAcknowledgedWrites(t *testing.T) {
	dir := shortDir(t)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	// An endpoint that gives every text the same vector: the embedder
	// is busy while the engine stops.
	embeddings := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Input []string }
		json.NewDecoder(r.Body).Decode(&req)
		data := make([]map[string]any, len(req.Input))
		for i := range data {
			data[i] = map[string]any{"index": i, "embedding": []float64{1, 0, 0, 0}}
		}
		json.NewEncoder(w).Encode(map[string]any{"data": data})
	}))
	defer embeddings.Close()
	toml := fmt.Sprintf("[models.embeddings]\nbase_url = %q\nmodel = \"m\"\n", embeddings.URL)
	if err := os.WriteFile(filepath.Join(dir, settings.File), []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	stopWhileWriting(t, Options{DataDir: dir, IdleTimeout: -1, Logger: quiet(t)})
}

// The same with the local model, whose embedding of a write is CPU work
// the stop cannot cut short: Serve returns only after it.
func TestStopJoinsTheLocalModel(t *testing.T) {
	found := modelfiles.Found{Name: "local", Dir: embedtest.ModelDir(t)}
	stopWhileWriting(t, Options{DataDir: shortDir(t), IdleTimeout: -1, Logger: quiet(t), Model: &found})
}

// stopWhileWriting serves opts, stops the engine while four writers store,
// checks that no goroutine of the engine outlives Serve, and that a
// restarted engine has every write the first acknowledged.
func stopWhileWriting(t *testing.T, opts Options) {
	t.Helper()
	dir := opts.DataDir
	ctx, stop := context.WithCancel(storagetest.Operator())
	done := serveAsync(ctx, opts)
	c := dial(t, dir)

	const writers = 4
	acked := make(chan string, 1<<16)
	var running sync.WaitGroup
	for w := range writers {
		running.Go(func() {
			for i := 0; ; i++ {
				// The client waits for an engine to come back: bounded.
				call, cancel := context.WithTimeout(storagetest.Operator(), 2*time.Second)
				r, err := c.StoreMemory(call, &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{
					Title: fmt.Sprintf("writer %d note %d", w, i), Content: "stored while the engine stops", Confidence: 1}})
				cancel()
				if err != nil {
					return // refused: the engine is stopping
				}
				acked <- r.GetMemory().GetId()
			}
		})
	}
	for range 40 { // writes are flowing
		select {
		case <-acked:
		case <-time.After(10 * time.Second):
			t.Fatal("no write acknowledged")
		}
	}
	stop()
	if err := wait(t, done, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if leaked := engineGoroutines(); len(leaked) > 0 {
		t.Errorf("goroutines of the engine still running after Serve returned:\n%s", strings.Join(leaked, "\n\n"))
	}
	writersDone := make(chan struct{})
	go func() { running.Wait(); close(writersDone) }()
	select {
	case <-writersDone:
	case <-time.After(10 * time.Second):
		t.Fatal("a write neither acknowledged nor refused after the engine stopped")
	}
	close(acked)
	var ids []string
	for id := range acked {
		ids = append(ids, id)
	}

	ctx2, stop2 := context.WithCancel(storagetest.Operator())
	done2 := serveAsync(ctx2, opts)
	defer func() {
		stop2()
		wait(t, done2, 10*time.Second)
	}()
	got, err := dial(t, dir).GetMemories(storagetest.Operator(), &aimemoryv1.GetMemoriesRequest{Ids: ids})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.GetMemories()) != len(ids) {
		t.Errorf("after a restart %d of %d acknowledged writes are there", len(got.GetMemories()), len(ids))
	}
}

// engineGoroutines are the stacks of goroutines running the engine's own
// (non-test) code, the local model's included.
func engineGoroutines() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var leaked []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if lines := strings.SplitN(g, "\n", 3); len(lines) > 1 && strings.HasPrefix(lines[1], "runtime.goexit1(") {
			continue // its function returned; the runtime is ending it (a thread-locked one takes a moment)
		}
		for _, line := range strings.Split(g, "\n") {
			line = strings.TrimSpace(line)
			if (strings.Contains(line, "/internal/engine/") || strings.Contains(line, "/internal/embed/")) && !strings.Contains(line, "_test.go:") {
				leaked = append(leaked, g)
				break
			}
		}
	}
	return leaked
}

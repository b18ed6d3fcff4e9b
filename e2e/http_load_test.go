package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ai-memory/ai-memory/internal/testwait"
)

const (
	loadSessions  = 50
	loadCalls     = 200
	loadPrincipal = 5 // sessions are spread over this many principals
)

// loadSession is one client of the load: its own MCP session.
type loadSession struct {
	c  *client.Client
	ns string
}

func (s *served) loadSessions(t *testing.T, keys []string) []*loadSession {
	t.Helper()
	out := make([]*loadSession, loadSessions)
	for i := range out {
		p := i % len(keys)
		tr, err := transport.NewStreamableHTTP(s.url, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + keys[p]}))
		if err != nil {
			t.Fatal(err)
		}
		c := client.NewClient(tr)
		if err := c.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		req := mcp.InitializeRequest{}
		req.Params.ProtocolVersion = "2025-06-18"
		req.Params.ClientInfo = mcp.Implementation{Name: "load", Version: "1"}
		if _, err := c.Initialize(context.Background(), req); err != nil {
			t.Fatalf("initialize session %d: %v", i, err)
		}
		t.Cleanup(func() { c.Close() })
		out[i] = &loadSession{c: c, ns: fmt.Sprintf("p%d", p)}
	}
	return out
}

// callText runs a tool; an isError result is an error.
func callText(ctx context.Context, c *client.Client, name string, args map[string]any) (string, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = name, args
	res, err := c.CallTool(ctx, req)
	if err != nil {
		return "", err
	}
	var text string
	for _, x := range res.Content {
		if tc, ok := x.(mcp.TextContent); ok {
			text += tc.Text
		}
	}
	if res.IsError {
		return "", fmt.Errorf("%s: %s", name, text)
	}
	return text, nil
}

// runLoad drives every session through loadCalls calls, alternating store
// and recall, and returns the ids of the acknowledged stores. stopAfter > 0
// calls onStop once that many stores were acknowledged; errors after it are
// expected and end the session.
func runLoad(t *testing.T, sessions []*loadSession, round string, stopAfter int64, onStop func()) (acked map[string]string, errs int64, elapsed time.Duration) {
	var mu sync.Mutex
	acked = map[string]string{} // id → namespace
	var n, nerr atomic.Int64
	var once sync.Once
	stopped := make(chan struct{})
	var wg sync.WaitGroup
	start := time.Now()
	for g, s := range sessions {
		wg.Go(func() {
			for i := range loadCalls {
				select {
				case <-stopped:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				var err error
				if i%2 == 0 {
					var text string
					text, err = callText(ctx, s.c, "memory_store", map[string]any{"namespace": s.ns,
						"title": fmt.Sprintf("%s s%d c%d", round, g, i), "content": fmt.Sprintf("load %s session %d call %d zebra", round, g, i)})
					if err == nil {
						var r struct{ ID string }
						if err = json.Unmarshal([]byte(text), &r); err == nil {
							mu.Lock()
							acked[r.ID] = s.ns
							mu.Unlock()
							if n.Add(1) == stopAfter {
								once.Do(func() { onStop(); close(stopped) })
							}
						}
					}
				} else {
					_, err = callText(ctx, s.c, "memory_recall", map[string]any{"context": "zebra load", "namespace": s.ns, "limit": 5})
				}
				cancel()
				if err != nil {
					nerr.Add(1)
					if stopAfter == 0 {
						t.Errorf("session %d call %d: %v", g, i, err)
					}
					return // a hung server must not hold the session for every call's timeout
				}
			}
		})
	}
	wg.Wait()
	return acked, nerr.Load(), time.Since(start)
}

// present checks that every acknowledged store can be read back.
func present(t *testing.T, s *served, keys []string, acked map[string]string) {
	t.Helper()
	byNS := map[string]*host{}
	for i, k := range keys {
		byNS[fmt.Sprintf("p%d", i)] = s.connect(k, nil)
	}
	missing := 0
	for id, ns := range acked {
		if _, isErr := byNS[ns].call("memory_get", map[string]any{"id": id}); isErr {
			missing++
		}
	}
	if missing > 0 {
		t.Fatalf("%d of %d acknowledged writes are missing", missing, len(acked))
	}
}

// 50 sessions × 200 calls of mixed store and recall over HTTP: no errors,
// no lost writes, bounded memory; then again with the server and the
// engine killed -9 mid-load, and every acknowledged write is there after
// a restart.
func TestHTTPLoadAndKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	e := newEnv(t)
	var keys []string
	for p := range loadPrincipal {
		keys = append(keys, e.token(fmt.Sprintf("load%d", p), "--namespace", fmt.Sprintf("p%d", p)))
	}
	s := e.serve()
	warm := s.connect(keys[0], nil) // the engine and core plugin up
	warm.ok("memory_store", map[string]any{"format": "json", "title": "warm", "content": "up", "namespace": "p0"})
	base := rssKiB(t, s.cmd.Process.Pid)
	sessions := s.loadSessions(t, keys)
	idle := rssKiB(t, s.cmd.Process.Pid)
	t.Logf("serve RSS %d KiB with one session, %d KiB with %d more idle sessions over %d principals: %.1f KiB per idle session",
		base, idle, loadSessions, loadPrincipal, float64(idle-base)/loadSessions)
	acked, errs, elapsed := runLoad(t, sessions, "r1", 0, nil)
	after := rssKiB(t, s.cmd.Process.Pid)
	calls := loadSessions * loadCalls
	t.Logf("%d calls from %d sessions in %v: %.0f calls/s, %d errors; serve RSS %d KiB with idle sessions, %d KiB after",
		calls, loadSessions, elapsed.Round(time.Millisecond), float64(calls)/elapsed.Seconds(), errs, idle, after)
	if errs != 0 || len(acked) != calls/2 {
		t.Fatalf("%d errors, %d of %d stores acknowledged", errs, len(acked), calls/2)
	}
	if after > 512*1024 {
		t.Errorf("serve RSS %d KiB after the load", after)
	}
	present(t, s, keys, acked)

	// Round 2: kill -9 the server and the engine after 1,500 stores.
	engines := e.enginePids()
	acked2, _, _ := runLoad(t, sessions, "r2", 1500, func() {
		s.cmd.Process.Signal(syscall.SIGKILL)
		for _, pid := range engines {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	testwait.Recv(t, s.done, "the killed server to exit")
	eventually(t, 10*time.Second, "engine to die", func() bool { return len(e.enginePids()) == 0 })
	if len(acked2) < 1500 {
		t.Fatalf("only %d stores acknowledged before the kill", len(acked2))
	}
	restarted := e.serve()
	present(t, restarted, keys, acked2)
	present(t, restarted, keys, acked)
	t.Logf("killed -9 after %d acknowledged stores; all present after restart", len(acked2))
}

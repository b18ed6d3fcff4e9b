package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/boltstore"
)

// ackedWrite is a store the client saw succeed: it must survive any kill.
type ackedWrite struct {
	namespace, title, content string
}

// ackLog collects acknowledged writes and wakes whoever waits for more.
type ackLog struct {
	mu     sync.Mutex
	writes map[string]ackedWrite // by memory id
	more   chan struct{}         // a signal: the count grew
}

func (l *ackLog) add(id string, w ackedWrite) {
	l.mu.Lock()
	l.writes[id] = w
	l.mu.Unlock()
	select {
	case l.more <- struct{}{}:
	default:
	}
}

func (l *ackLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.writes)
}

// waitFor blocks until at least n writes were acknowledged.
func (l *ackLog) waitFor(t *testing.T, n int, what string) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for l.count() < n {
		select {
		case <-l.more:
		case <-deadline:
			t.Fatalf("timed out waiting for %s (%d of %d writes acknowledged)", what, l.count(), n)
		}
	}
}

// TestEngineKillNineLoop kills the engine with SIGKILL at random moments
// while sixteen writers on two hosts keep storing, over 20 rounds (every
// fifth a SIGTERM, which leaves an index snapshot): enough stores in flight
// that the engine commits them in groups (its log says so), so kills land
// inside shared transactions. Every acknowledged write is there afterwards,
// bbolt's own consistency check passes on the file once every process is
// gone, and so does the keyword index's check against the records.
func TestEngineKillNineLoop(t *testing.T) {
	const rounds, writers = 20, 16
	seed := rand.Uint64()
	t.Logf("seed %d", seed) // a failing order can be replayed with this seed
	rng := rand.New(rand.NewPCG(seed, 0))

	e := newEnv(t)
	hosts := []*host{e.startHost(nil), e.startHost(nil)}
	acks := &ackLog{writes: map[string]ackedWrite{}, more: make(chan struct{}, 1)}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	halt := sync.OnceFunc(func() { close(stop); wg.Wait() })
	defer halt() // also when a check below fails
	var unacked atomic.Int64
	var sample atomic.Value // one error an unacknowledged write got
	for w := range writers {
		h := hosts[w%len(hosts)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				// At most 150 writes per namespace, so one memory_list shows them all.
				aw := ackedWrite{namespace: fmt.Sprintf("kill/w%d/%d", w, i/150), title: fmt.Sprintf("writer %d write %d", w, i),
					content: fmt.Sprintf("content of write %d by writer %d", i, w)}
				text, isErr, err := h.tryCall("memory_store", map[string]any{"format": "json", "title": aw.title, "content": aw.content, "namespace": aw.namespace})
				if err != nil || isErr { // not acknowledged: it may or may not have landed
					unacked.Add(1)
					if err != nil {
						text = err.Error()
					}
					sample.CompareAndSwap(nil, text)
					continue
				}
				var res struct{ ID string }
				if json.Unmarshal([]byte(text), &res) != nil || res.ID == "" {
					t.Errorf("store result without an id: %s", text)
					return
				}
				acks.add(res.ID, aw)
			}
		}()
	}

	killed := map[int]bool{}
	for round := range rounds {
		// A random number of acknowledgements in, with the other writers' calls in flight.
		acks.waitFor(t, acks.count()+1+rng.IntN(25), fmt.Sprintf("writes before kill %d", round+1))
		pid := theEngine(t, e, killed)
		// Every fifth round stops the engine cleanly instead, so it writes
		// an index snapshot and the kills after it restart from that
		// snapshot and replay its log.
		sig := syscall.SIGKILL
		if round%5 == 4 {
			sig = syscall.SIGTERM
		}
		if err := syscall.Kill(pid, sig); err != nil {
			t.Fatalf("kill engine: %v", err)
		}
		killed[pid] = true
		waitExit(t, pid)
		// A host respawns it; a write acknowledged after that went to the new engine.
		theEngine(t, e, killed)
		acks.waitFor(t, acks.count()+1, fmt.Sprintf("a write after kill %d", round+1))
	}
	halt()

	// One last kill with nothing in flight: the writes acknowledged since the
	// previous kill must be on disk too, not only in the engine's memory.
	pid := theEngine(t, e, killed)
	syscall.Kill(pid, syscall.SIGKILL)
	killed[pid] = true
	waitExit(t, pid)
	eventually(t, 15*time.Second, "the engine to come back", func() bool {
		_, isErr, err := hosts[0].tryCall("memory_list", map[string]any{"limit": 1, "format": "json"})
		return err == nil && !isErr
	})

	byNamespace := map[string]map[string]ackedWrite{}
	for id, w := range acks.writes {
		if byNamespace[w.namespace] == nil {
			byNamespace[w.namespace] = map[string]ackedWrite{}
		}
		byNamespace[w.namespace][id] = w
	}
	lost := 0
	for ns, want := range byNamespace {
		list := hosts[0].ok("memory_list", map[string]any{"namespace": ns, "limit": 200, "format": "json"})
		have := map[string]map[string]any{}
		mems, _ := list["memories"].([]any)
		for _, m := range mems {
			mm := m.(map[string]any)
			have[mm["id"].(string)] = mm
		}
		for id, w := range want {
			m, ok := have[id]
			if !ok || m["title"] != w.title || m["content"] != w.content {
				lost++
				if lost <= 5 {
					t.Errorf("acknowledged write %s (%s in %s) lost or changed: %v", id, w.title, ns, m)
				}
			}
		}
	}
	t.Logf("%d rounds: %d writes acknowledged, %d lost; %d failed while the engine was down (such as %q)",
		rounds, len(acks.writes), lost, unacked.Load(), sample.Load())
	if lost > 0 {
		t.Fatalf("%d of %d acknowledged writes lost", lost, len(acks.writes))
	}

	for _, h := range hosts {
		h.kill9()
	}
	for _, p := range e.enginePids() {
		syscall.Kill(p, syscall.SIGKILL)
		waitExit(t, p)
	}
	checkBolt(t, filepath.Join(e.dataDir, "memory.db"))
	checkIndex(t, filepath.Join(e.dataDir, "memory.db"))
	largest := largestGroupCommit(t, filepath.Join(e.dataDir, "engine.log"))
	t.Logf("largest group commit: %d writes", largest)
	if largest < 2 {
		t.Fatalf("no engine committed two writes together (engine.log): the kills never hit a group commit")
	}
	// New memories leave no index log entry (the events since the
	// snapshot name them): some start after a kill must have replayed
	// memories over a snapshot, and the checks above found none lost.
	if replays := snapshotReplays(t, filepath.Join(e.dataDir, "engine.log")); replays == 0 {
		t.Fatalf("no engine start replayed memories over an index snapshot (engine.log)")
	} else {
		t.Logf("%d engine starts replayed memories over a snapshot", replays)
	}
}

// snapshotReplays counts the engine starts that loaded the index from a
// snapshot and replayed at least one memory.
func snapshotReplays(t *testing.T, path string) int {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.Contains(line, `msg="store open"`) && strings.Contains(line, " from_snapshot=true ") && !strings.Contains(line, " replayed=0 ") {
			n++
		}
	}
	return n
}

// largestGroupCommit is the most writes one transaction took, over every
// engine that logged to path (the store logs each new largest).
func largestGroupCommit(t *testing.T, path string) int {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	largest := 0
	for _, line := range strings.Split(string(raw), "\n") {
		if !strings.Contains(line, `msg="group commit: largest so far"`) {
			continue
		}
		_, after, _ := strings.Cut(line, " writes=")
		n, err := strconv.Atoi(strings.Fields(after + " ")[0])
		if err != nil {
			t.Fatalf("engine.log: unreadable group commit line %q", line)
		}
		largest = max(largest, n)
	}
	return largest
}

// checkIndex opens the file as the engine does after a kill -9 (the
// keyword index from its snapshot and log, or rebuilt) and checks the
// index against every record.
func checkIndex(t *testing.T, path string) {
	t.Helper()
	s, err := boltstore.Open(context.Background(), path, storage.Options{OpenTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.CheckConsistency(context.Background()); err != nil {
		t.Fatalf("index after the kills: %v", err)
	}
}

// theEngine waits for the one engine of the data dir that was not killed
// yet. Both hosts respawn it; the one that loses the flock exits at once.
func theEngine(t *testing.T, e *env, killed map[int]bool) int {
	t.Helper()
	var pid int
	eventually(t, 15*time.Second, "one live engine", func() bool {
		var live []int
		for _, p := range e.enginePids() {
			if !killed[p] {
				live = append(live, p)
			}
		}
		if len(live) != 1 { // none yet, or a second host's engine about to lose the lock and exit
			return false
		}
		pid = live[0]
		return true
	})
	return pid
}

// waitExit waits until pid is gone (or a zombie), checking every 2 ms: a
// process killed with SIGKILL is gone within a few.
func waitExit(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still alive 5s after SIGKILL", pid)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// checkBolt opens a bbolt file read-only, as after a crash, and runs bbolt's
// own consistency check over every page.
func checkBolt(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 2 * time.Second, ReadOnly: true})
	if err != nil {
		t.Fatalf("bbolt file does not open clean: %v", err)
	}
	defer db.Close()
	if err := db.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			return err
		}
		return nil
	}); err != nil {
		t.Fatalf("bbolt consistency check: %v", err)
	}
}

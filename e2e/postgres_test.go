package e2e

// Engines on PostgreSQL: several data dirs (each its own engine, socket,
// logs and keys) on one database, as a team's machines would share it.
// The cluster is pgtest's: one per test binary, started on first use (or
// one of a test's own when the test restarts it); without PostgreSQL these
// tests fail in CI and are skipped elsewhere.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ai-memory/ai-memory/internal/engine/audit"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/pgstore"
	"github.com/ai-memory/ai-memory/internal/engine/storage/pgstore/pgtest"
	"github.com/ai-memory/ai-memory/internal/keyfile"
)

// envBackend = "postgres" gives every newEnv a data dir on a fresh database
// of the shared test cluster, so any family's e2e tests run on PostgreSQL:
// AI_MEMORY_TEST_BACKEND=postgres AI_MEMORY_TEST_BIN=$PWD/bin go test ./e2e -run TestX
const envBackend = "AI_MEMORY_TEST_BACKEND"

// usePostgres points the env's engine at dsn through config.toml (which
// the first host records in the data dir's engine.toml).
func (e *env) usePostgres(dsn string) {
	e.dsn = dsn
	e.storage = fmt.Sprintf("[storage]\nbackend = \"postgres\"\ndsn = %q\n", dsn)
	e.writeConfig("")
	e.shareAuditKey(dsn)
}

// usePostgresEnv chooses the backend in config.toml and passes the DSN in
// the environment only (AI_MEMORY_POSTGRES_DSN, the way to keep a password
// out of files).
func (e *env) usePostgresEnv(dsn string) {
	e.storage = "[storage]\nbackend = \"postgres\"\n"
	e.extra = append(e.extra, "AI_MEMORY_POSTGRES_DSN="+dsn)
	e.writeConfig("")
	e.shareAuditKey(dsn)
}

// databaseUsers are the envs on each DSN (shareAuditKey).
var databaseUsers = struct {
	sync.Mutex
	m map[string][]*env
}{m: map[string][]*env{}}

// shareAuditKey gives every env on one database the same audit.key, the
// operator's step for engines sharing a database (docs/deploy.md): the
// first env's key if its engine made one already, else a new one for all.
// One env alone on a database keeps whatever its engine makes.
func (e *env) shareAuditKey(dsn string) {
	databaseUsers.Lock()
	defer databaseUsers.Unlock()
	others := databaseUsers.m[dsn]
	databaseUsers.m[dsn] = append(others, e)
	if len(others) == 0 {
		return
	}
	key, err := os.ReadFile(filepath.Join(others[0].dataDir, audit.KeyFile))
	if errors.Is(err, fs.ErrNotExist) {
		key = make([]byte, keyfile.Size)
		rand.Read(key)
	} else if err != nil {
		e.t.Fatal(err)
	}
	for _, x := range append(others, e) {
		if err := os.MkdirAll(x.dataDir, 0o700); err != nil {
			e.t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(x.dataDir, audit.KeyFile), key, 0o600); err != nil {
			e.t.Fatal(err)
		}
	}
}

// token is a word no other write contains (letters only, so the analyzer
// keeps it whole): n in base 26 after a fixed prefix.
func token(prefix string, n int) string {
	b := []byte(prefix)
	for {
		b = append(b, byte('a'+n%26))
		n /= 26
		if n == 0 {
			return string(b)
		}
	}
}

// ack is an acknowledged store: its id, its unique word, and when the
// writer had the answer.
type ack struct {
	id, word string
	at       time.Time
}

// acks collects acknowledged writes from many writers.
type acks struct {
	mu   sync.Mutex
	list []ack
}

func (a *acks) add(x ack) {
	a.mu.Lock()
	a.list = append(a.list, x)
	a.mu.Unlock()
}

func (a *acks) ids() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]string, len(a.list))
	for i, x := range a.list {
		out[i] = x.id
	}
	return out
}

func (a *acks) len() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.list)
}

// dbCheck reads the shared database directly: the memories' ids, and
// whether any (namespace, title) is there twice.
func dbCheck(t *testing.T, dsn string) (ids map[string]bool, dupTitles int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if err := c.QueryRow(ctx, `SELECT count(*) - count(DISTINCT (namespace, title)) FROM memories`).Scan(&dupTitles); err != nil {
		t.Fatal(err)
	}
	rows, err := c.Query(ctx, `SELECT id FROM memories`)
	if err != nil {
		t.Fatal(err)
	}
	ids = map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids[id] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return ids, dupTitles
}

// missing are the acknowledged ids not in have.
func missing(acked []string, have map[string]bool) []string {
	var out []string
	for _, id := range acked {
		if !have[id] {
			out = append(out, id)
		}
	}
	return out
}

// storeArgs is write n of writer w on host name.
func storeArgs(name string, w, n int) (map[string]any, string) {
	word := token("zq"+name, w*100000+n)
	return map[string]any{
		"title":   fmt.Sprintf("peer %s writer %d write %d", name, w, n),
		"content": "written by host " + name + ", word " + word,
		"format":  "json", // the full id
	}, word
}

// visible waits until h's search finds word, polling (each poll is a full
// MCP round trip): it returns when it was found, and the start of the last
// poll that did not find it (zero if the first one did).
func visible(h *host, word string, giveUp time.Duration) (found, lastMiss time.Time, ok bool) {
	deadline := time.Now().Add(giveUp)
	for time.Now().Before(deadline) {
		start := time.Now()
		text, isErr, err := h.tryCall("memory_search", map[string]any{"query": word, "format": "json"})
		if err == nil && !isErr && !strings.Contains(text, `"count":0`) && strings.Contains(text, word) {
			return time.Now(), lastMiss, true
		}
		lastMiss = start
		time.Sleep(5 * time.Millisecond) // the pace of the polling, not an assertion
	}
	return time.Time{}, lastMiss, false
}

// Two engines on one database (two data dirs, one DSN, one given in
// engine.toml and one in the environment), a host each, 4 writers × 500
// stores per host at once: nothing lost, no title twice, and each host
// finds the other's writes (how soon after their acknowledgement is
// logged, not asserted: a loaded machine must not fail a correct test).
func TestPostgresTwoEnginesWriteConcurrently(t *testing.T) {
	dsn := pgtest.DSN(t)
	ea, eb := newEnv(t), newEnv(t)
	ea.usePostgres(dsn)
	eb.usePostgresEnv(dsn)
	hosts := map[string]*host{"a": ea.startHost(nil), "b": eb.startHost(nil)}
	other := map[string]string{"a": "b", "b": "a"}

	const writers, writes, sampleEvery = 4, 500, 5
	var (
		all    acks
		wg     sync.WaitGroup
		checks = make(chan struct {
			on, word string
			at       time.Time
		}, writers*writes*2)
		mu      sync.Mutex
		lags    []time.Duration // acknowledgement → found by the other host
		late    []string        // a poll begun over 1 s after the ack still missed (logged)
		unseen  []string
		started = time.Now()
	)
	var checkers sync.WaitGroup
	var blind atomic.Bool // a write never seen: the rest are not polled for 10 s each
	for range 4 {
		checkers.Go(func() {
			for c := range checks {
				if blind.Load() {
					mu.Lock()
					unseen = append(unseen, c.word+" (not polled)")
					mu.Unlock()
					continue
				}
				found, lastMiss, ok := visible(hosts[c.on], c.word, 10*time.Second)
				mu.Lock()
				switch {
				case !ok:
					unseen = append(unseen, c.word)
					blind.Store(true)
				default:
					lags = append(lags, found.Sub(c.at))
					if !lastMiss.IsZero() && lastMiss.Sub(c.at) > time.Second {
						late = append(late, fmt.Sprintf("%s: missed %v after its ack", c.word, lastMiss.Sub(c.at)))
					}
				}
				mu.Unlock()
			}
		})
	}
	for name, h := range hosts {
		for w := range writers {
			wg.Go(func() {
				for n := range writes {
					args, word := storeArgs(name, w, n)
					text, isErr, err := h.tryCall("memory_store", args)
					if err != nil || isErr {
						t.Errorf("host %s writer %d write %d: %v %.200s", name, w, n, err, text)
						return
					}
					id := answerField(text, "id")
					if id == "" {
						t.Errorf("host %s writer %d write %d: no id in %.200s", name, w, n, text)
						return
					}
					now := time.Now()
					all.add(ack{id: id, word: word, at: now})
					if n%sampleEvery == 0 {
						checks <- struct {
							on, word string
							at       time.Time
						}{other[name], word, now}
					}
				}
			})
		}
	}
	wg.Wait()
	took := time.Since(started)
	close(checks)
	checkers.Wait()
	waitOneLeaderEach(t, dsn) // two engines, one leader per task

	have, dups := dbCheck(t, dsn)
	if lost := missing(all.ids(), have); len(lost) > 0 || all.len() != 2*writers*writes {
		t.Fatalf("%d of %d acknowledged writes missing from the database (%d acknowledged of %d): %v",
			len(lost), all.len(), all.len(), 2*writers*writes, lost[:min(len(lost), 5)])
	}
	if dups != 0 || len(have) != 2*writers*writes {
		t.Fatalf("database holds %d memories with %d duplicate titles, want %d and 0", len(have), dups, 2*writers*writes)
	}
	if len(unseen) > 0 {
		t.Fatalf("cross-host visibility: %d never seen: %v", len(unseen), unseen[:min(len(unseen), 3)])
	}
	if len(late) > 0 {
		t.Logf("%d seen over 1 s after their ack: %v", len(late), late[:min(len(late), 3)])
	}
	slices.Sort(lags)
	t.Logf("%d stores by 2 hosts × %d writers in %v (%.0f stores/s); %d cross-host checks: ack → found by the other host p50 %v, p95 %v, max %v",
		all.len(), writers, took.Round(time.Millisecond), float64(all.len())/took.Seconds(), len(lags),
		pct(lags, 0.5), pct(lags, 0.95), lags[len(lags)-1])
}

// answerField is one string field of a tool's JSON answer, "" when it has
// none. Writers call it off the test goroutine: it reports, never fails.
func answerField(text, field string) string {
	key := `"` + field + `":"`
	i := strings.Index(text, key)
	if i < 0 {
		return ""
	}
	rest := text[i+len(key):]
	return rest[:strings.IndexByte(rest, '"')]
}

// writeLoop stores on h until stop closes, recording acknowledged writes
// and every failure's text; each call's duration goes to slowest.
type writeLoop struct {
	name     string
	h        *host
	acked    acks
	mu       sync.Mutex
	failures []string
	slowest  time.Duration
	calls    int
}

func (l *writeLoop) run(wg *sync.WaitGroup, w int, stop <-chan struct{}) {
	wg.Go(func() {
		for n := 0; ; n++ {
			select {
			case <-stop:
				return
			default:
			}
			args, word := storeArgs(l.name, w, n)
			start := time.Now()
			text, isErr, err := l.h.tryCall("memory_store", args)
			took := time.Since(start)
			l.mu.Lock()
			l.calls++
			l.slowest = max(l.slowest, took)
			id := answerField(text, "id")
			switch {
			case err != nil:
				l.failures = append(l.failures, "transport: "+err.Error())
			case isErr:
				l.failures = append(l.failures, text)
			case id == "":
				l.failures = append(l.failures, "no id in the answer: "+text)
			}
			l.mu.Unlock()
			if err == nil && !isErr && id != "" {
				l.acked.add(ack{id: id, word: word, at: time.Now()})
			}
		}
	})
}

func (l *writeLoop) failed() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.failures)
}

// waitAcks waits until l has n more acknowledged writes than it had.
func (l *writeLoop) waitAcks(t *testing.T, more int, what string) {
	t.Helper()
	n := l.acked.len() + more
	eventually(t, 60*time.Second, what, func() bool { return l.acked.len() >= n })
}

// kill -9 of one engine while its host writes: every write it
// acknowledged is in the database, the host's next engine serves again,
// and the other engine keeps serving throughout, without a failed call.
func TestPostgresKillNineEngineMidWrite(t *testing.T) {
	dsn := pgtest.DSN(t)
	ea, eb := newEnv(t), newEnv(t)
	ea.usePostgres(dsn)
	eb.usePostgres(dsn)
	a := &writeLoop{name: "a", h: ea.startHost(nil)}
	b := &writeLoop{name: "b", h: eb.startHost(nil)}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 2 {
		a.run(&wg, w, stop)
		b.run(&wg, w, stop)
	}
	a.waitAcks(t, 100, "host a's first writes")
	killed := ea.enginePids()
	if len(killed) == 0 {
		t.Fatal("no engine for data dir a")
	}
	for _, pid := range killed {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	bAtKill := b.acked.len()
	a.waitAcks(t, 100, "host a writing again on a new engine")
	b.waitAcks(t, 100, "host b writing on")
	close(stop)
	wg.Wait()
	if slices.ContainsFunc(ea.enginePids(), func(pid int) bool { return slices.Contains(killed, pid) }) {
		t.Fatal("the killed engine is still there")
	}
	waitOneLeaderEach(t, dsn) // whatever the killed engine led is led again

	have, dups := dbCheck(t, dsn)
	for _, l := range []*writeLoop{a, b} {
		if lost := missing(l.acked.ids(), have); len(lost) > 0 {
			t.Errorf("host %s: %d of %d acknowledged writes lost: %v", l.name, len(lost), l.acked.len(), lost[:min(len(lost), 5)])
		}
	}
	if dups != 0 {
		t.Errorf("%d duplicate titles", dups)
	}
	if n := b.failed(); n != 0 {
		t.Errorf("host b (other engine) failed %d calls: %q", n, b.failures[0])
	}
	// Host b finds host a's writes, those before the kill included.
	for _, x := range a.acked.list[:20] {
		if got := b.h.ok("memory_get", map[string]any{"id": x.id, "format": "json"}); got["id"] != x.id {
			t.Fatalf("host b cannot get %s: %v", x.id, got)
		}
	}
	t.Logf("host a: %d acknowledged, %d failed around the kill (%.120q); host b: %d acknowledged (%d after the kill), 0 failed",
		a.acked.len(), a.failed(), strings.Join(a.failures, " | "), b.acked.len(), b.acked.len()-bAtKill)
}

// The database restarted under load (this test's own cluster, stopped and
// started): calls in flight and calls while it is down fail clearly (a
// short isError saying the database is unavailable) and promptly, and
// both engines reconnect by themselves; nothing acknowledged is lost.
func TestPostgresDatabaseRestartUnderLoad(t *testing.T) {
	c := pgtest.NewCluster(t)
	dsn := c.DSN(t)
	ea, eb := newEnv(t), newEnv(t)
	ea.usePostgres(dsn)
	eb.usePostgres(dsn)
	loops := []*writeLoop{{name: "a", h: ea.startHost(nil)}, {name: "b", h: eb.startHost(nil)}}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, l := range loops {
		for w := range 2 {
			l.run(&wg, w, stop)
		}
	}
	for _, l := range loops {
		l.waitAcks(t, 50, "writes before the restart")
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	for _, l := range loops {
		before := l.failed()
		eventually(t, 30*time.Second, "calls failing while the database is down", func() bool { return l.failed() >= before+20 })
	}
	down := time.Since(stopped)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	for _, l := range loops {
		l.waitAcks(t, 50, "host "+l.name+" writing again after the restart")
	}
	back := time.Since(restarted)
	close(stop)
	wg.Wait()
	waitOneLeaderEach(t, dsn) // the leaders' sessions died with the server: taken again

	have, _ := dbCheck(t, dsn)
	for _, l := range loops {
		if lost := missing(l.acked.ids(), have); len(lost) > 0 {
			t.Errorf("host %s: %d of %d acknowledged writes lost: %v", l.name, len(lost), l.acked.len(), lost[:min(len(lost), 5)])
		}
		// A call hung on the restart ends at tryCall's deadline as a
		// transport failure, refused here; the slowest call is logged.
		for _, f := range l.failures {
			if strings.HasPrefix(f, "transport:") || !strings.Contains(f, "database unavailable") || len(f) > 200 {
				t.Errorf("host %s: unclear failure (%d bytes): %.300q", l.name, len(f), f)
				break
			}
		}
	}
	t.Logf("down %v: a %d failed of %d calls, b %d of %d; slowest call a %v, b %v; writing again %v after the start; e.g. %q",
		down.Round(time.Millisecond), loops[0].failed(), loops[0].calls, loops[1].failed(), loops[1].calls,
		loops[0].slowest.Round(time.Millisecond), loops[1].slowest.Round(time.Millisecond), back.Round(time.Millisecond), loops[0].failures[0])
}

// pct is the p-th fraction of sorted samples.
func pct(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(p*float64(len(sorted))))].Round(time.Microsecond)
}

// doctor names the backend, the database without its password, the
// schema and the capability flags; the password is nowhere in the data dir.
func TestPostgresDoctorReportsTheBackend(t *testing.T) {
	e := newEnv(t)
	e.usePostgresEnv(pgtest.DSN(t) + " password=s3cretpw")
	h := e.startHost(nil)
	h.ok("memory_store", map[string]any{"format": "json", "title": "doctor", "content": "on postgres"})
	out, code := e.doctor()
	if code != 0 || !contains(out, "storage", "postgres at postgres@", fmt.Sprintf("schema %d", pgstore.SchemaVersion),
		"capability shared_store", "capability vector_index") || strings.Contains(out, "s3cretpw") {
		t.Fatalf("doctor (exit %d):\n%s", code, out)
	}
	t.Logf("doctor:\n%s", out)
	for _, name := range []string{"engine.toml", "engine.log"} {
		data, err := os.ReadFile(filepath.Join(e.dataDir, name))
		if err != nil || strings.Contains(string(data), "s3cretpw") {
			t.Fatalf("%s holds the password (%v)", name, err)
		}
	}
}

// A postgres data dir without a DSN, or with a database that cannot be
// reached, fails every call saying so (the engine's reason, the database
// without its password), instead of a bare exit status.
func TestPostgresMisconfigurationFailsClearly(t *testing.T) {
	e := newEnv(t)
	e.storage = "[storage]\nbackend = \"postgres\"\n"
	e.writeConfig("")
	e.startHost(nil).fails("memory_store", map[string]any{"title": "t", "content": "c"}, `[storage] backend = "postgres" needs a DSN`)

	e2 := newEnv(t)
	e2.usePostgresEnv("host=/nonexistent/pg port=5432 user=team password=s3cretpw dbname=memory")
	text, isErr := e2.startHost(nil).call("memory_store", map[string]any{"title": "t", "content": "c"})
	if !isErr || !contains(text, "postgres team@/nonexistent/pg:5432/memory unreachable") || strings.Contains(text, "s3cretpw") {
		t.Fatalf("unreachable database: isError=%v %q", isErr, text)
	}
}

// leaderTasks are the background tasks every postgres engine leads or
// follows (the archive purge only with archive_max_days set).
var leaderTasks = []string{storage.TaskWebhooks, storage.TaskPruneChanges}

// waitOneLeaderEach waits until each of leaderTasks's advisory locks is
// held by exactly one session, and fails if any is ever held twice.
func waitOneLeaderEach(t *testing.T, dsn string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	eventually(t, 20*time.Second, "one leader per background task", func() bool {
		for _, task := range leaderTasks {
			class, obj := pgstore.LeaderLock(task)
			var holders int
			if err := c.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted
				AND classid = $1 AND objid = $2 AND objsubid = 2 AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
				class, obj).Scan(&holders); err != nil {
				t.Fatal(err)
			}
			if holders > 1 {
				t.Fatalf("task %s has %d leaders", task, holders)
			}
			if holders == 0 {
				return false
			}
		}
		return true
	})
}

// holdsInClear: secret is somewhere in the env's store at rest, as is:
// in the bbolt file, or in any row of its PostgreSQL database (a row as
// text shows bytea as hex, so both forms are looked for).
func (e *env) holdsInClear(t *testing.T, secret string) bool {
	t.Helper()
	if e.dsn == "" {
		db, err := os.ReadFile(filepath.Join(e.dataDir, "memory.db"))
		if err != nil {
			t.Fatal(err)
		}
		return strings.Contains(string(db), secret)
	}
	ctx := context.Background()
	c, err := pgx.Connect(ctx, e.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	rows, err := c.Query(ctx, `SELECT tablename FROM pg_tables WHERE schemaname = 'public'`)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	hexed := hex.EncodeToString([]byte(secret))
	for _, table := range tables {
		rows, err := c.Query(ctx, `SELECT t::text FROM `+pgx.Identifier{table}.Sanitize()+` t`)
		if err != nil {
			t.Fatal(err)
		}
		texts, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range texts {
			if strings.Contains(x, secret) || strings.Contains(x, hexed) {
				return true
			}
		}
	}
	return false
}

// ownDatabase gives fe, a second data dir made with e's config, a
// database of its own when e is on PostgreSQL (as a fresh data dir has):
// the same config with another DSN. On bbolt it changes nothing.
func (fe *env) ownDatabase(e *env) {
	if e.dsn == "" {
		return
	}
	cfg, err := os.ReadFile(e.config)
	if err != nil {
		fe.t.Fatal(err)
	}
	fe.dsn = pgtest.DSN(fe.t)
	fe.config = filepath.Join(filepath.Dir(fe.dataDir), filepath.Base(fe.dataDir)+".toml")
	if err := os.WriteFile(fe.config, []byte(strings.ReplaceAll(string(cfg), fmt.Sprintf("%q", e.dsn), fmt.Sprintf("%q", fe.dsn))), 0o600); err != nil {
		fe.t.Fatal(err)
	}
}

// Package pgtest gives tests a throwaway PostgreSQL: one cluster per test
// binary, started on first use (initdb + pg_ctl on a temporary directory,
// reached by a unix socket only), a fresh database per test; or a cluster
// of a test's own that it may stop and start (NewCluster), or that admits
// only connections that give its password (NewPasswordCluster). As root, which initdb refuses,
// the cluster runs as the postgres user. AI_MEMORY_TEST_PG_DSN points the
// tests at a server of one's own instead.
//
// A test that needs PostgreSQL and finds none fails when CI is set and is
// skipped, saying why, otherwise.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvDSN names an existing server to test against (its database is used
// only to create one database per test).
const EnvDSN = "AI_MEMORY_TEST_PG_DSN"

// EnvFsync, set, keeps the throwaway cluster durable (fsync on), for
// benchmarks that compare with bbolt's fsynced commits.
const EnvFsync = "AI_MEMORY_TEST_PG_FSYNC"

var (
	adminDSN   string // the shared cluster's maintenance database
	unusable   error  // why there is no server
	shared     *Cluster
	startOnce  sync.Once
	dbSeq      atomic.Int64
	createOnce sync.Mutex
)

// Main runs the package's tests and stops the shared cluster if one was
// started: call it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	StopShared()
	os.Exit(code)
}

// StopShared stops the cluster DSN started, if any (for a TestMain that
// does more than Main).
func StopShared() {
	if shared != nil {
		shared.remove()
	}
}

// ensure starts the shared cluster on first use (or checks EnvDSN's server).
func ensure() {
	startOnce.Do(func() {
		if dsn := os.Getenv(EnvDSN); dsn != "" {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := exec1(ctx, dsn, "SELECT 1"); err != nil {
				unusable = fmt.Errorf("%s: %w", EnvDSN, err)
				return
			}
			adminDSN = dsn
			return
		}
		shared, unusable = newCluster("")
		if unusable == nil {
			adminDSN = shared.admin
		}
	})
}

// need fails t in CI and skips it elsewhere when err says there is no server.
func need(t testing.TB, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("PostgreSQL is required in CI: %v", err)
	}
	t.Skipf("no PostgreSQL: %v (install postgresql, or set %s)", err, EnvDSN)
}

// DSN is a fresh, empty database for t on the shared cluster (started on
// first use, once per test binary); without a server, t fails in CI and
// is skipped elsewhere.
func DSN(t testing.TB) string {
	t.Helper()
	ensure()
	need(t, unusable)
	return newDatabase(t, adminDSN)
}

func newDatabase(t testing.TB, admin string) string {
	t.Helper()
	name := fmt.Sprintf("aimem_%d_%d", os.Getpid(), dbSeq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// CREATE DATABASE copies template1 and takes a lock on it: one at a time.
	createOnce.Lock()
	err := exec1(ctx, admin, "CREATE DATABASE "+name)
	createOnce.Unlock()
	if err != nil {
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := exec1(ctx, admin, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Logf("drop test database: %v", err)
		}
	})
	return withDB(admin, name)
}

// Cluster is a throwaway PostgreSQL cluster of one test's own, which the
// test may stop and start (a database restart under load).
type Cluster struct {
	admin   string // its maintenance database
	dir     string // socket, log, data
	data    string
	opts    string
	run     func(name string, args ...string) *exec.Cmd
	stopped bool
}

// NewCluster starts a cluster for t alone, removed when t ends; without
// initdb, t fails in CI and is skipped elsewhere (a server of one's own,
// EnvDSN, cannot be restarted by a test).
func NewCluster(t testing.TB) *Cluster {
	t.Helper()
	c, err := newCluster("")
	need(t, err)
	t.Cleanup(c.remove)
	return c
}

// NewPasswordCluster starts a cluster for t alone on which every
// connection, over its socket too, must authenticate with the superuser's
// password (scram-sha-256): its DSNs carry the password, and a process
// without one is refused. For tests that holding no DSN means no data.
func NewPasswordCluster(t testing.TB) *Cluster {
	t.Helper()
	raw := make([]byte, 18)
	rand.Read(raw)
	c, err := newCluster(base64.RawURLEncoding.EncodeToString(raw))
	need(t, err)
	t.Cleanup(c.remove)
	return c
}

// DSN is a fresh, empty database on c for t.
func (c *Cluster) DSN(t testing.TB) string { t.Helper(); return newDatabase(t, c.admin) }

// Stop shuts the server down (fast: sessions are cut, what was committed
// is on disk).
func (c *Cluster) Stop() error {
	out, err := c.run("pg_ctl", "-D", c.data, "-m", "fast", "-w", "-t", "30", "stop").CombinedOutput()
	if err != nil {
		return fmt.Errorf("pg_ctl stop: %v: %s", err, out)
	}
	c.stopped = true
	return nil
}

// Start starts it again, on the same socket.
func (c *Cluster) Start() error {
	out, err := c.run("pg_ctl", "-D", c.data, "-w", "-t", "30", "-l", filepath.Join(c.dir, "log"), "-o", c.opts, "start").CombinedOutput()
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(c.dir, "log"))
		return fmt.Errorf("pg_ctl start: %v: %s %s", err, out, log)
	}
	c.stopped = false
	return nil
}

func (c *Cluster) remove() {
	if !c.stopped {
		c.run("pg_ctl", "-D", c.data, "-m", "immediate", "-w", "stop").Run()
	}
	os.RemoveAll(c.dir)
}

func exec1(ctx context.Context, dsn, sql string) error {
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	_, err = c.Exec(ctx, sql)
	return err
}

// withDB is dsn naming database name instead (a later keyword wins; a
// URL gets its path replaced).
func withDB(dsn, name string) string {
	if u, err := url.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		u.Path = "/" + name
		return u.String()
	}
	return dsn + " dbname=" + name
}

// newCluster makes and starts a cluster in a temporary directory; with a
// password, every connection must give it (scram-sha-256).
func newCluster(password string) (*Cluster, error) {
	bin, err := findBin()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "aimem-pg-")
	if err != nil {
		return nil, err
	}
	run := func(name string, args ...string) *exec.Cmd {
		return exec.Command(filepath.Join(bin, name), args...)
	}
	owner := func(string) error { return nil }
	if os.Geteuid() == 0 { // initdb refuses root: the cluster is the postgres user's
		u, err := user.Lookup("postgres")
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("running as root and no postgres user to run the cluster as: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		run = func(name string, args ...string) *exec.Cmd {
			return exec.Command("runuser", append([]string{"-u", "postgres", "--", filepath.Join(bin, name)}, args...)...)
		}
		owner = func(path string) error { return os.Chown(path, uid, gid) }
	}
	c := &Cluster{dir: dir, data: filepath.Join(dir, "data"), run: run, stopped: true}
	auth := []string{"--auth=trust"}
	if password != "" {
		pwfile := filepath.Join(dir, "pwfile")
		if err := errors.Join(os.WriteFile(pwfile, []byte(password+"\n"), 0o600), owner(pwfile)); err != nil {
			c.remove()
			return nil, err
		}
		auth = []string{"--auth=scram-sha-256", "--pwfile=" + pwfile}
		defer os.Remove(pwfile) // only the cluster's verifier remains
	}
	if out, err := run("initdb", append([]string{"-D", c.data, "-U", "postgres", "--no-sync", "-E", "UTF8", "--locale=C"}, auth...)...).CombinedOutput(); err != nil {
		c.remove()
		return nil, fmt.Errorf("initdb: %v: %s", err, out)
	}
	// A unix socket in dir, no TCP; durability is not what these tests
	// test, unless EnvFsync asks for it (benchmarks against bbolt's fsync).
	c.opts = fmt.Sprintf("-k %s -c listen_addresses='' -c max_connections=200", dir)
	if os.Getenv(EnvFsync) == "" {
		c.opts += " -c fsync=off -c full_page_writes=off"
	}
	if err := c.Start(); err != nil {
		c.remove()
		return nil, err
	}
	c.admin = fmt.Sprintf("host=%s port=5432 user=postgres dbname=postgres sslmode=disable", dir)
	if password != "" {
		c.admin += " password=" + password
	}
	return c, nil
}

// findBin is the directory of initdb and pg_ctl: on PATH, else Debian's
// newest /usr/lib/postgresql/<version>/bin.
func findBin() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if p, err = filepath.EvalSymlinks(p); err == nil {
			return filepath.Dir(p), nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(dirs) == 0 {
		return "", errors.New("initdb not found (PATH, /usr/lib/postgresql/*/bin)")
	}
	sort.Slice(dirs, func(i, j int) bool { // 9 < 10 < 15: numerically
		a, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(dirs[i]))))
		b, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(dirs[j]))))
		return a < b
	})
	return filepath.Dir(dirs[len(dirs)-1]), nil
}

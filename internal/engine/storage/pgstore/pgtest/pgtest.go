// Package pgtest gives tests a throwaway PostgreSQL: one cluster per test
// binary (initdb + pg_ctl on a temporary directory, reached by a unix
// socket only), a fresh database per test. As root, which initdb refuses,
// the cluster runs as the postgres user. AI_MEMORY_TEST_PG_DSN points the
// tests at a server of one's own instead.
//
// A test that needs PostgreSQL and finds none fails when CI is set and is
// skipped, saying why, otherwise.
package pgtest

import (
	"context"
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
	adminDSN   string // the cluster's maintenance database
	unusable   error  // why there is no server
	stop       func()
	dbSeq      atomic.Int64
	createOnce sync.Mutex
)

// Main starts the cluster, runs the package's tests and stops it: call it
// from TestMain.
func Main(m *testing.M) {
	adminDSN, stop, unusable = start()
	code := m.Run()
	if stop != nil {
		stop()
	}
	os.Exit(code)
}

// DSN is a fresh, empty database for t; without a server, t fails in CI
// and is skipped elsewhere.
func DSN(t testing.TB) string {
	t.Helper()
	if unusable != nil || adminDSN == "" {
		if unusable == nil {
			unusable = errors.New("pgtest.Main was not called from TestMain")
		}
		if os.Getenv("CI") != "" {
			t.Fatalf("PostgreSQL is required in CI: %v", unusable)
		}
		t.Skipf("no PostgreSQL: %v (install postgresql, or set %s)", unusable, EnvDSN)
	}
	name := fmt.Sprintf("aimem_%d_%d", os.Getpid(), dbSeq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// CREATE DATABASE copies template1 and takes a lock on it: one at a time.
	createOnce.Lock()
	err := exec1(ctx, adminDSN, "CREATE DATABASE "+name)
	createOnce.Unlock()
	if err != nil {
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := exec1(ctx, adminDSN, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Logf("drop test database: %v", err)
		}
	})
	return withDB(adminDSN, name)
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

// start makes and starts the cluster; with EnvDSN set it only checks that
// server answers.
func start() (dsn string, stop func(), err error) {
	if dsn := os.Getenv(EnvDSN); dsn != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := exec1(ctx, dsn, "SELECT 1"); err != nil {
			return "", nil, fmt.Errorf("%s: %w", EnvDSN, err)
		}
		return dsn, nil, nil
	}
	bin, err := findBin()
	if err != nil {
		return "", nil, err
	}
	dir, err := os.MkdirTemp("", "aimem-pg-")
	if err != nil {
		return "", nil, err
	}
	run := func(name string, args ...string) *exec.Cmd {
		return exec.Command(filepath.Join(bin, name), args...)
	}
	if os.Geteuid() == 0 { // initdb refuses root: the cluster is the postgres user's
		u, err := user.Lookup("postgres")
		if err != nil {
			os.RemoveAll(dir)
			return "", nil, fmt.Errorf("running as root and no postgres user to run the cluster as: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return "", nil, err
		}
		run = func(name string, args ...string) *exec.Cmd {
			return exec.Command("runuser", append([]string{"-u", "postgres", "--", filepath.Join(bin, name)}, args...)...)
		}
	}
	data := filepath.Join(dir, "data")
	cleanup := func() { os.RemoveAll(dir) }
	if out, err := run("initdb", "-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C").CombinedOutput(); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("initdb: %v: %s", err, out)
	}
	// A unix socket in dir, no TCP; durability is not what these tests
	// test, unless EnvFsync asks for it (benchmarks against bbolt's fsync).
	opts := fmt.Sprintf("-k %s -c listen_addresses='' -c max_connections=200", dir)
	if os.Getenv(EnvFsync) == "" {
		opts += " -c fsync=off -c full_page_writes=off"
	}
	if out, err := run("pg_ctl", "-D", data, "-w", "-t", "30", "-l", filepath.Join(dir, "log"), "-o", opts, "start").CombinedOutput(); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "log"))
		cleanup()
		return "", nil, fmt.Errorf("pg_ctl start: %v: %s %s", err, out, log)
	}
	stop = func() {
		run("pg_ctl", "-D", data, "-m", "immediate", "-w", "stop").Run()
		cleanup()
	}
	return fmt.Sprintf("host=%s port=5432 user=postgres dbname=postgres sslmode=disable", dir), stop, nil
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

package cli

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schollz/progressbar/v3"

	"github.com/ai-memory/ai-memory/internal/engine"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/boltstore"
	"github.com/ai-memory/ai-memory/internal/engine/storage/pgstore"
	"github.com/ai-memory/ai-memory/internal/engine/storage/pgstore/pgtest"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func silentBar(total int64, what string) *progressbar.ProgressBar {
	return progressbar.DefaultSilent(total, what)
}

// TestMigrateCommand: migrate refuses a data dir whose engine holds the
// database, copies it once free and says so by kind, and a second run
// finds everything unchanged (the resumable path) and verifies again.
// (Interrupting and resuming: package migration's test.)
func TestMigrateCommand(t *testing.T) {
	dir := t.TempDir()
	src, err := boltstore.Open(context.Background(), filepath.Join(dir, engine.DBFile), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 25 {
		storagetest.Store(t, src, storagetest.Mem(fmt.Sprintf("note %d", i), "about migration"))
	}
	dsn := pgtest.DSN(t)
	var out bytes.Buffer
	err = migrateToPostgres(context.Background(), dir, dsn, 10, &out, silentBar)
	if err == nil || !strings.Contains(err.Error(), "in use by its engine") {
		t.Fatalf("migrate of a data dir in use: %v\n%s", err, out.String())
	}
	src.Close()

	for _, want := range []string{"memory                25        25        25         0", "memory                25        25         0        25"} {
		out.Reset()
		if err := migrateToPostgres(context.Background(), dir, dsn, 10, &out, silentBar); err != nil {
			t.Fatalf("migrate: %v\n%s", err, out.String())
		}
		if !strings.Contains(out.String(), want) || !strings.Contains(out.String(), "migrated and verified") {
			t.Errorf("migrate said:\n%s\nwant a line %q", out.String(), want)
		}
	}
	t.Log(out.String())
	// The command line: DSN from the argument, or refused without one.
	t.Setenv(pgstore.EnvDSN, "")
	if code := Main([]string{"--data-dir", dir, "migrate", "--to", "postgres", dsn}); code != 0 {
		t.Errorf("ai-memory migrate --to postgres DSN exited %d", code)
	}
	if code := Main([]string{"--data-dir", dir, "migrate", "--to", "postgres"}); code != 2 {
		t.Errorf("ai-memory migrate without a DSN exited %d, want 2", code)
	}
	if strings.Contains(out.String(), "password") {
		t.Errorf("output names a password: %s", out.String())
	}
}

package pgstore

import (
	"errors"
	"io/fs"
	"sync"
	"testing"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/pgstore/pgtest"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
)

// Engines starting together on a fresh database migrate it once, under
// the migration lock, and all open.
func TestConcurrentOpensMigrateOnce(t *testing.T) {
	dsn := pgtest.DSN(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			s, err := Open(storagetest.Operator(), dsn, storage.Options{})
			if err == nil {
				s.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	s := open(t, storage.Options{})
	var applied int
	if err := s.pool.QueryRow(storagetest.Operator(), `SELECT max(version_id) FROM ai_memory_schema WHERE is_applied`).Scan(&applied); err != nil {
		t.Fatal(err)
	}
	files, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	if applied != len(files) { // each embedded migration once (numbers may skip while issue 16 is split)
		t.Fatalf("%d migrations recorded, want %d", applied, len(files))
	}
}

// A database migrated by a newer build is refused, naming both versions.
func TestNewerDatabaseRefused(t *testing.T) {
	dsn := pgtest.DSN(t)
	s, err := Open(storagetest.Operator(), dsn, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.pool.Exec(storagetest.Operator(), `INSERT INTO ai_memory_schema (version_id, is_applied) VALUES ($1, true)`, SchemaVersion+1)
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(storagetest.Operator(), dsn, storage.Options{})
	var tooNew *storage.SchemaTooNewError
	if !errors.As(err, &tooNew) || tooNew.Found != SchemaVersion+1 || tooNew.Known != SchemaVersion {
		t.Fatalf("open of a newer database: %v", err)
	}
}

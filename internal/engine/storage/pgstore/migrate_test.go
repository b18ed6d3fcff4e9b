package pgstore

import (
	"context"
	"errors"
	"io/fs"
	"sync"
	"testing"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/pgstore/pgtest"
)

// Engines starting together on a fresh database migrate it once, under
// the migration lock, and all open.
func TestConcurrentOpensMigrateOnce(t *testing.T) {
	dsn := pgtest.DSN(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			s, err := Open(context.Background(), dsn, storage.Options{})
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
	if err := s.pool.QueryRow(context.Background(), `SELECT count(*) FROM ai_memory_schema WHERE version_id > 0`).Scan(&applied); err != nil {
		t.Fatal(err)
	}
	files, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	if applied != len(files) { // each once (numbers may have gaps while parts are built apart)
		t.Fatalf("%d migrations recorded, want %d", applied, len(files))
	}
}

// A database migrated by a newer build is refused, naming both versions.
func TestNewerDatabaseRefused(t *testing.T) {
	dsn := pgtest.DSN(t)
	s, err := Open(context.Background(), dsn, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.pool.Exec(context.Background(), `INSERT INTO ai_memory_schema (version_id, is_applied) VALUES ($1, true)`, SchemaVersion+1)
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(context.Background(), dsn, storage.Options{})
	var tooNew *storage.SchemaTooNewError
	if !errors.As(err, &tooNew) || tooNew.Found != SchemaVersion+1 || tooNew.Known != SchemaVersion {
		t.Fatalf("open of a newer database: %v", err)
	}
}

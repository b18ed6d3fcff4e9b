package pgstore

import (
	"errors"
	"io/fs"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/pgstore/pgtest"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	"github.com/ai-memory/ai-memory/internal/testwait"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
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
	testwait.Wait(t, &wg, "the concurrent opens")
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

// Migration 8 converts float vectors to 8-bit in SQL: a database taken
// back to schema 7 (its Down section) with float rows opens with the same
// nearest neighbours and cosines within the rounding, and migrates down
// and up again to the same bytes.
func TestVectorsMigrateTo8Bit(t *testing.T) {
	ctx := storagetest.Operator()
	dsn := pgtest.DSN(t)
	s, err := Open(ctx, dsn, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	vecs := map[string][]float32{"near": {0.9, 0.1, 0, 0}, "far": {0, 0.2, 1, 0}, "zero": {0, 0, 0, 0}}
	ids := storagetest.StoreWithVectors(t, records.New(s), vecs)
	var before []byte
	if err := s.pool.QueryRow(ctx, `SELECT q FROM vectors WHERE id = $1`, ids["near"]).Scan(&before); err != nil {
		t.Fatal(err)
	}
	down := migrationDown(t, "migrations/00008_vectors_8bit.sql")
	if _, err := s.pool.Exec(ctx, down+`; DELETE FROM ai_memory_schema WHERE version_id = 8`); err != nil {
		t.Fatal(err)
	}
	var f []float32
	if err := s.pool.QueryRow(ctx, `SELECT v FROM vectors WHERE id = $1`, ids["near"]).Scan(&f); err != nil || len(f) != 4 || f[0] < 0.98 {
		t.Fatalf("schema 7 row: %v %v", f, err)
	}
	s.Close()
	s, err = Open(ctx, dsn, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var after []byte
	if err := s.pool.QueryRow(ctx, `SELECT q FROM vectors WHERE id = $1`, ids["near"]).Scan(&after); err != nil || string(after) != string(before) {
		t.Fatalf("q after migrating down and up: %v, before %v (%v)", after, before, err)
	}
	res, err := s.Nearest(ctx, &aimemoryv1.Filter{}, []float32{1, 0, 0, 0}, "m", 3)
	if err != nil || len(res) != 3 || res[0].Memory.Id != ids["near"] || math.Abs(res[0].Score-0.9939) > 0.01 {
		t.Fatalf("nearest after the migration: %v %v", res, err)
	}
	if err := s.CheckConsistency(ctx); err != nil {
		t.Fatal(err)
	}
}

// migrationDown is a goose file's Down statements.
func migrationDown(t *testing.T, name string) string {
	raw, err := fs.ReadFile(migrationFiles, name)
	if err != nil {
		t.Fatal(err)
	}
	s := string(raw)
	i := strings.Index(s, "-- +goose Down")
	if i < 0 {
		t.Fatalf("%s has no Down section", name)
	}
	return s[i:]
}

package pgstore

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// SchemaVersion is the newest embedded migration: the layout this build
// reads and writes.
const SchemaVersion = 8

// migrationLockID is goose's advisory lock key for this schema (any fixed
// number: every engine of one database takes the same one).
const migrationLockID = 0x61696d656d // "aimem"

// migrate applies the embedded migrations under goose's session lock
// (pg_try_advisory_lock, polled: a second engine starting waits, and
// never deadlocks on a blocking lock), then refuses a database that a
// newer build has migrated further.
func migrate(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger) error {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return err
	}
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockID(migrationLockID), lock.WithLockTimeout(1, 60))
	if err != nil {
		return err
	}
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, db, sub,
		goose.WithSessionLocker(locker), goose.WithDisableGlobalRegistry(true), goose.WithTableName("ai_memory_schema"))
	if err != nil {
		return fmt.Errorf("postgres migrations: %w", err)
	}
	// A newer database is refused before anything is applied. A fresh one
	// has no version table yet: GetDBVersion fails there, and Up creates it.
	if v, err := p.GetDBVersion(ctx); err == nil && v > SchemaVersion {
		return &storage.SchemaTooNewError{Found: uint32(v), Known: SchemaVersion}
	}
	results, err := p.Up(ctx)
	if err != nil {
		return fmt.Errorf("postgres migrations: %w", err)
	}
	for _, r := range results {
		log.Info("postgres migration applied", "version", r.Source.Version, "took", r.Duration)
	}
	v, err := p.GetDBVersion(ctx)
	if err != nil {
		return fmt.Errorf("postgres schema version: %w", err)
	}
	if v > SchemaVersion { // migrated by a newer build meanwhile
		return &storage.SchemaTooNewError{Found: uint32(v), Known: SchemaVersion}
	}
	return nil
}

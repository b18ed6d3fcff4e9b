package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/schollz/progressbar/v3"

	"github.com/ai-memory/ai-memory/internal/config"
	"github.com/ai-memory/ai-memory/internal/engine"
	auditchain "github.com/ai-memory/ai-memory/internal/engine/audit"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/boltstore"
	"github.com/ai-memory/ai-memory/internal/engine/storage/migration"
	"github.com/ai-memory/ai-memory/internal/engine/storage/pgstore"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// migrateCmd copies the data dir's embedded store into PostgreSQL, its
// audit log included. It opens the bbolt file itself, so the data dir's
// engine must not be running (the file's lock says so, and then nothing
// is done): chosen over going through the engine because the copy must be
// of one state that no write changes meanwhile, and verified against it.
// The records are read from one snapshot and left as they are; an audit
// log from before logs were keyed is first sealed, as the engine would at
// its next start, so the copy verifies under the data dir's audit.key.
type migrateCmd struct {
	To    string `required:"" enum:"postgres" help:"The backend to copy into: postgres."`
	DSN   string `arg:"" optional:"" help:"The PostgreSQL database, a libpq DSN or URL (default: $$AI_MEMORY_POSTGRES_DSN)."`
	Batch int    `default:"1000" help:"Records per transaction."`
}

// lockWait is how long migrate waits for the bbolt file's lock before
// saying the engine has it.
const lockWait = 2 * time.Second

func (c *migrateCmd) Run(root *rootCmd) error {
	dsn := c.DSN
	if dsn == "" {
		dsn = os.Getenv(pgstore.EnvDSN)
	}
	if dsn == "" {
		return &exitError{code: 2, msg: "ai-memory migrate: DSN: give the PostgreSQL database as an argument or in " + pgstore.EnvDSN}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return migrateToPostgres(ctx, config.DataDir(root.DataDir), dsn, c.Batch, os.Stderr, progress)
}

// migrateToPostgres is migrate's work, writing its account to out and its
// bar through bar (progress, or a silent one in tests).
func migrateToPostgres(ctx context.Context, dataDir, dsn string, batch int, out io.Writer, bar func(int64, string) *progressbar.ProgressBar) error {
	fail := func(format string, a ...any) error {
		return &exitError{code: 1, msg: "ai-memory migrate: " + fmt.Sprintf(format, a...)}
	}
	path := filepath.Join(dataDir, engine.DBFile)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return fail("%s has no database (%s) to migrate", dataDir, engine.DBFile)
	}
	chain, err := auditchain.OpenChain(dataDir)
	if err != nil {
		return fail("%v", err)
	}
	src, err := boltstore.Open(ctx, path, storage.Options{OpenTimeout: lockWait, Audit: chain})
	if err != nil {
		if strings.Contains(err.Error(), "holds the database lock") {
			return fail("%s is in use by its engine: close the hosts using this data dir (its engine exits with them), then run migrate again", dataDir)
		}
		return fail("%v", err)
	}
	defer src.Close()
	auditLog, err := auditchain.Open(ctx, records.New(src), chain, dataDir, slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		return fail("%v", err)
	}
	dst, err := pgstore.Open(ctx, dsn, storage.Options{Audit: chain})
	if err != nil {
		return fail("%v", err)
	}
	defer dst.Close()
	where := describeDSN(dsn)
	fmt.Fprintf(out, "migrating %s into %s\n", path, where)

	var b *progressbar.ProgressBar
	rep, err := migration.Copy(ctx, records.New(src), records.New(dst), migration.Options{
		Batch:    batch,
		Started:  func(total int64) { b = bar(total, "migrating") },
		Progress: func(n int) { b.Add(n) },
		AuditPin: auditLog.Pin(),
	})
	if b != nil {
		b.Finish()
		fmt.Fprintln(out)
	}
	if err != nil {
		if ctx.Err() != nil {
			return fail("interrupted: run the same command again to continue (records already copied are found unchanged)")
		}
		return fail("%v (run the same command again to continue)", err)
	}
	fmt.Fprintf(out, "%-14s %9s %9s %9s %9s %9s  %s\n", "kind", "source", "target", "created", "unchanged", "refused", "checksum")
	for _, k := range rep.Kinds {
		sum := "same " + k.SourceSum[:12]
		if !k.Same() {
			sum = "DIFFERS " + k.SourceSum[:12] + " ≠ " + k.TargetSum[:12]
		}
		fmt.Fprintf(out, "%-14s %9d %9d %9d %9d %9d  %s\n", k.Kind, k.Source, k.Target, k.Created, k.Unchanged, k.Refused, sum)
	}
	for _, r := range rep.Refusals {
		fmt.Fprintln(out, "refused "+r)
	}
	fmt.Fprintln(out, "audit chain on the source: "+describeChain(rep.SourceChain))
	fmt.Fprintln(out, "audit chain on the target: "+describeChain(rep.TargetChain))
	if !rep.Verified() {
		return fail("%s does not hold exactly this data dir's records and a verified audit chain (see above); the data dir's records are as they were", where)
	}
	fmt.Fprintf(out, "migrated and verified in %s: every kind the same by count and checksum, the audit log included, and its chain verified on the target. Point the data dir's [storage] at postgres to use it.\n", rep.Took.Round(time.Millisecond))
	return nil
}

// describeChain is one line on a verified audit chain.
func describeChain(v *aimemoryv1.VerifyAuditResponse) string {
	if !v.GetOk() {
		return fmt.Sprintf("BROKEN at record %d: %s", v.GetFirstBadSeq(), v.GetProblem())
	}
	return fmt.Sprintf("intact, %d records, head %.16s…", v.GetCount(), v.GetHeadHash())
}

// describeDSN names the database without its password.
func describeDSN(dsn string) string {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return "the database"
	}
	return fmt.Sprintf("postgres database %s on %s:%d", cfg.Database, cfg.Host, cfg.Port)
}

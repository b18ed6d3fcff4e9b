package cli

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schollz/progressbar/v3"
	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine"
	auditchain "github.com/ai-memory/ai-memory/internal/engine/audit"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/boltstore"
	"github.com/ai-memory/ai-memory/internal/engine/storage/pgstore"
	"github.com/ai-memory/ai-memory/internal/engine/storage/pgstore/pgtest"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
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
	chain, err := auditchain.OpenChain(dir)
	if err != nil {
		t.Fatal(err)
	}
	src, err := boltstore.Open(context.Background(), filepath.Join(dir, engine.DBFile), storage.Options{Audit: chain})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 25 {
		storagetest.Store(t, records.New(src), storagetest.Mem(fmt.Sprintf("note %d", i), "about migration"))
	}
	for range 4 {
		if _, err := records.New(src).AppendAudit(context.Background(), &aimemoryv1.AuditRecord{AgentId: "ai:mallory", Event: "access_denied"}); err != nil {
			t.Fatal(err)
		}
	}
	dsn := pgtest.DSN(t)
	var out bytes.Buffer
	err = migrateToPostgres(context.Background(), dir, dsn, 10, &out, silentBar)
	if err == nil || !strings.Contains(err.Error(), "in use by its engine") {
		t.Fatalf("migrate of a data dir in use: %v\n%s", err, out.String())
	}
	src.Close()

	for _, want := range [][]string{
		{"memory                25        25        25         0", "audit                  4         4         4         0"},
		{"memory                25        25         0        25", "audit                  4         4         0         4"},
	} {
		out.Reset()
		if err := migrateToPostgres(context.Background(), dir, dsn, 10, &out, silentBar); err != nil {
			t.Fatalf("migrate: %v\n%s", err, out.String())
		}
		for _, line := range append(want, "audit chain on the target: intact, 4 records", "migrated and verified") {
			if !strings.Contains(out.String(), line) {
				t.Errorf("migrate said:\n%s\nwant a line %q", out.String(), line)
			}
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

// TestMigrateSealsAnOlderAuditLog: a data dir whose audit log an older
// release wrote (unkeyed, no audit.key yet) is sealed as its engine would
// seal it, then copied: the target holds every record and its chain
// verifies under the data dir's new key.
func TestMigrateSealsAnOlderAuditLog(t *testing.T) {
	dir := t.TempDir()
	db, err := bolt.Open(filepath.Join(dir, engine.DBFile), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte("audit"))
		if err != nil {
			return err
		}
		for _, r := range storagetest.UnkeyedAudit(3) {
			raw, _ := proto.Marshal(r)
			if err := b.Put(binary.BigEndian.AppendUint64(nil, r.GetSeq()), raw); err != nil {
				return err
			}
		}
		return nil
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := migrateToPostgres(context.Background(), dir, pgtest.DSN(t), 10, &out, silentBar); err != nil {
		t.Fatalf("migrate: %v\n%s", err, out.String())
	}
	for _, line := range []string{"audit                  4         4         4         0", "audit chain on the target: intact, 4 records"} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("migrate said:\n%s\nwant a line %q", out.String(), line)
		}
	}
}

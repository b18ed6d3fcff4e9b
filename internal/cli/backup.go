package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/ai-memory/ai-memory/internal/config"
	"github.com/ai-memory/ai-memory/internal/engine"
	auditchain "github.com/ai-memory/ai-memory/internal/engine/audit"
	"github.com/ai-memory/ai-memory/internal/engine/storage/boltstore"
	"github.com/ai-memory/ai-memory/internal/keyfile"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

type backupCmd struct {
	File  string `arg:"" help:"Where to write the copy." type:"path"`
	Force bool   `help:"Overwrite the file if it exists."`
	operatorID
}

// Run copies the data dir's database while it is in use: the engine writes
// it from one read transaction (a consistent state), the CLI streams it to
// FILE.tmp, syncs, and renames, so FILE is whole or absent.
func (c *backupCmd) Run(root *rootCmd) error {
	if _, err := os.Stat(c.File); err == nil && !c.Force {
		return &exitError{code: 1, msg: "ai-memory backup: " + c.File + " exists (pass --force to overwrite)"}
	}
	_, conn, err := c.engine(root)
	if err != nil {
		return err
	}
	defer conn.Close()
	start := time.Now()
	tmp := c.File + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	stream, err := conn.Backup(context.Background(), &aimemoryv1.BackupRequest{})
	if err != nil {
		f.Close()
		return err
	}
	var n int64
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			f.Close()
			return fmt.Errorf("backup: %w", err)
		}
		k, err := f.Write(chunk.GetData())
		n += int64(k)
		if err != nil {
			f.Close()
			return err
		}
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	count, err := boltstore.CheckCopy(tmp)
	if err != nil {
		return fmt.Errorf("backup: the copy does not open: %w", err)
	}
	if err := os.Rename(tmp, c.File); err != nil {
		return err
	}
	fmt.Printf("backed up %s to %s: %d bytes, %d memories, in %s\n", config.DataDir(root.DataDir), c.File, n, count, time.Since(start).Round(time.Millisecond))
	return nil
}

type restoreCmd struct {
	File     string `arg:"" help:"A file ai-memory backup wrote." type:"existingfile"`
	AuditKey string `help:"The audit.key of the data dir the backup came from: its audit log verifies and grows here only under that key." type:"existingfile"`
}

// Run puts a backup in place as the database of an empty data dir (one
// without a database: nothing is ever overwritten), with the audit key it
// was keyed under when given, then starts its engine to show the copy is
// served and its audit log verifies.
func (c *restoreCmd) Run(root *rootCmd) error {
	dataDir := config.DataDir(root.DataDir)
	db := filepath.Join(dataDir, engine.DBFile)
	if _, err := os.Stat(db); err == nil {
		return &exitError{code: 1, msg: fmt.Sprintf("ai-memory restore: %s already has a database (%s); restore only into an empty data dir", dataDir, engine.DBFile)}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	count, err := boltstore.CheckCopy(c.File)
	if err != nil {
		return &exitError{code: 1, msg: "ai-memory restore: " + c.File + " is not an ai-memory backup: " + err.Error()}
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return err
	}
	in, err := os.Open(c.File)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp := db + ".restore"
	out, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	if c.AuditKey != "" {
		if err := placeAuditKey(c.AuditKey, dataDir); err != nil {
			return &exitError{code: 1, msg: "ai-memory restore: " + err.Error()}
		}
	}
	// O_EXCL above and Link here: a database that appeared meanwhile wins.
	if err := os.Link(tmp, db); err != nil {
		return &exitError{code: 1, msg: "ai-memory restore: " + err.Error()}
	}
	conn, err := engineClient(root, "cli:restore")
	if err != nil {
		return err
	}
	defer conn.Close()
	h, err := conn.Health(context.Background(), &aimemoryv1.HealthRequest{})
	if err != nil {
		return err
	}
	fmt.Printf("restored %s into %s: %d memories (backup said %d), schema %d\n", c.File, dataDir, h.GetMemoryCount(), count, h.GetSchemaVersion())
	v, err := conn.VerifyAudit(context.Background(), &aimemoryv1.VerifyAuditRequest{})
	switch {
	case err != nil:
		return err
	case v.GetOk():
		fmt.Printf("audit log: intact, %d records\n", v.GetCount())
	default:
		fmt.Printf("audit log: does not verify here (record %d: %s); if the backup came from another data dir, restore it into an empty one with --audit-key <that data dir>/%s\n",
			v.GetFirstBadSeq(), v.GetProblem(), auditchain.KeyFile)
	}
	return nil
}

// placeAuditKey copies the audit key at from into dataDir, which must not
// have one yet.
func placeAuditKey(from, dataDir string) error {
	key, err := keyfile.Load(from, "--audit-key")
	if err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(dataDir, auditchain.KeyFile), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("--audit-key: %w", err)
	}
	_, werr := f.Write(key)
	serr := f.Sync()
	return errors.Join(werr, serr, f.Close())
}

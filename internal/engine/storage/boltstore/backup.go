package boltstore

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Backup writes a consistent copy of the database file to w. bbolt copies
// every page inside one read transaction, which a writer growing the file
// must wait for; so the copy goes first to a scratch file beside the
// database, at disk speed, and reaches w, however slow its reader, with no
// transaction open. The scratch file has no name once open and costs the
// file's size on disk while the copy streams.
func (s *Store) Backup(ctx context.Context, w io.Writer) (int64, error) {
	scratch, err := os.CreateTemp(filepath.Dir(s.path), ".backup-*")
	if err != nil {
		return 0, err
	}
	defer scratch.Close()
	if err := os.Remove(scratch.Name()); err != nil {
		return 0, err
	}
	err = s.db.View(func(tx *bolt.Tx) error {
		_, err := tx.WriteTo(ctxWriter{ctx, scratch})
		return err
	})
	if err != nil {
		return 0, err
	}
	if _, err := scratch.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	return io.Copy(ctxWriter{ctx, w}, scratch)
}

// ctxWriter stops a copy whose caller has gone.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

// CheckCopy opens a database file read-only (a backup, before it is put in
// place) and returns its memory count; a file that is not one of ours is an error.
func CheckCopy(path string) (int, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		return 0, err
	}
	defer db.Close()
	n := 0
	err = db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketMemories)
		if b == nil {
			return fmt.Errorf("no %s bucket", bucketMemories)
		}
		n = b.Stats().KeyN
		return nil
	})
	return n, err
}

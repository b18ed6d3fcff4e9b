package boltstore

import (
	"context"
	"fmt"
	"io"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Backup writes a consistent copy of the database file to w: bbolt copies
// every page inside one read transaction, so writers go on meanwhile and
// the copy is the state at the transaction's start.
func (s *Store) Backup(ctx context.Context, w io.Writer) (int64, error) {
	var n int64
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		n, err = tx.WriteTo(ctxWriter{ctx, w})
		return err
	})
	return n, err
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

package boltstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"slices"

	bolt "go.etcd.io/bbolt"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// PurgeArchive deletes archive rows, their superseded versions and the
// archived links of the purged rows for good. It takes exactly one of an
// explicit cut-off (rows and versions archived before it) or explicit
// ids (their rows and versions); anything else is an error and purges
// nothing, so no argument can widen it to "everything". Rows the caller
// may not read (another's inbox) are not purged (the engine's own
// schedule, authz.System, reads all). With dry_run it deletes nothing.
func (s *Store) PurgeArchive(ctx context.Context, req *aimemoryv1.PurgeArchiveRequest) (*aimemoryv1.PurgeArchiveResponse, error) {
	if err := validatePurge(req); err != nil {
		return nil, err
	}
	var resp *aimemoryv1.PurgeArchiveResponse
	if req.GetDryRun() {
		err := s.db.View(func(tx *bolt.Tx) error {
			var err error
			resp, _, err = selectPurge(ctx, tx, req)
			return err
		})
		return resp, err
	}
	err := s.write(ctx, func(w *writeTx) error {
		var sel *purgeSelection
		var err error
		if resp, sel, err = selectPurge(ctx, w.tx, req); err != nil {
			return err
		}
		return sel.apply(w.tx)
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

func validatePurge(req *aimemoryv1.PurgeArchiveRequest) error { return ops.ValidatePurge(req) }

// purgeSelection is what a purge deletes: archive row ids and version keys.
type purgeSelection struct {
	rows     []string
	versions [][]byte
}

func (p *purgeSelection) apply(tx *bolt.Tx) error {
	archive, versions := tx.Bucket(bucketArchive), tx.Bucket(bucketVersions)
	for _, id := range p.rows {
		if err := archive.Delete([]byte(id)); err != nil {
			return err
		}
		// The row's end is gone for good, and its links with it.
		if err := deleteArchivedLinks(tx, id); err != nil {
			return err
		}
	}
	for _, k := range p.versions {
		if err := versions.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// selectPurge finds what req purges and the answer reporting it.
func selectPurge(ctx context.Context, tx *bolt.Tx, req *aimemoryv1.PurgeArchiveRequest) (*aimemoryv1.PurgeArchiveResponse, *purgeSelection, error) {
	resp, sel := &aimemoryv1.PurgeArchiveResponse{}, &purgeSelection{}
	grant := authz.Of(ctx)
	readable := func(a *storage.Archived) bool { return grant.Reads(a.Memory.GetNamespace()) }
	var purged []*storage.Archived
	if before := req.GetBefore(); before > 0 {
		err := tx.Bucket(bucketArchive).ForEach(func(k, v []byte) error {
			if archivedAt(v) >= before {
				return nil
			}
			a, err := decodeArchived(v)
			if err != nil || !readable(a) {
				return err
			}
			purged = append(purged, a)
			sel.rows = append(sel.rows, string(k))
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
		err = tx.Bucket(bucketVersions).ForEach(func(k, v []byte) error {
			if archivedAt(v) >= before {
				return nil
			}
			a, err := decodeArchived(v)
			if err != nil || !readable(a) {
				return err
			}
			sel.versions = append(sel.versions, slices.Clone(k))
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
	} else {
		for _, id := range rules.Dedupe(slices.Clone(req.GetIds())) {
			found := false
			a, err := archivedRow(tx, id)
			if err != nil {
				return nil, nil, err
			}
			if a != nil && readable(a) {
				purged, sel.rows, found = append(purged, a), append(sel.rows, id), true
			}
			prefix := append([]byte(id), 0)
			c := tx.Bucket(bucketVersions).Cursor()
			for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
				va, err := decodeArchived(v)
				if err != nil {
					return nil, nil, err
				}
				if readable(va) {
					sel.versions, found = append(sel.versions, slices.Clone(k)), true
				}
			}
			if !found {
				resp.NotFound = append(resp.NotFound, id)
			}
		}
	}
	ops.PurgeAnswer(resp, purged, len(sel.versions))
	return resp, sel, nil
}

// archivedAt reads an encoded archive row's archived_at without decoding it.
func archivedAt(row []byte) int64 {
	if len(row) < 9 {
		return 0
	}
	return int64(binary.BigEndian.Uint64(row[1:9]))
}

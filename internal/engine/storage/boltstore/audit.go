package boltstore

import (
	"context"
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/audit"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// bucketAudit holds the audit log: seq (8 bytes, big-endian) → AuditRecord.
// Records are only ever appended; each carries the keyed hash of the one
// before (package audit).
var bucketAudit = []byte("audit")

func seqKey(seq uint64) []byte { return binary.BigEndian.AppendUint64(nil, seq) }

// AppendAudit appends a record, assigning its seq, time and hashes, in one
// fsynced transaction (shared with concurrent writes, see write).
func (s *Store) AppendAudit(ctx context.Context, in *aimemoryv1.AuditRecord) (*aimemoryv1.AuditRecord, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := audit.Validate(in); err != nil {
		return nil, err
	}
	var r *aimemoryv1.AuditRecord
	err := s.write(ctx, func(w *writeTx) error {
		b, err := w.tx.CreateBucketIfNotExists(bucketAudit)
		if err != nil {
			return err
		}
		var last *aimemoryv1.AuditRecord
		if k, v := b.Cursor().Last(); k != nil {
			last = new(aimemoryv1.AuditRecord)
			if err := proto.Unmarshal(v, last); err != nil {
				return fmt.Errorf("audit record %x: %w", k, err)
			}
		}
		if r, err = s.audit.Next(last, in, w.now); err != nil {
			return err
		}
		raw, err := proto.Marshal(r)
		if err != nil {
			return err
		}
		return b.Put(seqKey(r.Seq), raw)
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// ListAudit returns up to limit records, newest first, optionally of one agent.
func (s *Store) ListAudit(ctx context.Context, agentID string, limit int) ([]*aimemoryv1.AuditRecord, error) {
	var out []*aimemoryv1.AuditRecord
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketAudit)
		if b == nil {
			return nil
		}
		c := b.Cursor()
		for k, v := c.Last(); k != nil && len(out) < limit; k, v = c.Prev() {
			if err := ctx.Err(); err != nil {
				return err
			}
			var r aimemoryv1.AuditRecord
			if err := proto.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("audit record %x: %w", k, err)
			}
			if agentID == "" || r.GetAgentId() == agentID {
				out = append(out, &r)
			}
		}
		return nil
	})
	return out, err
}

// AuditRecordAt is the record stored under seq; nil when there is none.
func (s *Store) AuditRecordAt(_ context.Context, seq uint64) (*aimemoryv1.AuditRecord, error) {
	var r *aimemoryv1.AuditRecord
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketAudit)
		if b == nil {
			return nil
		}
		raw := b.Get(seqKey(seq))
		if raw == nil {
			return nil
		}
		r = new(aimemoryv1.AuditRecord)
		return proto.Unmarshal(raw, r)
	})
	return r, err
}

// VerifyAudit recomputes the chain from the first record (audit.Verifier).
func (s *Store) VerifyAudit(ctx context.Context, pin audit.Head) (*aimemoryv1.VerifyAuditResponse, error) {
	v := s.audit.Verifier(pin)
	err := s.eachAudit(ctx, func(k, raw []byte) error {
		r := new(aimemoryv1.AuditRecord)
		if len(k) != 8 || proto.Unmarshal(raw, r) != nil {
			r = nil
		}
		var seq uint64
		if len(k) == 8 {
			seq = binary.BigEndian.Uint64(k)
		}
		v.Add(seq, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return v.Result(), nil
}

// ExportAudit calls each with every record in seq order, read in batches
// as Export reads (walkBatches), so a slow consumer (migrate's target)
// holds no read transaction. The log is append-only: the records are
// those there at the start and perhaps some appended since, each once.
func (s *Store) ExportAudit(ctx context.Context, each func(*aimemoryv1.AuditRecord) error) error {
	return walkBatches(ctx, s, bucketAudit, func(_ *bolt.Tx, _ *bolt.Cursor, k, raw []byte) (*aimemoryv1.AuditRecord, []byte, error) {
		r := new(aimemoryv1.AuditRecord)
		if err := proto.Unmarshal(raw, r); err != nil {
			return nil, nil, fmt.Errorf("audit record %x: %w", k, err)
		}
		return r, k, nil
	}, each)
}

// eachAudit calls fn with every stored key and value of the audit log, in
// key order, from one read transaction: VerifyAudit's one snapshot (fn
// is local work, never a remote consumer).
func (s *Store) eachAudit(ctx context.Context, fn func(k, raw []byte) error) error {
	return s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketAudit)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, raw []byte) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			return fn(k, raw)
		})
	})
}

package boltstore

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"

	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
	"github.com/ai-memory/ai-memory/sdk/record"
)

// bucketAudit holds the audit log: seq (8 bytes, big-endian) → AuditRecord.
// Records are only ever appended; each carries the hash of the one before.
var bucketAudit = []byte("audit")

func seqKey(seq uint64) []byte { return binary.BigEndian.AppendUint64(nil, seq) }

// auditHash chains a record to its predecessor: SHA-256 over the previous
// hash and every field, each length-prefixed so no two records collide.
func auditHash(r *aimemoryv1.AuditRecord) string {
	h := sha256.New()
	field := func(b []byte) {
		h.Write(binary.AppendUvarint(nil, uint64(len(b))))
		h.Write(b)
	}
	field([]byte(r.GetPrevHash()))
	field(binary.BigEndian.AppendUint64(nil, r.GetSeq()))
	field(binary.BigEndian.AppendUint64(nil, uint64(r.GetAt())))
	for _, s := range []string{r.GetAgentId(), r.GetEvent(), r.GetFamily(), r.GetTool(), r.GetReason()} {
		field([]byte(s))
	}
	if r.GetGranted() {
		field([]byte{1})
	} else {
		field([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// AppendAudit appends a record, assigning its seq, time and hashes, in one
// fsynced transaction.
func (s *Store) AppendAudit(ctx context.Context, in *aimemoryv1.AuditRecord) (*aimemoryv1.AuditRecord, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if in.GetEvent() == "" {
		return nil, &record.FieldError{Field: "event", Rule: "must not be empty"}
	}
	r := proto.Clone(in).(*aimemoryv1.AuditRecord)
	err := s.db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketAudit)
		if err != nil {
			return err
		}
		r.Seq, r.PrevHash = 1, ""
		if k, v := b.Cursor().Last(); k != nil {
			var last aimemoryv1.AuditRecord
			if err := proto.Unmarshal(v, &last); err != nil {
				return fmt.Errorf("audit record %x: %w", k, err)
			}
			r.Seq, r.PrevHash = last.GetSeq()+1, last.GetHash()
		}
		r.At = s.nowNanos()
		r.Hash = auditHash(r)
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

// VerifyAudit recomputes the chain from the first record: every seq follows
// the one before, every prev_hash is its predecessor's hash, and every hash
// matches the record's fields. It reports the head hash and count so an
// operator who pinned them notices a truncated tail too.
func (s *Store) VerifyAudit(ctx context.Context) (*aimemoryv1.VerifyAuditResponse, error) {
	resp := &aimemoryv1.VerifyAuditResponse{Ok: true}
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketAudit)
		if b == nil {
			return nil
		}
		prev := &aimemoryv1.AuditRecord{}
		return b.ForEach(func(k, v []byte) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			var r aimemoryv1.AuditRecord
			problem := ""
			switch err := proto.Unmarshal(v, &r); {
			case err != nil || len(k) != 8:
				problem = "unreadable record"
			case binary.BigEndian.Uint64(k) != r.GetSeq():
				problem = fmt.Sprintf("stored under seq %d but says %d", binary.BigEndian.Uint64(k), r.GetSeq())
			case r.GetSeq() != prev.GetSeq()+1:
				problem = fmt.Sprintf("follows record %d: record(s) removed", prev.GetSeq())
			case r.GetPrevHash() != prev.GetHash():
				problem = "prev_hash does not match the record before it"
			case auditHash(&r) != r.GetHash():
				problem = "hash does not match its contents: the record was edited"
			}
			if problem != "" && resp.Ok {
				resp.Ok, resp.FirstBadSeq, resp.Problem = false, r.GetSeq(), problem
				if resp.FirstBadSeq == 0 {
					resp.FirstBadSeq = prev.GetSeq() + 1
				}
			}
			resp.Count++
			resp.HeadHash = r.GetHash()
			prev = &r
			return nil
		})
	})
	return resp, err
}

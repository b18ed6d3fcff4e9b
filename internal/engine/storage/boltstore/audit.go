package boltstore

import (
	"encoding/binary"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/audit"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// bucketAudit holds the audit log: seq (8 bytes, big-endian) → AuditRecord.
// Records are only ever appended; each carries the keyed hash of the one
// before (package audit, the rules in package records). The log's last
// record is its head: no head is kept apart.
var bucketAudit = []byte("audit")

func seqKey(seq uint64) []byte { return binary.BigEndian.AppendUint64(nil, seq) }

// decodeAudit is raw's record; nil when it does not decode.
func decodeAudit(raw []byte) *aimemoryv1.AuditRecord {
	r := new(aimemoryv1.AuditRecord)
	if proto.Unmarshal(raw, r) != nil {
		return nil
	}
	return r
}

// EachAudit walks the bucket from after; a key not 8 bytes long is seq 0,
// which verification reports.
func (t seamTx) EachAudit(after uint64, limit int, fn func(uint64, *aimemoryv1.AuditRecord) error) error {
	b := t.w.tx.Bucket(bucketAudit)
	if b == nil {
		return nil
	}
	c := b.Cursor()
	k, raw := c.First()
	if after > 0 {
		k, raw = c.Seek(seqKey(after + 1))
	}
	for n := 0; k != nil && (limit == 0 || n < limit); k, raw = c.Next() {
		var seq uint64
		if len(k) == 8 {
			seq = binary.BigEndian.Uint64(k)
		}
		r := decodeAudit(raw)
		if len(k) != 8 {
			r = nil
		}
		if err := fn(seq, r); err != nil {
			return err
		}
		n++
	}
	return nil
}

func (t seamTx) RecentAudit(agent string, limit int) ([]*aimemoryv1.AuditRecord, error) {
	b := t.w.tx.Bucket(bucketAudit)
	if b == nil {
		return nil, nil
	}
	var out []*aimemoryv1.AuditRecord
	c := b.Cursor()
	for k, raw := c.Last(); k != nil && len(out) < limit; k, raw = c.Prev() {
		if err := t.w.ctx.Err(); err != nil {
			return nil, err
		}
		r := decodeAudit(raw)
		if r == nil {
			return nil, fmt.Errorf("audit record %x: unreadable", k)
		}
		if agent == "" || r.GetAgentId() == agent {
			out = append(out, r)
		}
	}
	return out, nil
}

// AuditHead: none kept apart (the last record is the head); bbolt's one
// writer orders appends.
func (seamTx) AuditHead() (audit.Head, bool, error) { return audit.Head{}, false, nil }

func (t seamTx) PutAudit(r *aimemoryv1.AuditRecord) error {
	b, err := t.w.tx.CreateBucketIfNotExists(bucketAudit)
	if err != nil {
		return err
	}
	raw, err := proto.Marshal(r)
	if err != nil {
		return err
	}
	return b.Put(seqKey(r.GetSeq()), raw)
}

package records

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/audit"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/seam"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// The audit log: records only ever appended, each carrying the keyed hash
// of the one before (package audit). A backend that keeps the head apart
// (PostgreSQL's audit_head, locked by each append, so appends from several
// engines queue there and chain one after another) must have it name the
// last record; all engines on one log must hold the same audit.key, and an
// append onto a record the key does not verify is refused (audit.Chain.Next).

var _ storage.AuditImporter = (*Store)(nil)

// AppendAudit appends a record, assigning its seq, time and hashes, in one
// durable write.
func (s *Store) AppendAudit(ctx context.Context, in *aimemoryv1.AuditRecord) (*aimemoryv1.AuditRecord, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := audit.Validate(in); err != nil {
		return nil, err
	}
	return written(ctx, s, func(t seam.Tx) (*aimemoryv1.AuditRecord, error) {
		last, err := auditLast(t)
		if err != nil {
			return nil, err
		}
		r, err := s.b.AuditChain().Next(last, in, t.Now())
		if err != nil {
			return nil, err
		}
		return r, t.PutAudit(r)
	})
}

// auditLast is the record an append chains onto (nil: the log is empty):
// the one a kept head names, which must be there as it names it.
func auditLast(t seam.Tx) (*aimemoryv1.AuditRecord, error) {
	h, kept, err := t.AuditHead()
	if err != nil {
		return nil, err
	}
	if !kept {
		recent, err := t.RecentAudit("", 1)
		if err != nil || len(recent) == 0 {
			return nil, err
		}
		return recent[0], nil
	}
	if h.Seq == 0 {
		return nil, nil
	}
	last, found, err := auditAt(t, h.Seq)
	if err != nil {
		return nil, err
	}
	if !found || last == nil || last.GetSeq() != h.Seq || last.GetHash() != h.Hash {
		return nil, &audit.HeadError{Seq: h.Seq, Problem: "is missing or not the record audit_head names"}
	}
	return last, nil
}

// auditAt is the record under seq, the first of a scan from it: found
// false when there is none, r nil when it does not decode. Only a scan
// from the start may meet keys the log cannot read first (seq 0, which
// verification reports); it passes them over.
func auditAt(t seam.Tx, seq uint64) (r *aimemoryv1.AuditRecord, found bool, err error) {
	if seq == 0 {
		return nil, false, nil
	}
	limit := 1
	if seq == 1 {
		limit = 0
	}
	stop := errors.New("stop")
	err = t.EachAudit(seq-1, limit, func(s uint64, rec *aimemoryv1.AuditRecord) error {
		if s == 0 {
			return nil
		}
		if s == seq {
			r, found = rec, true
		}
		return stop
	})
	if errors.Is(err, stop) {
		err = nil
	}
	return r, found, err
}

// ListAudit returns up to limit records, newest first, optionally of one agent.
func (s *Store) ListAudit(ctx context.Context, agentID string, limit int) ([]*aimemoryv1.AuditRecord, error) {
	if limit <= 0 {
		return nil, nil
	}
	return read(ctx, s, func(t seam.Tx) ([]*aimemoryv1.AuditRecord, error) { return t.RecentAudit(agentID, limit) })
}

// AuditRecordAt is the record stored under seq; nil when there is none.
func (s *Store) AuditRecordAt(ctx context.Context, seq uint64) (*aimemoryv1.AuditRecord, error) {
	return read(ctx, s, func(t seam.Tx) (*aimemoryv1.AuditRecord, error) {
		r, found, err := auditAt(t, seq)
		if err == nil && found && r == nil {
			err = fmt.Errorf("audit record %d: unreadable", seq)
		}
		return r, err
	})
}

// VerifyAudit recomputes the chain from the first record (audit.Verifier)
// in one snapshot, and holds a kept head to the last record: a tail cut
// with the head left as it was, or the head moved, is found even by an
// engine that pinned nothing.
func (s *Store) VerifyAudit(ctx context.Context, pin audit.Head) (*aimemoryv1.VerifyAuditResponse, error) {
	return read(ctx, s, func(t seam.Tx) (*aimemoryv1.VerifyAuditResponse, error) {
		v := s.b.AuditChain().Verifier(pin)
		err := t.EachAudit(0, 0, func(seq uint64, r *aimemoryv1.AuditRecord) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			v.Add(seq, r)
			return nil
		})
		if err != nil {
			return nil, err
		}
		h, kept, err := t.AuditHead()
		if err != nil {
			return nil, err
		}
		if last := v.Last(); kept && (h.Seq != last.GetSeq() || h.Hash != last.GetHash()) {
			v.Fail(min(h.Seq, last.GetSeq())+1, fmt.Sprintf("audit_head names record %d (hash %.16s…) but the log ends at record %d: records were removed, or the head row rewritten", h.Seq, h.Hash, last.GetSeq()))
		}
		resp := v.Result()
		resp.CheckedHeadRow = kept
		return resp, nil
	})
}

// ExportAudit calls each with every record in seq order, read in batches
// as Export reads (batches): the log is append-only, so the records
// are those there at the start and perhaps some appended since, each once.
func (s *Store) ExportAudit(ctx context.Context, each func(*aimemoryv1.AuditRecord) error) error {
	var after uint64
	return s.b.Scan(ctx, func(read func(func(seam.Tx) error) error) error {
		return batches(ctx, read, func(t seam.Tx, add func(*aimemoryv1.AuditRecord, int) bool) error {
			return t.EachAudit(after, ExportBatchRecords+1, func(seq uint64, r *aimemoryv1.AuditRecord) error {
				if r == nil {
					return fmt.Errorf("audit record %d: unreadable", seq)
				}
				if !add(r, proto.Size(r)) {
					return errFull
				}
				after = seq
				return nil
			})
		}, each)
	})
}

// ImportAudit writes records of another store's log as they were (seq,
// time and hashes kept), in one transaction: migrate's copy, resumable
// like Import. A kept head moves to the last of them when it is further.
func (s *Store) ImportAudit(ctx context.Context, records []*aimemoryv1.AuditRecord) ([]*aimemoryv1.ImportResult, error) {
	return written(ctx, s, func(t seam.Tx) ([]*aimemoryv1.ImportResult, error) {
		results := make([]*aimemoryv1.ImportResult, len(records))
		for i, r := range records {
			if r.GetSeq() == 0 || r.GetHash() == "" {
				results[i] = refused("audit record: seq and hash must be set")
				continue
			}
			have, found, err := auditAt(t, r.GetSeq())
			switch {
			case err != nil:
				return nil, err
			case !found:
				if err := t.PutAudit(r); err != nil {
					return nil, err
				}
				results[i] = &aimemoryv1.ImportResult{Outcome: "created"}
			case have != nil && proto.Equal(have, r):
				results[i] = &aimemoryv1.ImportResult{Outcome: "unchanged"}
			default:
				results[i] = refused(fmt.Sprintf("audit record %d: the target holds another record under this seq", r.GetSeq()))
			}
		}
		return results, nil
	})
}

func refused(why string) *aimemoryv1.ImportResult {
	return &aimemoryv1.ImportResult{Outcome: "refused", Error: why}
}

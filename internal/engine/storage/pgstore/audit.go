package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/audit"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// The audit log: records only ever appended, each carrying the keyed hash
// of the one before, the chain boltstore keeps (internal/engine/audit
// computes both). Every append locks and rewrites the one chain-head row
// (audit_head) first, so appends from several engines queue there: the
// later transaction is a serialization failure, retried (write), and then
// chains onto the earlier one. One chain, however many engines append;
// they must all hold the same audit.key, and an append onto a record the
// key does not verify is refused (audit.Chain.Next).

// AppendAudit appends a record, assigning its seq, time and hashes.
func (s *Store) AppendAudit(ctx context.Context, in *aimemoryv1.AuditRecord) (*aimemoryv1.AuditRecord, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := audit.Validate(in); err != nil {
		return nil, err
	}
	var r *aimemoryv1.AuditRecord
	err := s.write(ctx, func(w *writeTx) error {
		var (
			seq  int64
			hash string
			raw  []byte
		)
		if err := w.tx.QueryRow(w.ctx, `SELECT h.seq, h.hash, a.record FROM audit_head h LEFT JOIN audit a ON a.seq = h.seq FOR UPDATE OF h`).Scan(&seq, &hash, &raw); err != nil {
			return fmt.Errorf("audit chain head: %w", err)
		}
		var last *aimemoryv1.AuditRecord
		if seq > 0 {
			last = new(aimemoryv1.AuditRecord)
			if raw == nil || proto.Unmarshal(raw, last) != nil || last.GetSeq() != uint64(seq) || last.GetHash() != hash {
				return &audit.HeadError{Seq: uint64(seq), Problem: "is missing or not the record audit_head names"}
			}
		}
		var err error
		if r, err = s.audit.Next(last, in, w.now); err != nil {
			return err
		}
		if raw, err = proto.Marshal(r); err != nil {
			return err
		}
		if _, err := w.tx.Exec(w.ctx, `INSERT INTO audit (seq, agent_id, record) VALUES ($1, $2, $3)`, int64(r.Seq), r.GetAgentId(), raw); err != nil {
			return err
		}
		_, err = w.tx.Exec(w.ctx, `UPDATE audit_head SET seq = $1, hash = $2`, int64(r.Seq), r.Hash)
		return err
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// ListAudit returns up to limit records, newest first, optionally of one agent.
func (s *Store) ListAudit(ctx context.Context, agentID string, limit int) ([]*aimemoryv1.AuditRecord, error) {
	if limit <= 0 {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT seq, record FROM audit WHERE $1 = '' OR agent_id = $1 ORDER BY seq DESC LIMIT $2`, agentID, limit)
	if err != nil {
		return nil, err
	}
	var out []*aimemoryv1.AuditRecord
	err = eachRecord(rows, func(seq int64, r *aimemoryv1.AuditRecord) error {
		if r == nil {
			return fmt.Errorf("audit record %d: unreadable", seq)
		}
		out = append(out, r)
		return nil
	})
	return out, err
}

// AuditRecordAt is the record stored under seq; nil when there is none.
func (s *Store) AuditRecordAt(ctx context.Context, seq uint64) (*aimemoryv1.AuditRecord, error) {
	var raw []byte
	err := s.pool.QueryRow(ctx, `SELECT record FROM audit WHERE seq = $1`, int64(seq)).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	r := new(aimemoryv1.AuditRecord)
	return r, proto.Unmarshal(raw, r)
}

// VerifyAudit recomputes the chain from the first record (audit.Verifier),
// from one snapshot, and holds audit_head to the last record: a tail cut
// with the head row left as it was, or the head row moved, is found even
// by an engine that pinned nothing.
func (s *Store) VerifyAudit(ctx context.Context, pin audit.Head) (*aimemoryv1.VerifyAuditResponse, error) {
	v := s.audit.Verifier(pin)
	err := s.auditSnapshot(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT seq, record FROM audit ORDER BY seq`)
		if err != nil {
			return err
		}
		if err := eachRecord(rows, func(seq int64, r *aimemoryv1.AuditRecord) error { v.Add(uint64(seq), r); return nil }); err != nil {
			return err
		}
		var (
			seq  int64
			hash string
		)
		if err := tx.QueryRow(ctx, `SELECT seq, hash FROM audit_head`).Scan(&seq, &hash); err != nil {
			return fmt.Errorf("audit chain head: %w", err)
		}
		last := v.Last()
		if uint64(seq) != last.GetSeq() || hash != last.GetHash() {
			v.Fail(min(uint64(seq), last.GetSeq())+1, fmt.Sprintf("audit_head names record %d (hash %.16s…) but the log ends at record %d: records were removed, or the head row rewritten", seq, hash, last.GetSeq()))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	resp := v.Result()
	resp.CheckedHeadRow = true
	return resp, nil
}

// ExportAudit calls each with every record in seq order, from one snapshot.
func (s *Store) ExportAudit(ctx context.Context, each func(*aimemoryv1.AuditRecord) error) error {
	return s.auditSnapshot(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT seq, record FROM audit ORDER BY seq`)
		if err != nil {
			return err
		}
		return eachRecord(rows, func(seq int64, r *aimemoryv1.AuditRecord) error {
			if r == nil {
				return fmt.Errorf("audit record %d: unreadable", seq)
			}
			return each(r)
		})
	})
}

// ImportAudit writes records of another store's log as they were, in one
// transaction, and moves audit_head to the last of them when it is
// further than the head: migrate's copy, resumable like Import.
func (s *Store) ImportAudit(ctx context.Context, records []*aimemoryv1.AuditRecord) ([]*aimemoryv1.ImportResult, error) {
	var results []*aimemoryv1.ImportResult
	err := s.write(ctx, func(w *writeTx) error {
		results = make([]*aimemoryv1.ImportResult, len(records))
		var (
			seqs   []int64
			agents []string
			raws   [][]byte
			at     = map[int64]int{} // seq → index in records
		)
		for i, r := range records {
			if r.GetSeq() == 0 || r.GetHash() == "" {
				results[i] = &aimemoryv1.ImportResult{Outcome: "refused", Error: "audit record: seq and hash must be set"}
				continue
			}
			raw, err := proto.Marshal(r)
			if err != nil {
				return err
			}
			seqs, agents, raws = append(seqs, int64(r.GetSeq())), append(agents, r.GetAgentId()), append(raws, raw)
			at[int64(r.GetSeq())] = i
		}
		rows, err := w.tx.Query(w.ctx, `INSERT INTO audit (seq, agent_id, record)
			SELECT * FROM unnest($1::bigint[], $2::text[], $3::bytea[]) ON CONFLICT (seq) DO NOTHING RETURNING seq`, seqs, agents, raws)
		if err != nil {
			return err
		}
		created, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return err
		}
		for _, seq := range created {
			results[at[seq]] = &aimemoryv1.ImportResult{Outcome: "created"}
		}
		// The rest were there already: the same record, or another one.
		rows, err = w.tx.Query(w.ctx, `SELECT seq, record FROM audit WHERE seq = ANY($1)`, seqs)
		if err != nil {
			return err
		}
		err = eachRecord(rows, func(seq int64, have *aimemoryv1.AuditRecord) error {
			i := at[seq]
			if results[i] != nil {
				return nil
			}
			if have != nil && proto.Equal(have, records[i]) {
				results[i] = &aimemoryv1.ImportResult{Outcome: "unchanged"}
			} else {
				results[i] = &aimemoryv1.ImportResult{Outcome: "refused", Error: fmt.Sprintf("audit record %d: the target holds another record under this seq", seq)}
			}
			return nil
		})
		if err != nil {
			return err
		}
		var last *aimemoryv1.AuditRecord
		for i, r := range records {
			if results[i].GetOutcome() != "refused" && r.GetSeq() > last.GetSeq() {
				last = r
			}
		}
		if last == nil {
			return nil
		}
		_, err = w.tx.Exec(w.ctx, `UPDATE audit_head SET seq = $1, hash = $2 WHERE seq < $1`, int64(last.GetSeq()), last.GetHash())
		return err
	})
	return results, err
}

// auditSnapshot runs fn in one read-only REPEATABLE READ transaction.
func (s *Store) auditSnapshot(ctx context.Context, fn func(pgx.Tx) error) error {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	return fn(tx)
}

// eachRecord calls fn with every (seq, record) row, the record nil when it
// does not decode, and closes rows.
func eachRecord(rows pgx.Rows, fn func(seq int64, r *aimemoryv1.AuditRecord) error) error {
	defer rows.Close()
	for rows.Next() {
		var (
			seq int64
			raw []byte
		)
		if err := rows.Scan(&seq, &raw); err != nil {
			return err
		}
		r := new(aimemoryv1.AuditRecord)
		if proto.Unmarshal(raw, r) != nil {
			r = nil
		}
		if err := fn(seq, r); err != nil {
			return err
		}
	}
	return rows.Err()
}

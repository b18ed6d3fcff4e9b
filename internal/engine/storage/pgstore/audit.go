package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/audit"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// The audit log: records only ever appended, each carrying the hash of the
// one before, the chain boltstore keeps (internal/engine/audit computes
// both). Every append locks and rewrites the one chain-head row first, so
// appends from several engines queue there: the later transaction is a
// serialization failure, retried (write), and then chains onto the
// earlier one. One chain, however many engines append.

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
		)
		if err := w.tx.QueryRow(w.ctx, `SELECT seq, hash FROM audit_head FOR UPDATE`).Scan(&seq, &hash); err != nil {
			return fmt.Errorf("audit chain head: %w", err)
		}
		var last *aimemoryv1.AuditRecord
		if seq > 0 {
			last = &aimemoryv1.AuditRecord{Seq: uint64(seq), Hash: hash}
		}
		r = audit.Next(last, in, w.now)
		raw, err := proto.Marshal(r)
		if err != nil {
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
	defer rows.Close()
	var out []*aimemoryv1.AuditRecord
	for rows.Next() {
		var (
			seq int64
			raw []byte
		)
		if err := rows.Scan(&seq, &raw); err != nil {
			return nil, err
		}
		r := new(aimemoryv1.AuditRecord)
		if err := proto.Unmarshal(raw, r); err != nil {
			return nil, fmt.Errorf("audit record %d: %w", seq, err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// VerifyAudit recomputes the chain from the first record (audit.Verifier),
// from one snapshot.
func (s *Store) VerifyAudit(ctx context.Context) (*aimemoryv1.VerifyAuditResponse, error) {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	rows, err := tx.Query(ctx, `SELECT seq, record FROM audit ORDER BY seq`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	v := audit.NewVerifier()
	for rows.Next() {
		var (
			seq int64
			raw []byte
		)
		if err := rows.Scan(&seq, &raw); err != nil {
			return nil, err
		}
		r := new(aimemoryv1.AuditRecord)
		if proto.Unmarshal(raw, r) != nil {
			r = nil
		}
		v.Add(uint64(seq), r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return v.Result(), nil
}

package pgstore

import (
	"fmt"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/audit"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// The audit log's records (the rules are package records'). Every append
// locks and rewrites the one chain-head row (audit_head) first, so appends
// from several engines queue there: the later transaction is a
// serialization failure, retried (write), and then chains onto the earlier
// one.

func (t seamTx) EachAudit(after uint64, limit int, fn func(uint64, *aimemoryv1.AuditRecord) error) error {
	q, args := `SELECT seq, record FROM audit WHERE seq > $1 ORDER BY seq`, []any{int64(after)}
	if limit > 0 {
		q, args = q+` LIMIT $2`, append(args, limit)
	}
	rows, err := t.w.tx.Query(t.w.ctx, q, args...)
	if err != nil {
		return err
	}
	return eachRecord(rows, func(seq int64, r *aimemoryv1.AuditRecord) error { return fn(uint64(seq), r) })
}

func (t seamTx) RecentAudit(agent string, limit int) ([]*aimemoryv1.AuditRecord, error) {
	rows, err := t.w.tx.Query(t.w.ctx, `SELECT seq, record FROM audit WHERE $1 = '' OR agent_id = $1 ORDER BY seq DESC LIMIT $2`, agent, limit)
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

// AuditHead is the audit_head row, locked in a write.
func (t seamTx) AuditHead() (audit.Head, bool, error) {
	q := `SELECT seq, hash FROM audit_head FOR UPDATE`
	if t.w.read {
		q = `SELECT seq, hash FROM audit_head`
	}
	var (
		seq  int64
		hash string
	)
	if err := t.w.tx.QueryRow(t.w.ctx, q).Scan(&seq, &hash); err != nil {
		return audit.Head{}, false, fmt.Errorf("audit chain head: %w", err)
	}
	return audit.Head{Seq: uint64(seq), Hash: hash}, true, nil
}

func (t seamTx) PutAudit(r *aimemoryv1.AuditRecord) error {
	raw, err := proto.Marshal(r)
	if err != nil {
		return err
	}
	if _, err := t.w.tx.Exec(t.w.ctx, `INSERT INTO audit (seq, agent_id, record) VALUES ($1, $2, $3)`, int64(r.GetSeq()), r.GetAgentId(), raw); err != nil {
		return err
	}
	_, err = t.w.tx.Exec(t.w.ctx, `UPDATE audit_head SET seq = $1, hash = $2 WHERE seq < $1`, int64(r.GetSeq()), r.GetHash())
	return err
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

package pgstore

import (
	"errors"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
	"github.com/ai-memory/ai-memory/sdk/record"
)

// Governance records in export and import, as boltstore's transfer.go.

// importStandard writes a namespace's standard row as it was (policy,
// owner, who set it). Its memory need not be here: deleting a standard's
// memory does not lift the standard.
func (w *writeTx) ImportStandard(st *aimemoryv1.Standard) (string, error) {
	if err := ops.ImportStandardRule(st); err != nil {
		return "", ops.Refuse(err)
	}
	old, err := govView{w: w}.Standard(st.GetNamespace())
	if err != nil {
		return "", err
	}
	if old != nil {
		if proto.Equal(old, st) {
			return "unchanged", nil
		}
		return "", ops.Refusef("namespace %s has another standard here; import does not overwrite", record.Quote(st.GetNamespace()))
	}
	return "created", w.putStandard(st)
}

// importPending writes an approval queue entry, decided or not. A pending
// one is decided later by the rules of this store, as any other.
func (w *writeTx) ImportPending(p *aimemoryv1.PendingAction) (string, error) {
	if err := ops.ImportPendingRule(p); err != nil {
		return "", ops.Refuse(err)
	}
	var raw []byte
	err := w.tx.QueryRow(w.ctx, `SELECT record FROM pending WHERE id = $1`, p.GetId()).Scan(&raw)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return "", err
	default:
		old, err := decodePending(p.GetId(), raw)
		if err != nil {
			return "", err
		}
		if proto.Equal(old, p) {
			return "unchanged", nil
		}
		return "", ops.Refusef("pending action %s exists with other content; import does not overwrite", p.GetId())
	}
	return "created", w.putPending(p)
}

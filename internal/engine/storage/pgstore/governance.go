package pgstore

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/governance"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// govView is storage.GovernanceView over a write transaction, so the
// namespace policy is applied to every write (storage.Authorize).
type govView struct{ w *writeTx }

var _ storage.GovernanceView = govView{}

func (v govView) Standard(ns string) (*aimemoryv1.Standard, error) {
	var raw []byte
	err := v.w.tx.QueryRow(v.w.ctx, `SELECT record FROM standards WHERE namespace = $1`, ns).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	st := new(aimemoryv1.Standard)
	if err := proto.Unmarshal(raw, st); err != nil {
		return nil, fmt.Errorf("decode standard of %q: %w", ns, err)
	}
	return st, nil
}

func (v govView) Registered(principal string) (bool, error) {
	if principal == "" {
		return false, nil
	}
	id, err := v.w.titleOwner(authz.GuardAgents.Name, ops.AgentTitlePrefix+principal)
	return id != "", err
}

func (v govView) RegisteredOthers(principal string) (int, error) {
	rows, err := v.w.tx.Query(v.w.ctx, `SELECT substr(title, $2) FROM memories WHERE namespace = $1 AND starts_with(title, $3)`,
		authz.GuardAgents.Name, len(ops.AgentTitlePrefix)+1, ops.AgentTitlePrefix)
	if err != nil {
		return 0, err
	}
	n := 0
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return 0, err
		}
		if !governance.SamePrincipal(p, principal) {
			n++
		}
	}
	return n, rows.Err()
}

func (v govView) Governance() *governance.Config { return v.w.s.gov }

// putStandard writes ns's standard row (the rules are ops.SetStandard,
// ops.MayGovern). Every write reads it inside its transaction (govView),
// so a policy set on one engine governs the next write on any other.
func (w *writeTx) putStandard(st *aimemoryv1.Standard) error {
	raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(st)
	if err != nil {
		return err
	}
	_, err = w.tx.Exec(w.ctx, `INSERT INTO standards (namespace, record) VALUES ($1, $2)
		ON CONFLICT (namespace) DO UPDATE SET record = EXCLUDED.record`, st.GetNamespace(), raw)
	return err
}

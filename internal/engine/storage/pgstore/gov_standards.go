package pgstore

import (
	"context"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// Namespace standards, as boltstore's (the rules are ops.SetStandard,
// ops.GetStandard, ops.MayGovern). The policy lives in the standards row,
// which every write reads inside its transaction (govView), so a policy
// set on one engine governs the next write on any other.

// SetStandard pins a memory as ns's standard, with its policy.
func (s *Store) SetStandard(ctx context.Context, req *aimemoryv1.SetStandardRequest) (*aimemoryv1.SetStandardResponse, error) {
	policy, err := ops.SetStandardPolicy(req)
	if err != nil {
		return nil, err
	}
	var resp *aimemoryv1.SetStandardResponse
	err = s.write(ctx, func(w *writeTx) error {
		var err error
		resp, err = ops.SetStandard(govTx{opsTx{w}}, req, policy)
		return err
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// ClearStandard removes ns's standard row and with it the policy.
func (s *Store) ClearStandard(ctx context.Context, req *aimemoryv1.ClearStandardRequest) (*aimemoryv1.ClearStandardResponse, error) {
	ns := req.GetNamespace()
	if err := ops.ValidStandardNamespace("namespace", ns); err != nil {
		return nil, err
	}
	var resp *aimemoryv1.ClearStandardResponse
	err := s.write(ctx, func(w *writeTx) error {
		resp = &aimemoryv1.ClearStandardResponse{}
		row, err := govView{w: w}.Standard(ns)
		if err != nil || row == nil {
			return err
		}
		if err := ops.MayClearStandard(govTx{opsTx{w}}, ns, row); err != nil {
			return err
		}
		resp.Cleared = true
		_, err = w.tx.Exec(w.ctx, `DELETE FROM standards WHERE namespace = $1`, ns)
		return err
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// GetStandard reads ns's standard, or with inherit the whole chain's, and
// the policy in force for ns, from one snapshot.
func (s *Store) GetStandard(ctx context.Context, req *aimemoryv1.GetStandardRequest) (*aimemoryv1.GetStandardResponse, error) {
	if err := ops.ValidStandardNamespace("namespace", req.GetNamespace()); err != nil {
		return nil, err
	}
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	w := &writeTx{ctx: ctx, s: s, tx: tx} // read-only: only its reads are used
	return ops.GetStandard(ctx, govView{w: w}, req, w.get)
}

func (w *writeTx) putStandard(st *aimemoryv1.Standard) error {
	raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(st)
	if err != nil {
		return err
	}
	_, err = w.tx.Exec(w.ctx, `INSERT INTO standards (namespace, record) VALUES ($1, $2)
		ON CONFLICT (namespace) DO UPDATE SET record = EXCLUDED.record`, st.GetNamespace(), raw)
	return err
}

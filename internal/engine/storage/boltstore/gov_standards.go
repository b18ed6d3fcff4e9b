package boltstore

import (
	"context"

	bolt "go.etcd.io/bbolt"

	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// Namespace standards. The policy lives in the engine's standards row, not
// in the standard memory's metadata: a memory_update of that memory (which
// its own namespace's policy governs) cannot rewrite it, and deleting or
// collecting the memory cannot lift it. Only the namespace's owner or an
// operator sets or clears the row.

// SetStandard pins a memory as ns's standard, with its policy (ops.SetStandard).
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
		row, err := govView{tx: w.tx, cfg: w.s.gov}.Standard(ns)
		if err != nil || row == nil {
			return err
		}
		if err := ops.MayClearStandard(govTx{opsTx{w}}, ns, row); err != nil {
			return err
		}
		resp.Cleared = true
		return w.tx.Bucket(bucketStandards).Delete([]byte(ns))
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// GetStandard reads ns's standard, or with inherit the whole chain's, and
// the policy in force for ns.
func (s *Store) GetStandard(ctx context.Context, req *aimemoryv1.GetStandardRequest) (*aimemoryv1.GetStandardResponse, error) {
	ns := req.GetNamespace()
	if err := ops.ValidStandardNamespace("namespace", ns); err != nil {
		return nil, err
	}
	var resp *aimemoryv1.GetStandardResponse
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		resp, err = ops.GetStandard(ctx, govView{tx: tx, cfg: s.gov}, req, func(id string) (*aimemoryv1.Memory, error) {
			if raw := tx.Bucket(bucketMemories).Get([]byte(id)); raw != nil {
				return decodeLive(raw)
			}
			return nil, nil
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

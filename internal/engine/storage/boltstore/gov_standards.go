package boltstore

import (
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/ai-memory/ai-memory/internal/engine/governance"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
	"github.com/ai-memory/ai-memory/sdk/record"
)

// Namespace standards. The policy lives in the engine's standards row, not
// in the standard memory's metadata: a memory_update of that memory (which
// its own namespace's policy governs) cannot rewrite it, and deleting or
// collecting the memory cannot lift it. Only the namespace's owner or an
// operator sets or clears the row.

// validStandardNamespace: "*" or a namespace outside the guarded ones.
func validStandardNamespace(field, ns string) error {
	if ns == governance.Global {
		return nil
	}
	if err := record.ValidateNamespace(field, ns); err != nil {
		return err
	}
	if storage.IsGuarded(ns) {
		return &record.FieldError{Field: field, Rule: "must not be a guarded namespace (beginning with '_')"}
	}
	return nil
}

// mayGovern checks that who may set or clear ns's standard: an operator,
// its owner, or anyone while it has none (the first setter becomes it).
func (w *writeTx) mayGovern(ns string, row *aimemoryv1.Standard, who, verb string) error {
	if who == "" {
		return &storage.DeniedError{Reason: verb + " refused: it needs a caller identity"}
	}
	owner := storage.OwnerOf(w.s.gov, ns, row)
	if w.s.gov.IsOperator(who) || owner == "" || owner == who {
		return nil
	}
	return &storage.DeniedError{Reason: fmt.Sprintf("%s refused: namespace %s is owned by %s; only its owner or an operator ([governance] operators) may", verb, record.Quote(ns), record.Quote(owner))}
}

// SetStandard pins a memory as ns's standard, with its policy. The memory
// becomes long-tier with no expiry in the same transaction: a standard
// never expires by tier.
func (s *Store) SetStandard(ctx context.Context, req *aimemoryv1.SetStandardRequest) (*aimemoryv1.SetStandardResponse, error) {
	ns, id := req.GetNamespace(), req.GetId()
	if err := validStandardNamespace("namespace", ns); err != nil {
		return nil, err
	}
	if err := record.ValidateID("id", id); err != nil {
		return nil, err
	}
	if req.Parent != nil {
		if err := validStandardNamespace("parent", req.GetParent()); err != nil {
			return nil, err
		}
		if req.GetParent() == ns {
			return nil, &record.FieldError{Field: "parent", Rule: "must differ from namespace (a namespace cannot be its own parent)"}
		}
	}
	policy := ""
	if raw := req.GetGovernanceJson(); raw != "" {
		p, err := governance.Parse([]byte(raw))
		if err != nil {
			return nil, &record.FieldError{Field: "governance", Rule: err.Error()}
		}
		policy = p.Canonical()
	}
	if o := req.GetOwner(); o != "" {
		if err := record.ValidateAgentID("owner", o); err != nil {
			return nil, err
		}
	}
	var resp *aimemoryv1.SetStandardResponse
	err := s.write(ctx, func(w *writeTx) error {
		v := govView{tx: w.tx, cfg: w.s.gov}
		row, err := v.Standard(ns)
		if err != nil {
			return err
		}
		who := w.principal()
		if err := w.mayGovern(ns, row, who, "set_standard"); err != nil {
			return err
		}
		m, err := w.get(id)
		if err != nil {
			return err
		}
		if m == nil || !storage.Readable(w.ctx, m.GetNamespace()) {
			return fmt.Errorf("%w: %s", storage.ErrNotFound, id)
		}
		if storage.IsGuarded(m.GetNamespace()) {
			return &record.FieldError{Field: "id", Rule: "must name a memory outside the guarded namespaces"}
		}
		next := &aimemoryv1.Standard{Namespace: ns, StandardId: id, SetBy: who, UpdatedAt: w.now}
		if row != nil {
			next.Owner, next.PolicyJson = row.Owner, row.PolicyJson
			next.Parent, next.ParentExplicit = row.Parent, row.ParentExplicit
		}
		if next.Owner == "" {
			next.Owner = who // the first setter owns it
		}
		if o := req.GetOwner(); o != "" && o != next.Owner {
			if _, pinned := w.s.gov.ConfiguredOwner(ns); pinned {
				return &storage.DeniedError{Reason: fmt.Sprintf("set_standard refused: namespace %s's owner is set by [governance.owners]", record.Quote(ns))}
			}
			next.Owner = o
		}
		if o, ok := w.s.gov.ConfiguredOwner(ns); ok {
			next.Owner, next.OwnerFromConfig = o, true
		}
		if policy != "" {
			next.PolicyJson = policy
		}
		switch {
		case req.Parent != nil:
			next.Parent, next.ParentExplicit = req.GetParent(), true
		case !next.ParentExplicit:
			next.Parent = ""
			for _, cand := range governance.ParentCandidates(ns) {
				if r, err := v.Standard(cand); err != nil {
					return err
				} else if r != nil {
					next.Parent = cand
					break
				}
			}
		}
		if err := w.pin(m); err != nil {
			return err
		}
		resp = &aimemoryv1.SetStandardResponse{Standard: next}
		return putStandard(w.tx, next)
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// pin makes a standard's memory permanent: long tier, no expiry. An engine
// effect of setting the standard (like auto-promotion), not the caller's
// edit of the memory, so updated_at and the write policy are untouched.
func (w *writeTx) pin(m *aimemoryv1.Memory) error {
	if m.GetTier() == "long" && m.GetExpiresAt() == 0 {
		return nil
	}
	next := rules.Clone(m)
	next.Tier, next.ExpiresAt = "long", 0
	return w.put(m, next, "memory_promote")
}

// ClearStandard removes ns's standard row and with it the policy.
func (s *Store) ClearStandard(ctx context.Context, req *aimemoryv1.ClearStandardRequest) (*aimemoryv1.ClearStandardResponse, error) {
	ns := req.GetNamespace()
	if err := validStandardNamespace("namespace", ns); err != nil {
		return nil, err
	}
	var resp *aimemoryv1.ClearStandardResponse
	err := s.write(ctx, func(w *writeTx) error {
		resp = &aimemoryv1.ClearStandardResponse{}
		row, err := govView{tx: w.tx, cfg: w.s.gov}.Standard(ns)
		if err != nil || row == nil {
			return err
		}
		if err := w.mayGovern(ns, row, w.principal(), "clear_standard"); err != nil {
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
	if err := validStandardNamespace("namespace", ns); err != nil {
		return nil, err
	}
	resp := &aimemoryv1.GetStandardResponse{Namespace: ns}
	err := s.db.View(func(tx *bolt.Tx) error {
		v := govView{tx: tx, cfg: s.gov}
		var err error
		resp.Chain = governance.Chain(ns, func(n string) string {
			r, e := v.Standard(n)
			if e != nil && err == nil {
				err = e
			}
			return r.GetParent()
		})
		if err != nil {
			return err
		}
		levels := []string{ns}
		if req.GetInherit() {
			levels = resp.Chain
		}
		for _, n := range levels {
			row, err := v.Standard(n)
			if err != nil {
				return err
			}
			if row == nil {
				continue
			}
			if o, ok := s.gov.ConfiguredOwner(n); ok {
				row.Owner, row.OwnerFromConfig = o, true
			}
			lv := &aimemoryv1.StandardLevel{Standard: row}
			if raw := tx.Bucket(bucketMemories).Get([]byte(row.StandardId)); raw != nil {
				m, err := decodeMemory(raw)
				if err != nil {
					return err
				}
				if storage.Readable(ctx, m.GetNamespace()) {
					lv.Memory = m
				}
			}
			resp.Levels = append(resp.Levels, lv)
		}
		g, err := storage.ResolveGoverning(v, ns)
		if err != nil {
			return err
		}
		resp.EffectivePolicyJson, resp.PolicyFrom = g.Policy.Canonical(), g.Namespace
		return nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

package boltstore

import (
	"bytes"
	"fmt"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/governance"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Governance state: namespace standards (with their policies and owners),
// pending actions, and the agent registry (memories titled agent:<id> in
// the guarded namespace _agents, found through the title index).
var (
	bucketStandards   = []byte("standards")    // namespace → Standard
	bucketPending     = []byte("pending")      // id → PendingAction
	bucketPendingTime = []byte("pending_time") // requested_at(8, big-endian) id → ""
)

// agentTitlePrefix is the registry's title of an agent: agent:<principal>.
const agentTitlePrefix = ops.AgentTitlePrefix

// govView is storage.GovernanceView over a bbolt transaction.
type govView struct {
	tx  *bolt.Tx
	cfg *governance.Config
}

var _ storage.GovernanceView = govView{}

func (v govView) Standard(ns string) (*aimemoryv1.Standard, error) {
	raw := v.tx.Bucket(bucketStandards).Get([]byte(ns))
	if raw == nil {
		return nil, nil
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
	return v.tx.Bucket(bucketTitles).Get(titleKey(authz.GuardAgents.Name, agentTitlePrefix+principal)) != nil, nil
}

func (v govView) RegisteredOthers(principal string) (int, error) {
	prefix := titleKey(authz.GuardAgents.Name, agentTitlePrefix)
	n := 0
	c := v.tx.Bucket(bucketTitles).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		if !governance.SamePrincipal(string(k[len(prefix):]), principal) {
			n++
		}
	}
	return n, nil
}

func (v govView) Governance() *governance.Config { return v.cfg }

func putStandard(tx *bolt.Tx, st *aimemoryv1.Standard) error {
	raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(st)
	if err != nil {
		return err
	}
	return tx.Bucket(bucketStandards).Put([]byte(st.GetNamespace()), raw)
}

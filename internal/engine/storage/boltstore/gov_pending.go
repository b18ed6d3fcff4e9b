package boltstore

import (
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Pending actions. A write the namespace policy queues is recorded, in the
// same transaction as the policy's answer, as a pending action whose
// payload is the request itself; nothing else of it is written. Approving
// it runs that request, as its requester, inside the transaction that
// marks it approved, so it executes exactly once however many approvers
// race (the writer lock orders their transactions, and the second finds
// it decided).

func pendingTimeKey(at int64, id string) []byte {
	return append(binary.BigEndian.AppendUint64(nil, uint64(at)), id...)
}

// putPending writes p over the row of its id, and its entry in the
// requested-at index ListPending walks.
func (w *writeTx) putPending(p *aimemoryv1.PendingAction) error {
	raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(p)
	if err != nil {
		return err
	}
	if err := w.tx.Bucket(bucketPending).Put([]byte(p.Id), raw); err != nil {
		return err
	}
	return w.tx.Bucket(bucketPendingTime).Put(pendingTimeKey(p.RequestedAt, p.Id), nil)
}

func getPending(tx *bolt.Tx, id string) (*aimemoryv1.PendingAction, error) {
	raw := tx.Bucket(bucketPending).Get([]byte(id))
	if raw == nil {
		return nil, &storage.PendingNotFoundError{ID: id}
	}
	p := new(aimemoryv1.PendingAction)
	if err := proto.Unmarshal(raw, p); err != nil {
		return nil, fmt.Errorf("decode pending action %s: %w", id, err)
	}
	return p, nil
}

// EachPending walks the requested-at index newest first (seam.Tx).
func (t seamTx) EachPending(status string, now int64, fn func(*aimemoryv1.PendingAction) bool) error {
	all := func(string) bool { return true }
	c := t.w.tx.Bucket(bucketPendingTime).Cursor()
	for k, _ := c.Last(); k != nil; k, _ = c.Prev() {
		p, err := getPending(t.w.tx, string(k[8:]))
		if err != nil {
			return err
		}
		if ops.Listed(all, p, status, now) && !fn(p) {
			return nil
		}
	}
	return nil
}

package boltstore

import (
	"context"
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// Consolidate writes one new long-tier memory from its sources and
// archives the sources (reason consolidated, through the one archive
// operation, never a hard delete), in one transaction: a kill at any
// moment leaves all of it or none. Each source gets a derived_from link
// from the new memory before it is archived, so the link moves into the
// archive with it: provenance can be walked with include_archived, and a
// restore of a source puts its link back in the live graph.
//
// Governance: the new memory is asked as OpConsolidate with New (write in
// the target namespace), each source with Old (delete in its namespace);
// every ask happens before anything is written, and a denial beats a queue.
func (s *Store) Consolidate(ctx context.Context, req *aimemoryv1.ConsolidateRequest) (*aimemoryv1.ConsolidateResponse, error) {
	if err := rules.ValidateConsolidate(req); err != nil {
		return nil, err
	}
	var resp *aimemoryv1.ConsolidateResponse
	payload := &aimemoryv1.PendingPayload{Action: &aimemoryv1.PendingPayload_Consolidate{Consolidate: req}}
	err := s.writeGoverned(ctx, payload, func(w *writeTx) error {
		var err error
		resp, err = w.consolidate(req)
		return err
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// consolidate is Consolidate's transaction step (ops.Consolidate), also
// the approval path's executor.
func (w *writeTx) consolidate(req *aimemoryv1.ConsolidateRequest) (*aimemoryv1.ConsolidateResponse, error) {
	return ops.Consolidate(opsTx{w}, req)
}

// standardsOf is the namespaces whose standard is one of ids, sorted.
func standardsOf(tx *bolt.Tx, ids []string) ([]string, error) {
	var out []string
	err := tx.Bucket(bucketStandards).ForEach(func(k, v []byte) error {
		st := new(aimemoryv1.Standard)
		if err := proto.Unmarshal(v, st); err != nil {
			return fmt.Errorf("decode standard %q: %w", k, err)
		}
		if slices.Contains(ids, st.GetStandardId()) {
			out = append(out, st.GetNamespace())
		}
		return nil
	})
	slices.Sort(out)
	return out, err
}

package boltstore

import (
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"

	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

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

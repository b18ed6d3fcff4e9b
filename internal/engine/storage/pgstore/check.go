package pgstore

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/ai-memory/ai-memory/internal/engine/keyword"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// CheckConsistency compares what the store holds with what it derives
// from the records alone: the key columns and term lists of every row, and
// this engine's in-memory index (doc table and postings). It reads
// everything: for tests and diagnosis (storagetest.Checker), with no other
// engine writing (the index is caught up first, then compared).
func (s *Store) CheckConsistency(ctx context.Context) error {
	s.writeMu.Lock() // the index must be at the same commit as the read
	defer s.writeMu.Unlock()
	if err := s.catchUp(ctx); err != nil {
		return err
	}
	rows, err := s.pool.Query(ctx, `SELECT id, namespace, title, expires_at, terms, tfs, record FROM memories`)
	if err != nil {
		return err
	}
	defer rows.Close()
	records := map[string]*aimemoryv1.Memory{}
	var problems []error
	for rows.Next() {
		var (
			id, ns, title string
			expires       int64
			terms         []string
			tfs           []int32
			raw           []byte
		)
		if err := rows.Scan(&id, &ns, &title, &expires, &terms, &tfs, &raw); err != nil {
			return err
		}
		m, err := decodeMemory(raw)
		if err != nil {
			return err
		}
		if m.Id != id || m.Namespace != ns || m.Title != title || m.ExpiresAt != expires {
			problems = append(problems, fmt.Errorf("row %s: columns (%q, %q, %d) disagree with its record", id, ns, title, expires))
		}
		want, _ := keyword.Document(m.Title, m.Content, m.Tags)
		if got := toTermFreqs(terms, tfs); !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
			problems = append(problems, fmt.Errorf("stored terms of %s = %v, want %v", id, got, want))
		}
		records[id] = m
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if err := s.idx.Verify(records); err != nil {
		problems = append(problems, err)
	}
	if err := s.checkVectors(ctx, records); err != nil {
		problems = append(problems, err)
	}
	return errors.Join(problems...)
}

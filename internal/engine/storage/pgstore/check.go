package pgstore

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/ai-memory/ai-memory/internal/engine/keyword"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
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
	graph, err := s.checkGraph(ctx, records)
	if err != nil {
		return err
	}
	return errors.Join(append(problems, graph...)...)
}

// checkGraph: what the foreign keys cannot say. Every link is in its
// record's key, archived links have an archived end and no end that is
// neither live nor archived, and alias rows are in their entity's
// namespace under their folded key.
func (s *Store) checkGraph(ctx context.Context, records map[string]*aimemoryv1.Memory) ([]error, error) {
	var problems []error
	archived := map[string]bool{}
	rows, err := s.pool.Query(ctx, `SELECT id FROM archived`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		archived[id] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, table := range []string{liveLinks, archivedLinks} {
		rows, err := s.pool.Query(ctx, `SELECT source_id, target_id, relation, record FROM `+table)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var (
				src, dst, rel string
				raw           []byte
			)
			if err := rows.Scan(&src, &dst, &rel, &raw); err != nil {
				rows.Close()
				return nil, err
			}
			l, err := decodeLink(raw)
			switch {
			case err != nil:
				problems = append(problems, fmt.Errorf("%s %s→%s %s: %w", table, src, dst, rel, err))
			case l.SourceId != src || l.TargetId != dst || l.Relation != rel:
				problems = append(problems, fmt.Errorf("%s %s→%s %s: its record says %s→%s %s", table, src, dst, rel, l.SourceId, l.TargetId, l.Relation))
			case table == archivedLinks && !archived[src] && !archived[dst]:
				problems = append(problems, fmt.Errorf("archived link %s→%s %s has two live ends", src, dst, rel))
			case table == archivedLinks && ((records[src] == nil && !archived[src]) || (records[dst] == nil && !archived[dst])):
				problems = append(problems, fmt.Errorf("dangling archived link %s→%s %s", src, dst, rel))
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	rows, err = s.pool.Query(ctx, `SELECT entity_id, folded, namespace, alias FROM entity_aliases`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id, folded, ns, alias string
		if err := rows.Scan(&id, &folded, &ns, &alias); err != nil {
			return nil, err
		}
		if m := records[id]; m == nil || m.Namespace != ns || rules.FoldAlias(alias) != folded {
			problems = append(problems, fmt.Errorf("alias %q (%q in %q) does not match entity %s", alias, folded, ns, id))
		}
	}
	return problems, rows.Err()
}

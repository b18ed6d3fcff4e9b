package pgstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ai-memory/ai-memory/internal/engine/index"
)

// Every engine's in-memory index is a replay of the change log (table
// changes): loaded at open with the log position in the same snapshot,
// then caught up, in seq order, after each of its own writes and before
// each read, so it sees every engine's committed writes.
//
// A seq is taken before its transaction commits, so a later seq can be
// visible first. A seq skipped over is kept as a hole and asked for again
// on every catch-up until it shows up or holeTimeout passes (a rolled-back
// write's seq never shows up). Two changes to one memory cannot come out
// of order: the log row is written holding the memory's row lock.

// holeTimeout is how long a skipped seq may still commit; write
// transactions are single requests, far shorter.
const holeTimeout = 30 * time.Second

// openWindow is how far below the log's end, at open, seqs missing from
// the snapshot are taken for transactions still in flight.
const openWindow = 1000

// logPos is where an index is in the change log. Guarded by Store.syncMu.
type logPos struct {
	seq   int64               // every seq ≤ this is applied or a hole
	holes map[int64]time.Time // skipped seqs → when first skipped
}

// skip records the seqs in (from, to) as holes.
func (p *logPos) skip(from, to int64, now time.Time) {
	for q := from + 1; q < to; q++ {
		p.holes[q] = now
	}
}

// loadPos is the log position of a snapshot (tx): its last seq, with the
// seqs missing below it in openWindow as holes.
func loadPos(ctx context.Context, tx pgx.Tx) (logPos, error) {
	pos := logPos{holes: map[int64]time.Time{}}
	// Below the pruned horizon nothing is awaited (prune.go): the snapshot has it all.
	var horizon int64
	if err := tx.QueryRow(ctx, `SELECT greatest(coalesce((SELECT max(seq) FROM changes), 0), seq), seq FROM changes_horizon`).Scan(&pos.seq, &horizon); err != nil {
		return pos, err
	}
	rows, err := tx.Query(ctx, `SELECT seq FROM changes WHERE seq > $1 ORDER BY seq`, max(horizon, pos.seq-openWindow))
	if err != nil {
		return pos, err
	}
	defer rows.Close()
	prev, now := max(horizon, pos.seq-openWindow), time.Now()
	for rows.Next() {
		var q int64
		if err := rows.Scan(&q); err != nil {
			return pos, err
		}
		pos.skip(prev, q, now)
		prev = q
	}
	return pos, rows.Err()
}

// catchUp applies the log's changes this engine's index has not seen.
func (s *Store) catchUp(ctx context.Context) error {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	now := time.Now()
	holes := make([]int64, 0, len(s.pos.holes))
	for q, at := range s.pos.holes {
		if now.Sub(at) > holeTimeout {
			delete(s.pos.holes, q) // rolled back, or it would be here by now
			continue
		}
		holes = append(holes, q)
	}
	// The common case, nothing new, costs one read of the sequence (its
	// last value is taken, not necessarily committed: an upper bound) and
	// of the pruned horizon (prune.go).
	var last, horizon int64
	var called bool
	if err := s.pool.QueryRow(ctx, `SELECT last_value, is_called, (SELECT seq FROM changes_horizon) FROM changes_seq_seq`).Scan(&last, &called, &horizon); err != nil {
		return err
	}
	if s.behindHorizon(horizon) {
		return s.reload(ctx, horizon)
	}
	if len(holes) == 0 && (!called || last <= s.pos.seq) {
		return nil
	}
	// Two index range scans (an OR of them would read the whole log).
	const cols = `SELECT seq, id, record, reindex, old_terms, old_tfs, new_terms, new_tfs FROM changes`
	rows, err := s.pool.Query(ctx, `(`+cols+` WHERE seq > $1) UNION ALL (`+cols+` WHERE seq = ANY($2) AND seq <= $1) ORDER BY seq`,
		s.pos.seq, holes)
	if err != nil {
		return err
	}
	defer rows.Close()
	var changes []index.Change
	next := s.pos
	for rows.Next() {
		var (
			seq                int64
			c                  index.Change
			raw                []byte
			oldTerms, newTerms []string
			oldTfs, newTfs     []int32
		)
		if err := rows.Scan(&seq, &c.ID, &raw, &c.Reindex, &oldTerms, &oldTfs, &newTerms, &newTfs); err != nil {
			return err
		}
		if raw != nil {
			if c.Memory, err = decodeMemory(raw); err != nil {
				return err
			}
		}
		c.OldTerms, c.NewTerms = toTermFreqs(oldTerms, oldTfs), toTermFreqs(newTerms, newTfs)
		changes = append(changes, c)
		if seq > next.seq {
			next.skip(next.seq, seq, now)
			next.seq = seq
		} else {
			delete(next.holes, seq)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	vecs, err := s.vectorsOf(ctx, changes)
	if err != nil {
		return err // nothing applied: the next catch-up reads it all again
	}
	s.idx.Apply(changes)
	s.pos = next
	s.syncVectors(changes, vecs)
	return nil
}

package pgstore

import (
	"context"
	"fmt"
	"time"
)

// The change log (table changes) feeds every engine's index (catchup.go);
// it would grow forever, so its leader prunes it (storage.TaskPruneChanges).
// A running engine catches up before every read and after every write, so
// it is seconds behind at most; only an engine idle for longer than the
// retention, or cut off from the database, can fall behind the pruned
// horizon, and that engine notices (the horizon is above its position) and
// reloads its whole index from the memories table instead of missing
// changes. The retention is far above holeTimeout, so a seq still awaited
// as a hole is never pruned before it could be read.

// DefaultChangeRetention is how long change-log rows are kept.
const DefaultChangeRetention = time.Hour

// PruneChanges deletes change-log rows older than retention and raises the
// horizon to the highest seq deleted; it returns how many rows went.
func (s *Store) PruneChanges(ctx context.Context, retention time.Duration) (int64, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	var n, top int64
	err = tx.QueryRow(ctx, `WITH gone AS (DELETE FROM changes WHERE at < now() - make_interval(secs => $1) RETURNING seq)
		SELECT count(*), coalesce(max(seq), 0) FROM gone`, retention.Seconds()).Scan(&n, &top)
	if err != nil {
		return 0, fmt.Errorf("prune change log: %w", err)
	}
	if _, err := tx.Exec(ctx, `UPDATE changes_horizon SET seq = greatest(seq, $1)`, top); err != nil {
		return 0, fmt.Errorf("prune change log: %w", err)
	}
	return n, tx.Commit(ctx)
}

// RunPruner prunes the change log now and every interval until ctx ends
// (the engine runs it while it leads TaskPruneChanges).
func (s *Store) RunPruner(ctx context.Context, interval, retention time.Duration) {
	for {
		if n, err := s.PruneChanges(ctx, retention); err != nil && ctx.Err() == nil {
			s.log.Warn("change log prune failed", "err", err)
		} else if n > 0 {
			s.log.Info("change log pruned", "rows", n, "older_than", retention)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
	}
}

// behindHorizon: changes this index still needs were pruned (its position,
// or a seq it still awaits, is at or below the horizon). Under syncMu.
func (s *Store) behindHorizon(horizon int64) bool {
	if horizon > s.pos.seq {
		return true
	}
	for q := range s.pos.holes {
		if q <= horizon {
			return true
		}
	}
	return false
}

// reload replaces the index with a fresh load of the memories table and
// its log position. Under syncMu.
func (s *Store) reload(ctx context.Context, horizon int64) error {
	start := time.Now()
	idx, pos, err := s.loadIndex(ctx)
	if err != nil {
		return fmt.Errorf("reload index: %w", err)
	}
	s.idx.Replace(idx)
	s.pos = pos
	s.log.Warn("index reloaded: this engine fell behind the pruned change log", "position", s.pos.seq, "horizon", horizon, "took", time.Since(start))
	return nil
}

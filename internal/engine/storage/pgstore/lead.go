package pgstore

import (
	"context"
	"fmt"
	"hash/fnv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
)

// Background leaders: each task (storage.Task*) is run by exactly one
// engine of the database, the one holding the task's advisory lock. The
// lock is a session lock on a connection of its own, taken with
// pg_try_advisory_lock and polled (never a blocking lock: the reference's
// deadlocked on those), so it is released the moment its engine dies or
// its connection breaks, and another engine's next poll takes it.

// leaderLockClass is the first key of the two-key advisory locks (a
// two-key lock never collides with goose's one-key migration lock).
const leaderLockClass = 0x61696d65 // "aime"

// Leadership timing; variables so tests can shorten them.
var (
	leaderPoll  = time.Second     // how often a follower tries the lock
	leaderCheck = 2 * time.Second // how often the leader checks its connection
)

var _ storage.Leadership = (*Store)(nil)

// leaderKey is task's second lock key.
func leaderKey(task string) int32 {
	h := fnv.New32a()
	h.Write([]byte("ai-memory:" + task))
	return int32(h.Sum32())
}

// Lead waits until this engine holds task's lock, on a connection of its
// own (outside the pool, so nothing else runs on it or recycles it).
func (s *Store) Lead(ctx context.Context, task string) (<-chan struct{}, func(), error) {
	key := leaderKey(task)
	for {
		conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
		if err == nil {
			var got bool
			for err == nil {
				if err = conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1, $2)`, leaderLockClass, key).Scan(&got); err != nil || got {
					break
				}
				select {
				case <-ctx.Done():
					err = ctx.Err()
				case <-time.After(leaderPoll):
				}
			}
			if err == nil {
				return s.held(task, key, conn)
			}
			conn.Close(context.WithoutCancel(ctx))
		}
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		s.log.Warn("leader lock: database unreachable; trying again", "task", task, "err", err)
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-time.After(leaderPoll):
		}
	}
}

// held watches the lock's connection: lost closes when it fails.
func (s *Store) held(task string, key int32, conn *pgx.Conn) (<-chan struct{}, func(), error) {
	s.log.Info("leading", "task", task)
	lost, stop, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		defer conn.Close(context.Background()) // the session ends: the lock is released
		t := time.NewTicker(leaderCheck)
		defer t.Stop()
		for {
			select {
			case <-stop:
				// Unlocked before the close returns, so a successor need not
				// wait for the server to notice the session ended.
				ctx, cancel := context.WithTimeout(context.Background(), leaderCheck)
				conn.Exec(ctx, `SELECT pg_advisory_unlock($1, $2)`, leaderLockClass, key)
				cancel()
				return
			case <-t.C:
				ctx, cancel := context.WithTimeout(context.Background(), leaderCheck)
				err := conn.Ping(ctx)
				cancel()
				if err != nil {
					s.log.Warn("leadership lost: its connection failed", "task", task, "err", err)
					close(lost)
					return
				}
			}
		}
	}()
	var once sync.Once
	release := func() {
		once.Do(func() { close(stop) })
		<-done
	}
	return lost, release, nil
}

// LeaderLock is task's advisory lock as pg_locks shows it (classid,
// objid; objsubid 2), for tests and operators looking for the leader.
func LeaderLock(task string) (classID, objID uint32) {
	return uint32(leaderLockClass), uint32(leaderKey(task))
}

// LeaderSession is, for tests and doctor, the backend pid of the session
// holding task's lock (0: none).
func (s *Store) LeaderSession(ctx context.Context, task string) (int32, error) {
	var pid int32
	err := s.pool.QueryRow(ctx, `SELECT coalesce(max(pid), 0) FROM pg_locks
		WHERE locktype = 'advisory' AND granted AND classid = $1 AND objid = $2 AND objsubid = 2`,
		uint32(leaderLockClass), uint32(leaderKey(task))).Scan(&pid) // LeaderLock's
	if err != nil {
		return 0, fmt.Errorf("leader session: %w", err)
	}
	return pid, nil
}

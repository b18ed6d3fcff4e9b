package pgstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime/debug"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/index"
	"github.com/ai-memory/ai-memory/internal/engine/keyword"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// maxAttempts bounds the retries of a write that lost a race with another
// engine (serialization failure, or a unique title taken meanwhile).
const maxAttempts = 20

// maxBackoff caps the random wait before a retry.
const maxBackoff = 100 * time.Millisecond

// writeTx is one write request's transaction plus what it changed: the
// index changes and events to apply and publish after the commit.
type writeTx struct {
	ctx     context.Context
	s       *Store
	tx      pgx.Tx
	now     int64
	changes []index.Change
	events  []*aimemoryv1.Event
	// importedSubs: subscriptions this write imported; they start after
	// its own events (logEvents).
	importedSubs []string
	// read: a read-only transaction (Read, Scan), which locks nothing.
	read bool
}

// write runs fn in a SERIALIZABLE transaction, committed (durably, by the
// server's settings) before it returns, then applies its index changes and
// publishes its events. A run that loses to a concurrent transaction of
// another engine is retried from the start, so fn must start its results
// afresh and never change its inputs (as boltstore's group commit asks).
func (s *Store) write(ctx context.Context, fn func(w *writeTx) error) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if s.closed {
		return errors.New("store is closed")
	}
	var err error
	for attempt := 0; attempt < maxAttempts; attempt++ {
		var w *writeTx
		start := time.Now()
		w, err = s.runTx(ctx, fn)
		if err == nil {
			s.committed(1, time.Since(start))
			// The log has this write's changes, after any of other engines'
			// committed before it: applying them in log order keeps the
			// index a replay of the database.
			if err := s.catchUp(context.WithoutCancel(ctx)); err != nil {
				s.log.Warn("index catch-up after a write", "err", err)
			}
			if s.events != nil {
				for _, e := range w.events {
					s.events.Publish(e)
				}
			}
			return nil
		}
		if !retryable(err) || ctx.Err() != nil {
			return err
		}
		// Back off a random while, growing, so two engines racing on one
		// title do not keep colliding in step.
		select {
		case <-time.After(time.Duration(rand.Int64N(int64(min(maxBackoff, time.Millisecond<<attempt))))):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return fmt.Errorf("write lost %d races with other engines: %w", maxAttempts, err)
}

// beforeCommit, when a test sets it, runs between a write's last
// statement and its commit.
var beforeCommit func(w *writeTx) error

// runTx is one attempt of a write. A panic in fn fails that write alone.
func (s *Store) runTx(ctx context.Context, fn func(w *writeTx) error) (w *writeTx, err error) {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.Serializable})
	if err != nil {
		return nil, err
	}
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("write panicked", "panic", p, "stack", string(debug.Stack()))
			err = errors.New("internal error in a write")
		}
		if err != nil {
			tx.Rollback(context.WithoutCancel(ctx))
		}
	}()
	w = &writeTx{ctx: ctx, s: s, tx: tx, now: s.nowNanos()}
	if err := fn(w); err != nil {
		return nil, err
	}
	if err := w.logEvents(); err != nil {
		return nil, err
	}
	if beforeCommit != nil {
		if err := beforeCommit(w); err != nil {
			return nil, err
		}
	}
	// Once COMMIT is sent the write is handed off: a cancel then would not
	// stop the server from committing, only hide that it did.
	if err := tx.Commit(context.WithoutCancel(ctx)); err != nil {
		return nil, err
	}
	return w, nil
}

// retryable: the transaction lost a race and a fresh run may succeed.
// A unique violation is one too: the title a run found free was taken
// meanwhile, and the rerun sees it taken and applies the merge rule.
func retryable(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	switch pe.Code {
	case "40001", "40P01", "23505": // serialization_failure, deadlock_detected, unique_violation
		return true
	}
	return false
}

// get reads a memory by exact id with its stored term list; nil when absent.
func (w *writeTx) get(id string) (*aimemoryv1.Memory, error) {
	m, _, err := w.getWithTerms(id)
	return m, err
}

func (w *writeTx) getWithTerms(id string) (*aimemoryv1.Memory, []keyword.TermFreq, error) {
	var (
		raw   []byte
		terms []string
		tfs   []int32
	)
	err := w.tx.QueryRow(w.ctx, `SELECT record, terms, tfs FROM memories WHERE id = $1`, id).Scan(&raw, &terms, &tfs)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	m, err := decodeMemory(raw)
	return m, toTermFreqs(terms, tfs), err
}

// titleOwner is the id holding (namespace, title); "" when free.
func (w *writeTx) titleOwner(namespace, title string) (string, error) {
	var id string
	err := w.tx.QueryRow(w.ctx, `SELECT id FROM memories WHERE namespace = $1 AND title = $2`, namespace, title).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	return id, err
}

// authorize enforces the guarded namespaces and asks the write policy
// (storage.Authorize), inside the transaction.
func (w *writeTx) authorize(write storage.Write) error {
	write.View = govView{w: w}
	return storage.Authorize(w.ctx, w.s.policy, write)
}

// put writes m (replacing old, nil for a new memory) with its term list,
// and records the index change and the event for after the commit.
func (w *writeTx) put(old, m *aimemoryv1.Memory, event string) error {
	raw, err := encodeMemory(m)
	if err != nil {
		return err
	}
	c := index.Change{ID: m.GetId(), Memory: m}
	reindex := old == nil || old.GetTitle() != m.GetTitle() || old.GetContent() != m.GetContent() || !slices.Equal(old.GetTags(), m.GetTags())
	if old == nil {
		c.Reindex = true
		c.NewTerms, _ = w.s.an.Document(m.GetTitle(), m.GetContent(), m.GetTags())
		terms, tfs := fromTermFreqs(c.NewTerms)
		_, err = w.tx.Exec(w.ctx, `INSERT INTO memories (id, namespace, title, expires_at, terms, tfs, record) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			m.GetId(), m.GetNamespace(), m.GetTitle(), m.GetExpiresAt(), terms, tfs, raw)
	} else if reindex {
		if _, c.OldTerms, err = w.getWithTerms(m.GetId()); err != nil {
			return err
		}
		c.Reindex = true
		c.NewTerms, _ = w.s.an.Document(m.GetTitle(), m.GetContent(), m.GetTags())
		terms, tfs := fromTermFreqs(c.NewTerms)
		_, err = w.tx.Exec(w.ctx, `UPDATE memories SET namespace = $2, title = $3, expires_at = $4, terms = $5, tfs = $6, record = $7 WHERE id = $1`,
			m.GetId(), m.GetNamespace(), m.GetTitle(), m.GetExpiresAt(), terms, tfs, raw)
	} else {
		_, err = w.tx.Exec(w.ctx, `UPDATE memories SET namespace = $2, title = $3, expires_at = $4, record = $5 WHERE id = $1`,
			m.GetId(), m.GetNamespace(), m.GetTitle(), m.GetExpiresAt(), raw)
	}
	if err != nil {
		return err
	}
	if old != nil && (old.GetTitle() != m.GetTitle() || old.GetContent() != m.GetContent()) {
		if err := w.dropVector(m.GetId()); err != nil { // of the old text
			return err
		}
	}
	if err := w.logChange(c, raw); err != nil {
		return err
	}
	w.changes = append(w.changes, c)
	w.emit(event, m)
	return nil
}

// remove deletes m and records the index change and the event. The
// foreign keys delete its live links and alias rows in the same statement;
// its archived links stay (removeForGood takes them too).
func (w *writeTx) remove(m *aimemoryv1.Memory, event string) error {
	var (
		terms []string
		tfs   []int32
	)
	err := w.tx.QueryRow(w.ctx, `DELETE FROM memories WHERE id = $1 RETURNING terms, tfs`, m.GetId()).Scan(&terms, &tfs)
	if err != nil {
		return fmt.Errorf("remove %s: %w", m.GetId(), err)
	}
	c := index.Change{ID: m.GetId(), OldTerms: toTermFreqs(terms, tfs)}
	if err := w.logChange(c, nil); err != nil {
		return err
	}
	w.changes = append(w.changes, c)
	w.emit(event, m)
	return nil
}

// archive keeps m in the archive for reason: a superseded version beside
// the live memory, else in place of it (removing it; typ is the event).
func (w *writeTx) archive(m *aimemoryv1.Memory, reason, typ string) error {
	raw, err := encodeMemory(m)
	if err != nil {
		return err
	}
	if reason == storage.ArchiveReasonSuperseded {
		// Two versions in one clock tick take the next free nanosecond, as boltstore's.
		_, err := w.tx.Exec(w.ctx, `INSERT INTO versions (id, archived_at, original_tier, original_expires_at, record)
			SELECT $1, coalesce((SELECT max(archived_at) + 1 FROM versions WHERE id = $1 AND archived_at >= $2), $2), $3, $4, $5`,
			m.GetId(), w.now, m.GetTier(), m.GetExpiresAt(), raw)
		return err
	}
	_, err = w.tx.Exec(w.ctx, `INSERT INTO archived (id, archived_at, reason, original_tier, original_expires_at, record)
		VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (id) DO UPDATE SET archived_at = EXCLUDED.archived_at, reason = EXCLUDED.reason,
			original_tier = EXCLUDED.original_tier, original_expires_at = EXCLUDED.original_expires_at, record = EXCLUDED.record`,
		m.GetId(), w.now, reason, m.GetTier(), m.GetExpiresAt(), raw)
	if err != nil {
		return err
	}
	// Its links move to the archive before its row goes (which would
	// cascade them away).
	if err := w.archiveLinks(m.GetId()); err != nil {
		return err
	}
	return w.remove(m, typ)
}

// logChange appends c to the change log. It runs after the write to the
// memory's row, holding that row's lock, so two changes to one memory get
// their seqs in commit order (catchup.go relies on it).
func (w *writeTx) logChange(c index.Change, record []byte) error {
	oldTerms, oldTfs := fromTermFreqs(c.OldTerms)
	newTerms, newTfs := fromTermFreqs(c.NewTerms)
	_, err := w.tx.Exec(w.ctx, `INSERT INTO changes (id, record, reindex, old_terms, old_tfs, new_terms, new_tfs) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		c.ID, record, c.Reindex, oldTerms, oldTfs, newTerms, newTfs)
	return err
}

func (w *writeTx) emit(typ string, m *aimemoryv1.Memory) {
	if typ == "" { // bookkeeping (FlushSeen, an inbox read's access count): not an event
		return
	}
	w.events = append(w.events, ops.Event(w.ctx, typ, m, w.now))
}

// Records are stored as the wire Memory message, as boltstore stores them.
func encodeMemory(m *aimemoryv1.Memory) ([]byte, error) {
	return proto.MarshalOptions{Deterministic: true}.Marshal(m)
}

func decodeMemory(raw []byte) (*aimemoryv1.Memory, error) {
	m := new(aimemoryv1.Memory)
	if err := proto.Unmarshal(raw, m); err != nil {
		return nil, fmt.Errorf("decode memory: %w", err)
	}
	return m, nil
}

func fromTermFreqs(ts []keyword.TermFreq) ([]string, []int32) {
	terms, tfs := make([]string, len(ts)), make([]int32, len(ts))
	for i, t := range ts {
		terms[i], tfs[i] = t.Term, int32(t.Freq)
	}
	return terms, tfs
}

func toTermFreqs(terms []string, tfs []int32) []keyword.TermFreq {
	out := make([]keyword.TermFreq, len(terms))
	for i := range terms {
		out[i] = keyword.TermFreq{Term: terms[i], Freq: uint32(tfs[i])}
	}
	return out
}

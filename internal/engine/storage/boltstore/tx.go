package boltstore

import (
	"github.com/ai-memory/ai-memory/internal/engine/storage"

	"bytes"
	"context"
	"errors"
	"runtime/debug"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/ai-memory/ai-memory/internal/engine/index"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// writeTx is one write request's view of the shared bbolt transaction plus
// what it changed: the index changes and events to apply and publish once
// the transaction has committed.
type writeTx struct {
	ctx     context.Context
	s       *Store
	tx      *bolt.Tx
	now     int64
	changes []index.Change
	events  []*aimemoryv1.Event
	logged  int // new index log entries (snapshot.go)
	// vecChanges are the vectors written or dropped (vectors.go).
	vecChanges []vecChange
	// importedSubs: subscriptions this write imported; they start after
	// its own events (logEvents).
	importedSubs []string
	// before are the writes ahead of this one in its batch: in the
	// transaction, not yet in the index (batchChanged).
	before []*writeReq
}

// batchChanged is every memory written or removed in the transaction so
// far, by the writes ahead in the batch and by this one: what the index,
// at the last commit, does not show yet.
func (w *writeTx) batchChanged() []string {
	var ids []string
	add := func(changes []index.Change) {
		for _, c := range changes {
			ids = append(ids, c.ID)
		}
	}
	for _, r := range w.before {
		add(r.w.changes)
	}
	add(w.changes)
	return ids
}

// maxBatch bounds how many writes one group commit takes.
const maxBatch = 128

// writeReq is one request's write waiting for a group commit.
type writeReq struct {
	ctx  context.Context
	fn   func(w *writeTx) error
	w    *writeTx // the run that committed
	err  error
	lead bool          // set before done is signalled: this caller commits the next batch
	done chan struct{} // signalled when written (or failed); first, for a leader, to lead
}

// write runs fn in a bbolt read-write transaction, fsynced on commit, then
// updates the in-memory index and publishes events, and only then returns.
//
// Group commit: writes that arrive while a commit is under way queue, and
// the next commit takes them all (up to maxBatch) in one transaction and
// one fsync. Whoever finds no commit under way leads: it commits a batch,
// hands the lead to the first writer still queued and returns. Each
// request is its own fn, so its writes stay atomic; a failing fn fails
// only its own request (see commit). fn may run more than once, so it must
// start its results afresh and never change its inputs.
func (s *Store) write(ctx context.Context, fn func(w *writeTx) error) error {
	return s.enqueue(&writeReq{ctx: ctx, fn: fn, done: make(chan struct{}, 1)})
}

func (s *Store) enqueue(r *writeReq) error {
	if err := r.ctx.Err(); err != nil {
		return err
	}
	s.queueMu.Lock()
	s.queue = append(s.queue, r)
	lead := !s.leading
	s.leading = true
	s.queueMu.Unlock()
	if !lead {
		<-r.done
		if !r.lead {
			return r.err
		}
	}
	s.commitNext()
	return r.err
}

// commitNext commits the next batch of queued writes, passes the lead on
// (or gives it up when nothing waits), then wakes the batch's writers.
// The leader's own write is the queue's first, so it is in the batch.
func (s *Store) commitNext() {
	s.queueMu.Lock()
	n := min(len(s.queue), maxBatch)
	batch := slices.Clone(s.queue[:n])
	s.queue = slices.Delete(s.queue, 0, n)
	s.queueMu.Unlock()

	finished := false
	defer func() {
		// A panic outside the writes' own functions (a bug) must neither
		// stop the writers queued behind nor acknowledge a write it may
		// have cut short; it goes on to the leader's caller.
		if !finished {
			for _, r := range batch {
				if r.err == nil {
					r.err = errors.New("internal error in a group commit")
				}
			}
		}
		s.queueMu.Lock()
		if len(s.queue) == 0 {
			s.leading = false
		} else {
			s.queue[0].lead = true
			s.queue[0].done <- struct{}{}
		}
		s.queueMu.Unlock()
		for _, r := range batch {
			r.done <- struct{}{}
		}
	}()
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.commit(slices.Clone(batch))
	finished = true
}

// commit runs batch's writes in order in one bbolt transaction and commits
// it (one fsync), then applies their index changes and publishes their
// events in the same order, so the index never runs ahead of the file.
// bbolt cannot undo part of a transaction: when a write fails, or its
// caller gave up before it ran, the transaction is rolled back, that write
// gets its error and the others run again without it. When the commit
// itself fails (a full disk), each write is retried alone, so only those
// that cannot be written fail. The caller holds writeMu.
func (s *Store) commit(batch []*writeReq) {
	for len(batch) > 0 {
		failed, failure := -1, error(nil)
		start := time.Now()
		err := s.db.Update(func(tx *bolt.Tx) error {
			for i, r := range batch {
				if err := s.run(r, tx, batch[:i]); err != nil {
					failed, failure = i, err
					return err
				}
			}
			// The events are as durable as the writes: same transaction.
			return logEvents(tx, batch)
		})
		switch {
		case err == nil:
			var changes []index.Change
			logged, events := 0, uint64(0)
			for _, r := range batch {
				changes = append(changes, r.w.changes...)
				logged += r.w.logged
				events += uint64(len(r.w.events))
			}
			s.idx.Apply(changes)
			for _, r := range batch {
				for _, c := range r.w.vecChanges {
					s.vecs.Put(c.id, c.e)
				}
			}
			s.noteLogged(logged, events)
			s.commits++
			s.committed(len(batch), time.Since(start))
			if len(batch) > max(s.largestBatch, 1) {
				s.largestBatch = len(batch)
				s.log.Info("group commit: largest so far", "writes", len(batch))
			}
			if s.events != nil {
				for _, r := range batch {
					for _, e := range r.w.events {
						s.events.Publish(e)
					}
				}
			}
			return
		case failed >= 0:
			batch[failed].err = failure
			batch = slices.Delete(batch, failed, failed+1)
		case len(batch) == 1:
			batch[0].err = err
			return
		default:
			for _, r := range batch {
				s.commit([]*writeReq{r})
			}
			return
		}
	}
}

// run runs one request's fn in the shared transaction. A panic fails that
// request alone, as the server's recovery would have, instead of stopping
// every writer queued behind it.
func (s *Store) run(r *writeReq, tx *bolt.Tx, before []*writeReq) (err error) {
	if err := r.ctx.Err(); err != nil {
		return err
	}
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("write panicked", "panic", p, "stack", string(debug.Stack()))
			err = errors.New("internal error in a write")
		}
	}()
	r.w = &writeTx{ctx: r.ctx, s: s, tx: tx, now: s.nowNanos(), before: before}
	return r.fn(r.w)
}

// get reads a memory by exact id; nil when absent.
func (w *writeTx) get(id string) (*aimemoryv1.Memory, error) {
	raw := w.tx.Bucket(bucketMemories).Get([]byte(id))
	if raw == nil {
		return nil, nil
	}
	return decodeLive(raw)
}

// titleOwner is the id holding (namespace, title); "" when free.
func (w *writeTx) titleOwner(namespace, title string) string {
	return string(w.tx.Bucket(bucketTitles).Get(titleKey(namespace, title)))
}

// authorize enforces the guarded namespaces and asks the write policy
// (storage.Authorize), inside the transaction.
func (w *writeTx) authorize(write storage.Write) error {
	write.View = govView{tx: w.tx, cfg: w.s.gov}
	return storage.Authorize(w.ctx, w.s.policy, write)
}

// put writes m (replacing old, nil for a new memory) with every index entry
// that depends on it, and records the event type for after the commit.
func (w *writeTx) put(old, m *aimemoryv1.Memory, event string) error {
	id := []byte(m.GetId())
	mems := w.tx.Bucket(bucketMemories)
	var oldRow []byte
	if old != nil {
		oldRow = mems.Get(id)
	}
	if err := w.logIndexChange(id, oldRow, event != "" && loggedEvent(event)); err != nil {
		return err
	}
	c := index.Change{ID: m.GetId(), Memory: m}
	terms, err := liveTerms(oldRow) // unchanged unless the text is
	if err != nil {
		return err
	}
	if oldRow == nil || old.GetTitle() != m.GetTitle() || old.GetContent() != m.GetContent() || !slices.Equal(old.GetTags(), m.GetTags()) {
		c.Reindex = true
		if c.OldTerms, err = decodeTerms(terms); err != nil {
			return err
		}
		c.NewTerms, _ = w.s.an.Document(m.GetTitle(), m.GetContent(), m.GetTags())
		terms = encodeTerms(c.NewTerms)
	}
	raw, err := encodeLive(m, terms)
	if err != nil {
		return err
	}
	if err := mems.Put(id, raw); err != nil {
		return err
	}

	titles := w.tx.Bucket(bucketTitles)
	if old == nil || old.GetNamespace() != m.GetNamespace() || old.GetTitle() != m.GetTitle() {
		if old != nil {
			if err := titles.Delete(titleKey(old.GetNamespace(), old.GetTitle())); err != nil {
				return err
			}
		}
		if err := titles.Put(titleKey(m.GetNamespace(), m.GetTitle()), id); err != nil {
			return err
		}
	}

	expiry := w.tx.Bucket(bucketExpiry)
	if old == nil || old.GetExpiresAt() != m.GetExpiresAt() {
		if old != nil && old.GetExpiresAt() != 0 {
			if err := expiry.Delete(expiryKey(old.GetExpiresAt(), old.GetId())); err != nil {
				return err
			}
		}
		if m.GetExpiresAt() != 0 {
			if err := expiry.Put(expiryKey(m.GetExpiresAt(), m.GetId()), nil); err != nil {
				return err
			}
		}
	}

	if old != nil && (old.GetTitle() != m.GetTitle() || old.GetContent() != m.GetContent()) {
		if err := w.dropVector(m.GetId()); err != nil {
			return err
		}
	}
	w.changes = append(w.changes, c)
	w.emit(event, m)
	return nil
}

// remove deletes m, its index entries, every link touching it and, for an
// entity, its aliases.
func (w *writeTx) remove(m *aimemoryv1.Memory, event string) error {
	id := []byte(m.GetId())
	mems := w.tx.Bucket(bucketMemories)
	row := mems.Get(id)
	if err := w.logIndexChange(id, row, false); err != nil {
		return err
	}
	terms, err := liveTerms(row)
	if err != nil {
		return err
	}
	oldTerms, err := decodeTerms(terms)
	if err != nil {
		return err
	}
	if err := mems.Delete(id); err != nil {
		return err
	}
	titles := w.tx.Bucket(bucketTitles)
	tk := titleKey(m.GetNamespace(), m.GetTitle())
	if bytes.Equal(titles.Get(tk), id) {
		if err := titles.Delete(tk); err != nil {
			return err
		}
	}
	if m.GetExpiresAt() != 0 {
		if err := w.tx.Bucket(bucketExpiry).Delete(expiryKey(m.GetExpiresAt(), m.GetId())); err != nil {
			return err
		}
	}
	if err := deleteLinks(w.tx, m.GetId()); err != nil {
		return err
	}
	if err := w.removeEntity(m); err != nil {
		return err
	}
	if err := w.dropVector(m.GetId()); err != nil {
		return err
	}
	w.changes = append(w.changes, index.Change{ID: m.GetId(), OldTerms: oldTerms})
	w.emit(event, m)
	return nil
}

// emit records an event for after the commit; "" records none (bookkeeping
// such as marking a message read).
func (w *writeTx) emit(typ string, m *aimemoryv1.Memory) {
	if typ == "" { // engine bookkeeping (FlushSeen): not an event
		return
	}
	w.events = append(w.events, ops.Event(w.ctx, typ, m, w.now))
}

package boltstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/ai-memory/ai-memory/internal/engine/index"
)

// The in-memory index is restored at open from a snapshot plus a log of
// what changed since, so an engine start decodes one blob and replays a
// few records instead of re-reading every record and term list.
//
//   - index_snapshot holds index.Encode, cut into chunks.
//   - index_log holds, for every memory changed since that snapshot, what
//     the snapshot knows of it: written by the first write that touches
//     the memory after the snapshot, in that write's transaction, so the
//     log is exactly as durable as the records.
//   - A memory new since the snapshot has no index_log entry when its
//     write logs an event (events_log, same transaction): the snapshot
//     records the event log's sequence then (meta, keySnapshotSeq), and
//     the events after it name every such memory. That saves a random
//     leaf (two pages) per store. An index_log entry of a memory the
//     snapshot does not hold is then one created since and changed again.
//
// Snapshot plus log replay is then the index of the committed records, kill
// -9 or not. A snapshot is written, and the log emptied, in one
// transaction holding the writer lock: at Close, after a rebuild, and in
// the background once the log is long. Without a usable snapshot (none,
// damaged, or a schema migration ran) the index is rebuilt from the term
// lists as before, and the log is ignored.
var (
	bucketIndexSnapshot = []byte("index_snapshot") // chunk number (4, big-endian) → a part of the snapshot
	bucketIndexLog      = []byte("index_log")      // id → 0 (not in the snapshot) or 1 + its term list there
)

const snapshotChunk = 1 << 20

// keySnapshotSeq (in meta) is the event log's sequence when the snapshot
// was written: events after it name the memories created since.
var keySnapshotSeq = []byte("index_snapshot_event_seq")

// A snapshot is due once the log holds this many memories, or a 32nd of
// the index if more: a start after kill -9 replays up to that many records
// (about 0.1 s at 100k), and a snapshot (about 60 ms at 100k, holding the
// writer lock) comes at most every so many writes. (A variable for tests.)
var minSnapshotLog = 2048

func snapshotLogMax(indexed int) int { return max(minSnapshotLog, indexed/32) }

// snapshotEventsMax: a snapshot is due, too, when this many events were
// logged since the last, so the event log never trims past its sequence.
func snapshotEventsMax() uint64 { return max(1, eventRetention/2) }

// logIndexChange records what the snapshot holds of memory id (row: its
// live row before this write, nil if it had none), unless an earlier
// write since the snapshot did. evented: the write logs an event naming
// the memory, which is all a new memory needs. Call it before the write
// changes the row.
func (w *writeTx) logIndexChange(id, row []byte, evented bool) error {
	log := w.tx.Bucket(bucketIndexLog)
	if log.Get(id) != nil {
		return nil
	}
	w.logged++
	v := []byte{0}
	if row == nil && evented {
		return nil
	}
	if row != nil {
		terms, err := liveTerms(row)
		if err != nil {
			return err
		}
		v = append([]byte{1}, terms...)
	}
	return log.Put(id, v)
}

// loadIndex restores the index from the snapshot and log, or rebuilds it.
// fresh reports a rebuild (so a snapshot is due); logged is the log's
// length after a restore.
func loadIndex(ctx context.Context, s *Store) (x *index.Index, logged int, fresh bool, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		snap, err := readSnapshot(tx)
		if err == nil && snap != nil {
			logged, err = replayLog(ctx, tx, snap)
			if err == nil {
				x = snap
				return nil
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			s.log.Warn("index snapshot unusable: rebuilding the index from the term lists", "err", err)
		}
		x, fresh = index.New(), true
		return rebuildIndex(ctx, tx, x)
	})
	return x, logged, fresh, err
}

// readSnapshot decodes the stored snapshot; nil when there is none.
func readSnapshot(tx *bolt.Tx) (*index.Index, error) {
	var buf []byte
	c := tx.Bucket(bucketIndexSnapshot).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if len(k) != 4 || binary.BigEndian.Uint32(k) != uint32(len(buf)/snapshotChunk) {
			return nil, errors.New("index snapshot: chunks out of order")
		}
		if buf == nil {
			buf = make([]byte, 0, tx.Bucket(bucketIndexSnapshot).Stats().KeyN*snapshotChunk)
		}
		buf = append(buf, v...)
	}
	if buf == nil {
		return nil, nil
	}
	return index.Decode(buf)
}

// replayLog brings a snapshot's index up to the records: each memory in
// the log, or named by an event since the snapshot and not in it, leaves
// the index as the snapshot held it and comes back as it is stored now,
// if it still is.
func replayLog(ctx context.Context, tx *bolt.Tx, x *index.Index) (int, error) {
	mems := tx.Bucket(bucketMemories)
	var changes []index.Change
	current := func(k []byte) error {
		raw := mems.Get(k)
		if raw == nil {
			return nil
		}
		list, rec, err := splitLive(raw)
		if err != nil {
			return err
		}
		m, err := decodeMemory(rec)
		if err != nil {
			return err
		}
		now, err := decodeTerms(list)
		if err != nil {
			return err
		}
		changes = append(changes, index.Change{ID: string(k), Memory: m, Reindex: true, NewTerms: now})
		return nil
	}
	logged := map[string]bool{}
	err := tx.Bucket(bucketIndexLog).ForEach(func(k, v []byte) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		id := string(k)
		logged[id] = true
		// An entry of a memory the snapshot lacks is one created since.
		if len(v) == 0 || v[0] > 1 || (v[0] == 0 && x.Has(id)) {
			return fmt.Errorf("index log entry of %s disagrees with the snapshot", id)
		}
		if v[0] == 1 && x.Has(id) {
			old, err := decodeTerms(v[1:])
			if err != nil {
				return err
			}
			changes = append(changes, index.Change{ID: id, OldTerms: old})
		}
		return current(k)
	})
	if err != nil {
		return 0, err
	}
	// The memories created since the snapshot without a log entry.
	err = eventsSince(tx, func(id []byte) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if logged[string(id)] || x.Has(string(id)) {
			return nil
		}
		logged[string(id)] = true
		return current(id)
	})
	if err != nil {
		return 0, err
	}
	x.Replay(changes)
	return len(logged), nil
}

// eventsSince calls fn with the memory id of each event logged after the
// snapshot (keySnapshotSeq), reading only that field. An error when the
// snapshot has no sequence or the log no longer holds every event since.
func eventsSince(tx *bolt.Tx, fn func(id []byte) error) error {
	raw := tx.Bucket(bucketMeta).Get(keySnapshotSeq)
	if len(raw) != 8 {
		return errors.New("index snapshot without its event sequence")
	}
	since := binary.BigEndian.Uint64(raw)
	b := tx.Bucket(bucketEventsLog)
	if b.Sequence() < since {
		return errors.New("the event log is behind the index snapshot")
	}
	c := b.Cursor()
	k, v := c.Seek(seqKey(since + 1))
	if b.Sequence() > since && (k == nil || binary.BigEndian.Uint64(k) != since+1) {
		return errors.New("the event log was trimmed past the index snapshot")
	}
	for ; k != nil; k, v = c.Next() {
		id, err := eventMemoryID(v)
		if err != nil {
			return fmt.Errorf("event %d: %w", binary.BigEndian.Uint64(k), err)
		}
		if len(id) > 0 {
			if err := fn(id); err != nil {
				return err
			}
		}
	}
	return nil
}

// rebuildIndex builds the index from the records and the term lists in
// their rows. Walking the bucket in key (id) order assigns slots in id
// order, so every postings list comes out sorted.
func rebuildIndex(ctx context.Context, tx *bolt.Tx, x *index.Index) error {
	err := tx.Bucket(bucketMemories).ForEach(func(k, v []byte) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		list, rec, err := splitLive(v)
		if err != nil {
			return fmt.Errorf("memory %s: %w", k, err)
		}
		m, err := decodeMemory(rec)
		if err != nil {
			return err
		}
		return x.Load(m, func(yield func(term []byte, tf uint32)) error {
			return walkTerms(list, yield)
		})
	})
	if err != nil {
		return err
	}
	x.Loaded()
	return nil
}

// writeSnapshot replaces the snapshot by the index as it is and empties the
// log, in one transaction. The caller holds writeMu, so the index is the
// committed records' exactly.
func (s *Store) writeSnapshot() error {
	start := time.Now()
	snap := s.idx.Encode()
	err := s.db.Update(func(tx *bolt.Tx) error {
		seq := tx.Bucket(bucketEventsLog).Sequence()
		if err := tx.Bucket(bucketMeta).Put(keySnapshotSeq, binary.BigEndian.AppendUint64(nil, seq)); err != nil {
			return err
		}
		for _, name := range [][]byte{bucketIndexSnapshot, bucketIndexLog} {
			if err := tx.DeleteBucket(name); err != nil {
				return err
			}
			if _, err := tx.CreateBucket(name); err != nil {
				return err
			}
		}
		b := tx.Bucket(bucketIndexSnapshot)
		b.FillPercent = 1 // written once, in key order
		for i := 0; len(snap) > 0; i++ {
			n := min(len(snap), snapshotChunk)
			if err := b.Put(binary.BigEndian.AppendUint32(nil, uint32(i)), bytes.Clone(snap[:n])); err != nil {
				return err
			}
			snap = snap[n:]
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("write index snapshot: %w", err)
	}
	s.logLen, s.eventsSince, s.snapshotDue = 0, 0, false
	s.log.Info("index snapshot written", "memories", s.idx.Count(), "took", time.Since(start))
	return nil
}

// noteLogged counts a committed write's new log entries and starts a
// background snapshot when the log has grown long. The caller holds writeMu.
func (s *Store) noteLogged(n int, events uint64) {
	s.logLen += n
	s.eventsSince += events
	if s.snapshotting || s.closed || (s.logLen < snapshotLogMax(s.idx.Count()) && s.eventsSince < snapshotEventsMax()) {
		return
	}
	s.startSnapshot()
}

// startSnapshot writes a snapshot in the background. The caller holds writeMu.
func (s *Store) startSnapshot() {
	s.snapshotting = true
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		s.writeMu.Lock()
		defer s.writeMu.Unlock()
		s.snapshotting = false
		if s.closed {
			return
		}
		if err := s.writeSnapshot(); err != nil {
			s.log.Warn("index snapshot", "err", err)
		}
	}()
}

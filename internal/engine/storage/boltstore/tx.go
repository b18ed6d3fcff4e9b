package boltstore

import (
	"github.com/ai-memory/ai-memory/internal/engine/storage"

	"bytes"
	"context"
	"slices"

	bolt "go.etcd.io/bbolt"

	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/engine/index"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// writeTx is one write request's bbolt transaction plus what it changed:
// the index changes and events to apply and publish once it has committed.
type writeTx struct {
	ctx     context.Context
	s       *Store
	tx      *bolt.Tx
	now     int64
	changes []index.Change
	events  []*aimemoryv1.Event
	logged  int // new index log entries (snapshot.go)
}

// write runs fn in one bbolt read-write transaction (fsynced on commit),
// then updates the in-memory index and publishes events. Holding writeMu
// across both keeps the index in commit order.
func (s *Store) write(ctx context.Context, fn func(w *writeTx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	var w *writeTx
	err := s.db.Update(func(tx *bolt.Tx) error {
		w = &writeTx{ctx: ctx, s: s, tx: tx, now: s.nowNanos()}
		return fn(w)
	})
	if err != nil {
		return err
	}
	s.idx.Apply(w.changes)
	s.noteLogged(w.logged)
	if s.events != nil {
		for _, e := range w.events {
			s.events.Publish(e)
		}
	}
	return nil
}

// get reads a memory by exact id; nil when absent.
func (w *writeTx) get(id string) (*aimemoryv1.Memory, error) {
	raw := w.tx.Bucket(bucketMemories).Get([]byte(id))
	if raw == nil {
		return nil, nil
	}
	return decodeMemory(raw)
}

// titleOwner is the id holding (namespace, title); "" when free.
func (w *writeTx) titleOwner(namespace, title string) string {
	return string(w.tx.Bucket(bucketTitles).Get(titleKey(namespace, title)))
}

// authorize enforces the guarded namespaces and asks the write policy
// (storage.Authorize), inside the transaction.
func (w *writeTx) authorize(write storage.Write) error {
	return storage.Authorize(w.ctx, w.s.policy, write)
}

// principal is who the write is for (stamped as created_by/updated_by).
func (w *writeTx) principal() string { return storage.Principal(w.ctx) }

// put writes m (replacing old, nil for a new memory) with every index entry
// that depends on it, and records the event type for after the commit.
func (w *writeTx) put(old, m *aimemoryv1.Memory, event string) error {
	raw, err := encodeMemory(m)
	if err != nil {
		return err
	}
	id := []byte(m.GetId())
	if err := w.logIndexChange(id, old != nil); err != nil {
		return err
	}
	if err := w.tx.Bucket(bucketMemories).Put(id, raw); err != nil {
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

	c := index.Change{ID: m.GetId(), Memory: m}
	if old == nil || old.GetTitle() != m.GetTitle() || old.GetContent() != m.GetContent() || !slices.Equal(old.GetTags(), m.GetTags()) {
		terms := w.tx.Bucket(bucketTerms)
		c.Reindex = true
		if old != nil {
			if c.OldTerms, err = decodeTerms(terms.Get(id)); err != nil {
				return err
			}
		}
		c.NewTerms, _ = w.s.an.Document(m.GetTitle(), m.GetContent(), m.GetTags())
		if err := terms.Put(id, encodeTerms(c.NewTerms)); err != nil {
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
	if err := w.logIndexChange(id, true); err != nil {
		return err
	}
	if err := w.tx.Bucket(bucketMemories).Delete(id); err != nil {
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
	terms := w.tx.Bucket(bucketTerms)
	oldTerms, err := decodeTerms(terms.Get(id))
	if err != nil {
		return err
	}
	if err := terms.Delete(id); err != nil {
		return err
	}
	if err := deleteLinks(w.tx, m.GetId()); err != nil {
		return err
	}
	if err := w.removeEntity(m); err != nil {
		return err
	}
	w.changes = append(w.changes, index.Change{ID: m.GetId(), OldTerms: oldTerms})
	w.emit(event, m)
	return nil
}

func (w *writeTx) emit(typ string, m *aimemoryv1.Memory) {
	agent, _ := index.MetadataAgentScope(m.GetMetadataJson())
	c, _ := caller.FromContext(w.ctx)
	w.events = append(w.events, &aimemoryv1.Event{
		Type:      typ,
		MemoryId:  m.GetId(),
		Namespace: m.GetNamespace(),
		AgentId:   agent,
		At:        w.now,
		Principal: c.Principal,
	})
}

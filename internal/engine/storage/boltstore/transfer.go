package boltstore

import (
	"bytes"
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	"github.com/ai-memory/ai-memory/internal/engine/storage/seam"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// The records Export sends (package records), kind by kind: the rows as
// stored, keyed as their bucket keys them. Index rows (titles, terms,
// expiry, the link mirrors, aliases by name, pending_time) are derived
// again on import.
var exportWalks = map[string]struct {
	bucket []byte
	read   func(*bolt.Tx, *bolt.Cursor, []byte, []byte) (*aimemoryv1.ExportRecord, []byte, error)
}{
	ops.KindMemory:       {bucketMemories, exportMemory},
	ops.KindArchived:     {bucketArchive, exportArchived},
	ops.KindVersion:      {bucketVersions, exportVersion},
	ops.KindLink:         {bucketLinksOut, exportLink},
	ops.KindArchivedLink: {bucketArchivedLinksOut, exportArchivedLink},
	ops.KindEntity:       {bucketEntityAliases, exportEntity},
	ops.KindStandard:     {bucketStandards, exportStandard},
	ops.KindPending:      {bucketPending, exportPending},
	ops.KindSubscription: {bucketSubs, exportSub},
}

// EachRecord walks kind's bucket from the key after after. Each read
// decodes the record at the cursor and returns the last key it consumed,
// the cursor left on it (an entity reads several rows).
func (t opsTx) EachRecord(kind, after string, limit int, fn func(string, *aimemoryv1.ExportRecord) error) error {
	walk, ok := exportWalks[kind]
	if !ok {
		return fmt.Errorf("export: no record kind %q", kind)
	}
	b := t.w.tx.Bucket(walk.bucket)
	if b == nil {
		return nil
	}
	c := b.Cursor()
	k, v := c.First()
	if after != "" {
		from := []byte(after)
		if k, v = c.Seek(from); bytes.Equal(k, from) {
			k, v = c.Next()
		}
	}
	for n := 0; k != nil && (limit == 0 || n < limit); k, v = c.Next() {
		r, end, err := walk.read(t.w.tx, c, k, v)
		if err != nil {
			return err
		}
		if err := fn(string(end), r); err != nil {
			return err
		}
		n++
	}
	return nil
}

func exportMemory(_ *bolt.Tx, _ *bolt.Cursor, k, v []byte) (*aimemoryv1.ExportRecord, []byte, error) {
	m, err := decodeLive(v)
	return &aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_Memory{Memory: m}}, k, err
}

func exportArchived(_ *bolt.Tx, _ *bolt.Cursor, k, v []byte) (*aimemoryv1.ExportRecord, []byte, error) {
	a, err := decodeArchived(v)
	if err != nil {
		return nil, nil, err
	}
	return ops.ArchivedRecord(a), k, nil
}

func exportVersion(_ *bolt.Tx, _ *bolt.Cursor, k, v []byte) (*aimemoryv1.ExportRecord, []byte, error) {
	a, err := decodeArchived(v)
	if err != nil {
		return nil, nil, err
	}
	if len(k) < 9 {
		return nil, nil, fmt.Errorf("corrupt version key %q", k)
	}
	return ops.VersionRecord(a, versionKeyAt(k)), k, nil
}

func exportLink(_ *bolt.Tx, _ *bolt.Cursor, k, v []byte) (*aimemoryv1.ExportRecord, []byte, error) {
	l, err := decodeLink(v)
	return ops.LinkRecord(ops.KindLink, l), k, err
}

func exportArchivedLink(_ *bolt.Tx, _ *bolt.Cursor, k, v []byte) (*aimemoryv1.ExportRecord, []byte, error) {
	l, err := decodeLink(v)
	return ops.LinkRecord(ops.KindArchivedLink, l), k, err
}

// exportEntity reads one entity's alias rows: entity_aliases is keyed
// entity id NUL folded alias, so they are adjacent, and one transaction
// reads them all.
func exportEntity(_ *bolt.Tx, c *bolt.Cursor, k, v []byte) (*aimemoryv1.ExportRecord, []byte, error) {
	id, _, ok := bytes.Cut(k, []byte{0})
	if !ok {
		return nil, nil, fmt.Errorf("corrupt entity alias key %q", k)
	}
	ent := &aimemoryv1.EntityAliases{Id: string(id)}
	prefix := k[:len(id)+1]
	for {
		a, err := decodeAliasRow(v)
		if err != nil {
			return nil, nil, err
		}
		ent.Aliases = append(ent.Aliases, a)
		nk, nv := c.Next()
		if nk == nil || !bytes.HasPrefix(nk, prefix) {
			c.Seek(k) // leave the cursor on the entity's last row
			break
		}
		k, v = nk, nv
	}
	return &aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_Entity{Entity: ent}}, k, nil
}

func exportStandard(_ *bolt.Tx, _ *bolt.Cursor, k, v []byte) (*aimemoryv1.ExportRecord, []byte, error) {
	st := new(aimemoryv1.Standard)
	if err := proto.Unmarshal(v, st); err != nil {
		return nil, nil, fmt.Errorf("decode standard of %q: %w", k, err)
	}
	return ops.StandardRecord(st), k, nil
}

func exportPending(tx *bolt.Tx, _ *bolt.Cursor, k, _ []byte) (*aimemoryv1.ExportRecord, []byte, error) {
	p, err := getPending(tx, string(k))
	return ops.PendingRecord(p), k, err
}

func exportSub(_ *bolt.Tx, _ *bolt.Cursor, k, v []byte) (*aimemoryv1.ExportRecord, []byte, error) {
	sub, err := decodeSub(v)
	if err != nil {
		return nil, nil, fmt.Errorf("decode subscription %q: %w", k, err)
	}
	return ops.ExportedSubscription(sub), k, nil
}

// What Import writes with (seam.Tx; the rules are package records').

func (t seamTx) Memories(ids []string) (map[string]*aimemoryv1.Memory, error) {
	out := make(map[string]*aimemoryv1.Memory, len(ids))
	for _, id := range ids {
		m, err := t.w.get(id)
		if err != nil {
			return nil, err
		}
		if m != nil {
			out[id] = m
		}
	}
	return out, nil
}

func (t seamTx) TitleOwners(keys []seam.NSTitle) (map[seam.NSTitle]string, error) {
	out := make(map[seam.NSTitle]string, len(keys))
	for _, k := range keys {
		if id := t.w.titleOwner(k.Namespace, k.Title); id != "" {
			out[k] = id
		}
	}
	return out, nil
}

// addSubscription writes sub; a new one's FromSeq logEvents sets past
// this write's own events (startImported) once they are numbered, an
// existing one keeps its start point and counters (its queue is apart).
func (t opsTx) addSubscription(sub *storage.Subscription) error {
	b := t.w.tx.Bucket(bucketSubs)
	old, err := decodeSub(b.Get([]byte(sub.ID)))
	if err != nil {
		return err
	}
	c := *sub
	if old != nil {
		c.FromSeq, c.Dispatched, c.Failed = old.FromSeq, old.Dispatched, old.Failed
	}
	raw, err := json.Marshal(&c)
	if err != nil {
		return err
	}
	if err := b.Put([]byte(sub.ID), raw); err != nil {
		return err
	}
	if old == nil {
		t.w.importedSubs = append(t.w.importedSubs, sub.ID)
	}
	return nil
}

// startImported sets the FromSeq of subscriptions ids to from, the last
// event their write logged, and returns them as they now are.
func startImported(tx *bolt.Tx, ids []string, from uint64) ([]*storage.Subscription, error) {
	b := tx.Bucket(bucketSubs)
	var out []*storage.Subscription
	for _, id := range ids {
		sub, err := decodeSub(b.Get([]byte(id)))
		if err != nil || sub == nil {
			return nil, err
		}
		sub.FromSeq = from
		raw, err := json.Marshal(sub)
		if err != nil {
			return nil, err
		}
		if err := b.Put([]byte(id), raw); err != nil {
			return nil, err
		}
		out = append(out, sub)
	}
	return out, nil
}

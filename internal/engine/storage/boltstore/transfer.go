package boltstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
	"github.com/ai-memory/ai-memory/sdk/record"
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
func (t seamTx) EachRecord(kind, after string, limit int, fn func(string, *aimemoryv1.ExportRecord) error) error {
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
	return &aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_Archived{Archived: &aimemoryv1.ArchivedMemory{
		Memory: a.Memory, ArchivedAt: a.ArchivedAt, Reason: a.Reason, OriginalTier: a.OriginalTier, OriginalExpiresAt: a.OriginalExpiresAt}}}, k, nil
}

func exportVersion(_ *bolt.Tx, _ *bolt.Cursor, k, v []byte) (*aimemoryv1.ExportRecord, []byte, error) {
	a, err := decodeArchived(v)
	if err != nil {
		return nil, nil, err
	}
	if len(k) < 9 {
		return nil, nil, fmt.Errorf("corrupt version key %q", k)
	}
	return &aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_Version{Version: &aimemoryv1.SupersededVersion{
		Archived: archivedMessage(a), At: int64(binary.BigEndian.Uint64(k[len(k)-8:]))}}}, k, nil
}

func exportLink(_ *bolt.Tx, _ *bolt.Cursor, k, v []byte) (*aimemoryv1.ExportRecord, []byte, error) {
	l, err := decodeLink(v)
	return &aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_Link{Link: l}}, k, err
}

func exportArchivedLink(_ *bolt.Tx, _ *bolt.Cursor, k, v []byte) (*aimemoryv1.ExportRecord, []byte, error) {
	l, err := decodeLink(v)
	return &aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_ArchivedLink{ArchivedLink: l}}, k, err
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
	return &aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_Standard{Standard: st}}, k, nil
}

func exportPending(tx *bolt.Tx, _ *bolt.Cursor, k, _ []byte) (*aimemoryv1.ExportRecord, []byte, error) {
	p, err := getPending(tx, string(k))
	return &aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_Pending{Pending: p}}, k, err
}

func exportSub(_ *bolt.Tx, _ *bolt.Cursor, k, v []byte) (*aimemoryv1.ExportRecord, []byte, error) {
	sub, err := decodeSub(v)
	if err != nil {
		return nil, nil, fmt.Errorf("decode subscription %q: %w", k, err)
	}
	return ops.ExportedSubscription(sub), k, nil
}

// Import writes records in one transaction: each is created, found
// identical (unchanged), or refused with the reason, which writes nothing
// of it. Records are read in order, so a link may follow its memories in
// the same batch.
func (s *Store) Import(ctx context.Context, records []*aimemoryv1.ExportRecord) ([]*aimemoryv1.ImportResult, error) {
	var results []*aimemoryv1.ImportResult
	// It leads its batch (writeFirst), so the events it logs are numbered
	// right after the log's sequence as it finds it: a subscription it
	// creates starts after them.
	err := s.writeFirst(ctx, func(w *writeTx) error {
		results = make([]*aimemoryv1.ImportResult, len(records)) // a run may be repeated
		base := w.tx.Bucket(bucketEventsLog).Sequence()
		var subs []string
		for i, r := range records {
			outcome, err := ops.ImportRecord(w, r)
			if err != nil {
				if !ops.IsRefusal(err) {
					return err
				}
				results[i] = &aimemoryv1.ImportResult{Outcome: "refused", Error: err.Error()}
				continue
			}
			results[i] = &aimemoryv1.ImportResult{Outcome: outcome}
			if outcome == "created" && r.GetSubscription() != nil {
				subs = append(subs, r.GetSubscription().GetId())
			}
		}
		return w.startAfterImport(subs, base)
	})
	return results, err
}

// startAfterImport sets the subscriptions ids's FromSeq past the events
// this import logs: they receive none of its own writes.
func (w *writeTx) startAfterImport(ids []string, base uint64) error {
	if len(ids) == 0 {
		return nil
	}
	from := base
	for _, e := range w.events {
		if loggedEvent(e.Type) {
			from++
		}
	}
	b := w.tx.Bucket(bucketSubs)
	for _, id := range ids {
		sub, err := decodeSub(b.Get([]byte(id)))
		if err != nil || sub == nil {
			return err
		}
		sub.FromSeq = from
		raw, err := json.Marshal(sub)
		if err != nil {
			return err
		}
		if err := b.Put([]byte(id), raw); err != nil {
			return err
		}
	}
	return nil
}

func (w *writeTx) ImportMemory(m *aimemoryv1.Memory) (string, error) {
	if err := rules.ValidImported(m); err != nil {
		return "", ops.Refuse(err)
	}
	old, err := w.get(m.GetId())
	if err != nil {
		return "", err
	}
	if old != nil {
		if proto.Equal(old, m) {
			return "unchanged", nil
		}
		return "", ops.Refusef("memory %s exists with other content; import does not overwrite", m.GetId())
	}
	if owner := w.titleOwner(m.GetNamespace(), m.GetTitle()); owner != "" {
		return "", ops.Refusef("title %s in namespace %s is taken by memory %s", record.Quote(m.GetTitle()), record.Quote(m.GetNamespace()), owner)
	}
	return "created", w.put(nil, proto.Clone(m).(*aimemoryv1.Memory), storage.EventImport)
}

func (w *writeTx) ImportLink(l *aimemoryv1.Link) (string, error) {
	if err := record.ValidateLink(l.GetSourceId(), l.GetTargetId(), l.GetRelation()); err != nil {
		return "", ops.Refuse(err)
	}
	for _, id := range []string{l.GetSourceId(), l.GetTargetId()} {
		if m, err := w.get(id); err != nil {
			return "", err
		} else if m == nil {
			return "", ops.Refusef("link %s -%s-> %s: memory %s is not there (import memories first)", l.GetSourceId(), l.GetRelation(), l.GetTargetId(), id)
		}
	}
	old, err := readLink(w.tx, l.GetSourceId(), l.GetTargetId(), l.GetRelation())
	if err != nil {
		return "", err
	}
	if old != nil {
		if proto.Equal(old, l) {
			return "unchanged", nil
		}
		return "", ops.Refusef("link %s -%s-> %s exists with other validity; import does not overwrite", l.GetSourceId(), l.GetRelation(), l.GetTargetId())
	}
	return "created", putLink(w.tx, l)
}

func (w *writeTx) ImportEntity(e *aimemoryv1.EntityAliases) (string, error) {
	m, err := w.get(e.GetId())
	if err != nil {
		return "", err
	}
	if m == nil {
		return "", ops.Refusef("entity %s: its memory is not there (import memories first)", e.GetId())
	}
	if len(e.GetAliases()) == 0 {
		return "", ops.Refusef("entity %s: no aliases", e.GetId())
	}
	created := false
	for _, a := range e.GetAliases() {
		if err := record.ValidateAlias("alias", a.GetAlias()); err != nil {
			return "", ops.Refuse(err)
		}
		f := rules.FoldAlias(a.GetAlias())
		switch holder := aliasHolder(w.tx, f, m.GetNamespace()); holder {
		case e.GetId():
			continue
		case "":
		default:
			return "", ops.Refusef("entity %s: alias %s is held by entity %s in namespace %s", e.GetId(), record.Quote(a.GetAlias()), holder, record.Quote(m.GetNamespace()))
		}
	}
	for _, a := range e.GetAliases() {
		f := rules.FoldAlias(a.GetAlias())
		if aliasHolder(w.tx, f, m.GetNamespace()) == e.GetId() {
			continue
		}
		if err := w.tx.Bucket(bucketEntityAliases).Put(entityAliasKey(e.GetId(), f), encodeAliasRow(a)); err != nil {
			return "", err
		}
		if err := w.tx.Bucket(bucketAliases).Put(aliasKey(f, m.GetNamespace()), []byte(e.GetId())); err != nil {
			return "", err
		}
		created = true
	}
	if !created {
		return "unchanged", nil
	}
	return "created", nil
}

func (w *writeTx) ImportArchived(a *aimemoryv1.ArchivedMemory) (string, error) {
	m := a.GetMemory()
	if m == nil {
		return "", ops.Refusef("archived record without its memory")
	}
	if err := rules.ValidImported(m); err != nil {
		return "", ops.Refuse(err)
	}
	if live, err := w.get(m.GetId()); err != nil {
		return "", err
	} else if live != nil {
		return "", ops.Refusef("archived memory %s is also a live memory here", m.GetId())
	}
	row := &storage.Archived{Memory: m, ArchivedAt: a.GetArchivedAt(), Reason: a.GetReason(), OriginalTier: a.GetOriginalTier(), OriginalExpiresAt: a.GetOriginalExpiresAt()}
	raw, err := encodeArchived(row)
	if err != nil {
		return "", err
	}
	b := w.tx.Bucket(bucketArchive)
	if old := b.Get([]byte(m.GetId())); old != nil {
		if bytes.Equal(old, raw) {
			return "unchanged", nil
		}
		return "", ops.Refusef("archived memory %s exists with other content; import does not overwrite", m.GetId())
	}
	return "created", b.Put([]byte(m.GetId()), raw)
}

// importArchivedLink writes a link kept in the archive: both ends must be
// here (live or archived, so memories and archived memories come first)
// and at least one archived, as the archive keeps them.
func (w *writeTx) ImportArchivedLink(l *aimemoryv1.Link) (string, error) {
	if err := record.ValidateLink(l.GetSourceId(), l.GetTargetId(), l.GetRelation()); err != nil {
		return "", ops.Refuse(err)
	}
	arch := w.tx.Bucket(bucketArchive)
	archivedEnd := false
	for _, id := range []string{l.GetSourceId(), l.GetTargetId()} {
		if arch.Get([]byte(id)) != nil {
			archivedEnd = true
		} else if w.tx.Bucket(bucketMemories).Get([]byte(id)) == nil {
			return "", ops.Refusef("archived link %s -%s-> %s: memory %s is neither live nor archived here (import memories first)", l.GetSourceId(), l.GetRelation(), l.GetTargetId(), id)
		}
	}
	if !archivedEnd {
		return "", ops.Refusef("archived link %s -%s-> %s: both ends are live here; the archive keeps only links with an archived end", l.GetSourceId(), l.GetRelation(), l.GetTargetId())
	}
	out, in := w.tx.Bucket(bucketArchivedLinksOut), w.tx.Bucket(bucketArchivedLinksIn)
	if raw := out.Get(linkKey(l.GetSourceId(), l.GetTargetId(), l.GetRelation())); raw != nil {
		old, err := decodeLink(raw)
		if err != nil {
			return "", err
		}
		if proto.Equal(old, l) {
			return "unchanged", nil
		}
		return "", ops.Refusef("archived link %s -%s-> %s exists with other validity; import does not overwrite", l.GetSourceId(), l.GetRelation(), l.GetTargetId())
	}
	return "created", putLinkRows(out, in, l)
}

// importVersion writes a superseded version under its place among its
// id's versions. The live record need not be here: a version outlives
// its memory, as in the store it came from.
func (w *writeTx) ImportVersion(v *aimemoryv1.SupersededVersion) (string, error) {
	a := v.GetArchived()
	m := a.GetMemory()
	if m == nil {
		return "", ops.Refusef("version record without its memory")
	}
	if err := rules.ValidImported(m); err != nil {
		return "", ops.Refuse(err)
	}
	if v.GetAt() <= 0 {
		return "", ops.Refusef("version of %s: at must be set", m.GetId())
	}
	raw, err := encodeArchived(&storage.Archived{Memory: m, ArchivedAt: a.GetArchivedAt(), Reason: a.GetReason(), OriginalTier: a.GetOriginalTier(), OriginalExpiresAt: a.GetOriginalExpiresAt()})
	if err != nil {
		return "", err
	}
	b, key := w.tx.Bucket(bucketVersions), versionKey(m.GetId(), v.GetAt())
	if old := b.Get(key); old != nil {
		if bytes.Equal(old, raw) {
			return "unchanged", nil
		}
		return "", ops.Refusef("version of %s at %d exists with other content; import does not overwrite", m.GetId(), v.GetAt())
	}
	return "created", b.Put(key, raw)
}

// importStandard writes a namespace's standard row as it was (policy,
// owner, who set it). Its memory need not be here: deleting a standard's
// memory does not lift the standard.
func (w *writeTx) ImportStandard(st *aimemoryv1.Standard) (string, error) {
	if err := ops.ImportStandardRule(st); err != nil {
		return "", ops.Refuse(err)
	}
	old, err := govView{tx: w.tx}.Standard(st.GetNamespace())
	if err != nil {
		return "", err
	}
	if old != nil {
		if proto.Equal(old, st) {
			return "unchanged", nil
		}
		return "", ops.Refusef("namespace %s has another standard here; import does not overwrite", record.Quote(st.GetNamespace()))
	}
	return "created", putStandard(w.tx, st)
}

// importPending writes an approval queue entry, decided or not, with its
// time index row. A pending one is decided later by the rules of this
// data dir, as any other.
func (w *writeTx) ImportPending(p *aimemoryv1.PendingAction) (string, error) {
	if err := ops.ImportPendingRule(p); err != nil {
		return "", ops.Refuse(err)
	}
	if raw := w.tx.Bucket(bucketPending).Get([]byte(p.GetId())); raw != nil {
		old, err := getPending(w.tx, p.GetId())
		if err != nil {
			return "", err
		}
		if proto.Equal(old, p) {
			return "unchanged", nil
		}
		return "", ops.Refusef("pending action %s exists with other content; import does not overwrite", p.GetId())
	}
	if err := w.putPending(p); err != nil {
		return "", err
	}
	return "created", w.tx.Bucket(bucketPendingTime).Put(pendingTimeKey(p.GetRequestedAt(), p.GetId()), nil)
}

// importSubscription writes a webhook subscription with its secret as the
// caller (the Transfer service) sealed it for this data dir. It receives
// the events logged after the import (startAfterImport), with no delivery
// history. One of
// the same id, target and filters is unchanged whatever its sealed bytes
// (each sealing draws a fresh nonce).
func (w *writeTx) ImportSubscription(in *aimemoryv1.WebhookSubscription) (string, error) {
	sub, err := ops.ImportedSubscription(in)
	if err != nil {
		return "", err
	}
	b := w.tx.Bucket(bucketSubs)
	old, err := decodeSub(b.Get([]byte(sub.ID)))
	if err != nil {
		return "", err
	}
	if old != nil {
		outcome, err := ops.ImportOverExisting(old, sub)
		return outcome, err
	}
	raw, err := json.Marshal(sub) // FromSeq: startAfterImport
	if err != nil {
		return "", err
	}
	return "created", b.Put([]byte(sub.ID), raw)
}

package records

import (
	"context"
	"errors"

	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	"github.com/ai-memory/ai-memory/internal/engine/storage/seam"
	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// One read of an export reads at most this many records or about this
// many bytes of them, whichever comes first: a batch.
const (
	ExportBatchRecords = 1000
	exportBatchBytes   = 4 << 20
)

// errFull stops a read whose batch is full; the next read resumes there.
var errFull = errors.New("export batch full")

// batches sends what fill reads, a batch per read (of the backend's
// Scan), after that read ends (bbolt: its transaction is over, so a slow
// consumer holds none). fill adds each record with its size; add answers
// false, not taking it, once the batch is full, and fill stops there
// (returning errFull) to resume at it in the next read. A read that fills
// no batch is the last.
func batches[T any](ctx context.Context, read func(func(seam.Tx) error) error, fill func(t seam.Tx, add func(r T, size int) bool) error, send func(T) error) error {
	for {
		var batch []T
		full := false
		err := read(func(t seam.Tx) error {
			batch, full = nil, false
			size := 0
			err := fill(t, func(r T, n int) bool {
				if len(batch) == ExportBatchRecords || size >= exportBatchBytes {
					full = true
					return false
				}
				batch, size = append(batch, r), size+n
				return true
			})
			if errors.Is(err, errFull) {
				return nil
			}
			return err
		})
		if err != nil {
			return err
		}
		for _, r := range batch {
			if err := send(r); err != nil {
				return err
			}
		}
		if err := ctx.Err(); err != nil || !full {
			return err
		}
	}
}

// Export calls each with every record, as stored, in the order Import
// needs: memories, archived memories, superseded versions, links, archived
// links, each entity's aliases, standards, pending actions, webhook
// subscriptions (ops.ExportKinds). Index rows are derived again on import;
// vectors are not carried (reindex rebuilds them).
//
// It reads in batches (batches: bbolt a read transaction per batch,
// ended before each sees it, so a slow consumer never pins the file's
// pages against a writer that must grow it; PostgreSQL one snapshot).
// What that gives, where the batches are not one snapshot:
//   - A record that stays where it is (same kind, same key) for the whole
//     export is sent exactly once; no key of a kind is sent twice.
//   - A record written or deleted during the export may or may not be
//     sent, as of some moment during the export. One that moves between
//     kinds meanwhile (archived, restored) may be sent in one form or,
//     when it moves behind both walks, in neither: a second export has it.
//   - The stream is closed under reference, so Import into an empty store
//     refuses none of it (exportState): a link or entity is sent only when
//     its memories were; an archived memory already sent as live is not
//     sent again; an archived link only when its ends were sent, one of
//     them archived; an alias only once per namespace.
//
// The cost of that closure is a map of the memory ids sent (with their
// namespaces), held for the export's length.
func (s *Store) Export(ctx context.Context, each func(*aimemoryv1.ExportRecord) error) error {
	e := exportState{live: map[string]string{}, archived: map[string]bool{}, aliases: map[string]bool{}, names: map[string]string{}}
	keep := map[string]func(*aimemoryv1.ExportRecord) bool{
		ops.KindMemory: e.keepMemory, ops.KindArchived: e.keepArchived, ops.KindLink: e.keepLink,
		ops.KindArchivedLink: e.keepArchivedLink, ops.KindEntity: e.keepEntity,
	}
	return s.b.Scan(ctx, func(read func(func(seam.Tx) error) error) error {
		for _, kind := range ops.ExportKinds {
			send := each
			if k := keep[kind]; k != nil {
				send = func(r *aimemoryv1.ExportRecord) error {
					if !k(r) {
						return nil
					}
					return each(r)
				}
			}
			after := ""
			err := batches(ctx, read, func(t seam.Tx, add func(*aimemoryv1.ExportRecord, int) bool) error {
				return t.EachRecord(kind, after, ExportBatchRecords+1, func(key string, r *aimemoryv1.ExportRecord) error {
					if !add(r, proto.Size(r)) {
						return errFull
					}
					after = key
					return nil
				})
			}, send)
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// exportState is what Export has sent, for the references of what
// follows: live memory ids with their namespaces (interned in names),
// archived ids, and aliases by folded form and namespace.
type exportState struct {
	live     map[string]string
	archived map[string]bool
	aliases  map[string]bool
	names    map[string]string
}

func (e exportState) keepMemory(r *aimemoryv1.ExportRecord) bool {
	ns := r.GetMemory().GetNamespace()
	if in, ok := e.names[ns]; ok {
		ns = in
	} else {
		e.names[ns] = ns
	}
	e.live[r.GetMemory().GetId()] = ns
	return true
}

// keepArchived drops a memory archived after it was sent as live.
func (e exportState) keepArchived(r *aimemoryv1.ExportRecord) bool {
	id := r.GetArchived().GetMemory().GetId()
	if _, live := e.live[id]; live {
		return false
	}
	e.archived[id] = true
	return true
}

func (e exportState) keepLink(r *aimemoryv1.ExportRecord) bool {
	_, src := e.live[r.GetLink().GetSourceId()]
	_, dst := e.live[r.GetLink().GetTargetId()]
	return src && dst
}

// keepArchivedLink keeps an archived link whose ends were both sent, one
// of them archived, as the archive keeps them.
func (e exportState) keepArchivedLink(r *aimemoryv1.ExportRecord) bool {
	archived := false
	for _, id := range []string{r.GetArchivedLink().GetSourceId(), r.GetArchivedLink().GetTargetId()} {
		if e.archived[id] {
			archived = true
		} else if _, live := e.live[id]; !live {
			return false
		}
	}
	return archived
}

// keepEntity keeps an entity whose memory was sent, with the aliases no
// entity sent before holds in its namespace (an alias freed and taken
// again during the export).
func (e exportState) keepEntity(r *aimemoryv1.ExportRecord) bool {
	ent := r.GetEntity()
	ns, live := e.live[ent.GetId()]
	if !live {
		return false
	}
	kept := ent.Aliases[:0]
	for _, a := range ent.GetAliases() {
		k := rules.FoldAlias(a.GetAlias()) + "\x00" + ns
		if !e.aliases[k] {
			e.aliases[k] = true
			kept = append(kept, a)
		}
	}
	ent.Aliases = kept
	return len(kept) > 0
}

// Import writes records in one transaction: each is created, found
// identical (unchanged), or refused with the reason, which writes nothing
// of it; it never overwrites. Records are read in order, so a link may
// follow its memories in the same batch. A run that is repeated (a group
// commit, a lost race) starts its results afresh.
func (s *Store) Import(ctx context.Context, recs []*aimemoryv1.ExportRecord) ([]*aimemoryv1.ImportResult, error) {
	return written(ctx, s, func(t seam.Tx) ([]*aimemoryv1.ImportResult, error) {
		im, err := prefetch(t, recs)
		if err != nil {
			return nil, err
		}
		results := make([]*aimemoryv1.ImportResult, len(recs))
		for i, r := range recs {
			outcome, err := ops.ImportRecord(im, r)
			if err != nil {
				if !ops.IsRefusal(err) {
					return nil, err
				}
				results[i] = refused(err.Error())
				continue
			}
			results[i] = &aimemoryv1.ImportResult{Outcome: outcome}
		}
		return results, nil
	})
}

// importer is one import run (ops.Importer): its transaction, with what
// the batch's memories find there read up front (prefetch), each memory's
// row by id and each (namespace, title)'s holder, kept up to date as the
// batch creates memories. Import reads records as stored, whoever asks:
// only hosts reach it, and it must see every record to refuse a clash.
type importer struct {
	t      seam.Tx
	live   map[string]*aimemoryv1.Memory // id → its record; nil: not there
	titles map[seam.NSTitle]string       // → the id holding it; absent: free
}

func prefetch(t seam.Tx, recs []*aimemoryv1.ExportRecord) (*importer, error) {
	var ids []string
	var keys []seam.NSTitle
	for _, r := range recs {
		if m := r.GetMemory(); m != nil {
			ids, keys = append(ids, m.GetId()), append(keys, seam.NSTitle{Namespace: m.GetNamespace(), Title: m.GetTitle()})
		}
	}
	im := &importer{t: t, live: map[string]*aimemoryv1.Memory{}, titles: map[seam.NSTitle]string{}}
	if len(ids) == 0 {
		return im, nil
	}
	var err error
	if im.live, err = t.Memories(ids); err != nil {
		return nil, err
	}
	im.titles, err = t.TitleOwners(keys)
	return im, err
}

// memory is the live memory id, as stored; nil when there is none.
func (im *importer) memory(id string) (*aimemoryv1.Memory, error) {
	if m, ok := im.live[id]; ok {
		return m, nil
	}
	found, err := im.t.Memories([]string{id})
	return found[id], err
}

func (im *importer) ImportMemory(m *aimemoryv1.Memory) (string, error) {
	if err := rules.ValidImported(m); err != nil {
		return "", ops.Refuse(err)
	}
	if old := im.live[m.GetId()]; old != nil {
		if proto.Equal(old, m) {
			return "unchanged", nil
		}
		return "", ops.Refusef("memory %s exists with other content; import does not overwrite", m.GetId())
	}
	k := seam.NSTitle{Namespace: m.GetNamespace(), Title: m.GetTitle()}
	if owner := im.titles[k]; owner != "" {
		return "", ops.Refusef("title %s in namespace %s is taken by memory %s", record.Quote(m.GetTitle()), record.Quote(m.GetNamespace()), owner)
	}
	c := rules.Clone(m)
	if err := im.t.Put(nil, c, storage.EventImport); err != nil {
		return "", err
	}
	im.live[c.GetId()], im.titles[k] = c, c.GetId()
	return "created", nil
}

// ImportLink writes a live link: both its memories must be here and live
// (so memories come first).
func (im *importer) ImportLink(l *aimemoryv1.Link) (string, error) {
	if err := record.ValidateLink(l.GetSourceId(), l.GetTargetId(), l.GetRelation()); err != nil {
		return "", ops.Refuse(err)
	}
	for _, id := range []string{l.GetSourceId(), l.GetTargetId()} {
		if m, err := im.memory(id); err != nil {
			return "", err
		} else if m == nil {
			return "", ops.Refusef("link %s -%s-> %s: memory %s is not there (import memories first)", l.GetSourceId(), l.GetRelation(), l.GetTargetId(), id)
		}
	}
	old, err := ops.ReadLink(im.t, l.GetSourceId(), l.GetTargetId(), l.GetRelation())
	if err != nil {
		return "", err
	}
	if old != nil {
		if proto.Equal(old, l) {
			return "unchanged", nil
		}
		return "", ops.Refusef("link %s -%s-> %s exists with other validity; import does not overwrite", l.GetSourceId(), l.GetRelation(), l.GetTargetId())
	}
	return "created", im.t.PutRecord(ops.LinkRecord(ops.KindLink, l))
}

// ImportEntity gives a live memory the alias rows it was exported with;
// an alias another entity holds in its namespace refuses the record.
func (im *importer) ImportEntity(e *aimemoryv1.EntityAliases) (string, error) {
	m, err := im.memory(e.GetId())
	if err != nil {
		return "", err
	}
	if m == nil {
		return "", ops.Refusef("entity %s: its memory is not there (import memories first)", e.GetId())
	}
	if len(e.GetAliases()) == 0 {
		return "", ops.Refusef("entity %s: no aliases", e.GetId())
	}
	ns := m.GetNamespace()
	var add []*aimemoryv1.EntityAlias
	for _, a := range e.GetAliases() {
		if err := record.ValidateAlias("alias", a.GetAlias()); err != nil {
			return "", ops.Refuse(err)
		}
		switch holder, err := im.t.AliasHolder(rules.FoldAlias(a.GetAlias()), ns); {
		case err != nil:
			return "", err
		case holder == "":
			add = append(add, a)
		case holder != e.GetId():
			return "", ops.Refusef("entity %s: alias %s is held by entity %s in namespace %s", e.GetId(), record.Quote(a.GetAlias()), holder, record.Quote(ns))
		}
	}
	if len(add) == 0 {
		return "unchanged", nil
	}
	for _, a := range add {
		if err := im.t.AddAlias(e.GetId(), ns, rules.FoldAlias(a.GetAlias()), a); err != nil {
			return "", err
		}
	}
	return "created", nil
}

// archivedRow is a as the archive keeps it, once its memory is valid.
func archivedRow(what string, a *aimemoryv1.ArchivedMemory) (*storage.Archived, error) {
	m := a.GetMemory()
	if m == nil {
		return nil, ops.Refusef("%s record without its memory", what)
	}
	if err := rules.ValidImported(m); err != nil {
		return nil, ops.Refuse(err)
	}
	return ops.ArchivedOf(a), nil
}

// sameArchived: a stored row and an imported one are the same record.
func sameArchived(old, a *storage.Archived) bool {
	return old.ArchivedAt == a.ArchivedAt && old.Reason == a.Reason && old.OriginalTier == a.OriginalTier &&
		old.OriginalExpiresAt == a.OriginalExpiresAt && proto.Equal(old.Memory, a.Memory)
}

func (im *importer) ImportArchived(in *aimemoryv1.ArchivedMemory) (string, error) {
	a, err := archivedRow("archived", in)
	if err != nil {
		return "", err
	}
	id := a.Memory.GetId()
	if live, err := im.memory(id); err != nil {
		return "", err
	} else if live != nil {
		return "", ops.Refusef("archived memory %s is also a live memory here", id)
	}
	old, err := ops.Archived(im.t, id)
	switch {
	case err != nil:
		return "", err
	case old == nil:
		return "created", im.t.PutRecord(&aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_Archived{Archived: in}})
	case sameArchived(old, a):
		return "unchanged", nil
	}
	return "", ops.Refusef("archived memory %s exists with other content; import does not overwrite", id)
}

// ImportArchivedLink writes a link kept in the archive: both ends must be
// here (live or archived, so memories and archived memories come first)
// and at least one archived, as the archive keeps them.
func (im *importer) ImportArchivedLink(l *aimemoryv1.Link) (string, error) {
	if err := record.ValidateLink(l.GetSourceId(), l.GetTargetId(), l.GetRelation()); err != nil {
		return "", ops.Refuse(err)
	}
	archivedEnd := false
	for _, id := range []string{l.GetSourceId(), l.GetTargetId()} {
		a, err := ops.Archived(im.t, id)
		if err != nil {
			return "", err
		}
		if a != nil {
			archivedEnd = true
			continue
		}
		if m, err := im.memory(id); err != nil {
			return "", err
		} else if m == nil {
			return "", ops.Refusef("archived link %s -%s-> %s: memory %s is neither live nor archived here (import memories first)", l.GetSourceId(), l.GetRelation(), l.GetTargetId(), id)
		}
	}
	if !archivedEnd {
		return "", ops.Refusef("archived link %s -%s-> %s: both ends are live here; the archive keeps only links with an archived end", l.GetSourceId(), l.GetRelation(), l.GetTargetId())
	}
	old, err := im.t.Record(ops.LinkRecordKey(ops.KindArchivedLink, l))
	switch {
	case err != nil:
		return "", err
	case old == nil:
		return "created", im.t.PutRecord(ops.LinkRecord(ops.KindArchivedLink, l))
	case proto.Equal(old.GetArchivedLink(), l):
		return "unchanged", nil
	}
	return "", ops.Refusef("archived link %s -%s-> %s exists with other validity; import does not overwrite", l.GetSourceId(), l.GetRelation(), l.GetTargetId())
}

// ImportVersion writes a superseded version under its place among its
// id's versions. The live record need not be here: a version outlives
// its memory, as in the store it came from.
func (im *importer) ImportVersion(v *aimemoryv1.SupersededVersion) (string, error) {
	a, err := archivedRow("version", v.GetArchived())
	if err != nil {
		return "", err
	}
	id := a.Memory.GetId()
	if v.GetAt() <= 0 {
		return "", ops.Refusef("version of %s: at must be set", id)
	}
	old, err := ops.Version(im.t, id, v.GetAt())
	switch {
	case err != nil:
		return "", err
	case old == nil:
		return "created", im.t.PutRecord(&aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_Version{Version: v}})
	case sameArchived(old, a):
		return "unchanged", nil
	}
	return "", ops.Refusef("version of %s at %d exists with other content; import does not overwrite", id, v.GetAt())
}

// ImportStandard writes a namespace's standard row as it was (policy,
// owner, who set it). Its memory need not be here: deleting a standard's
// memory does not lift the standard.
func (im *importer) ImportStandard(st *aimemoryv1.Standard) (string, error) {
	if err := ops.ImportStandardRule(st); err != nil {
		return "", ops.Refuse(err)
	}
	old, err := im.t.View().Standard(st.GetNamespace())
	if err != nil {
		return "", err
	}
	if old != nil {
		if proto.Equal(old, st) {
			return "unchanged", nil
		}
		return "", ops.Refusef("namespace %s has another standard here; import does not overwrite", record.Quote(st.GetNamespace()))
	}
	return "created", im.t.PutRecord(ops.StandardRecord(st))
}

// ImportPending writes an approval queue entry, decided or not. A pending
// one is decided later by the rules of this store, as any other.
func (im *importer) ImportPending(p *aimemoryv1.PendingAction) (string, error) {
	if err := ops.ImportPendingRule(p); err != nil {
		return "", ops.Refuse(err)
	}
	old, err := ops.Pending(im.t, p.GetId())
	var none *storage.PendingNotFoundError
	switch {
	case errors.As(err, &none):
		return "created", im.t.PutRecord(ops.PendingRecord(p))
	case err != nil:
		return "", err
	case proto.Equal(old, p):
		return "unchanged", nil
	}
	return "", ops.Refusef("pending action %s exists with other content; import does not overwrite", p.GetId())
}

// ImportSubscription writes a webhook subscription with its secret as the
// caller (the Transfer service) sealed it for this store. It receives the
// events logged after the import's own (PutRecord), with no
// delivery history. One of the same id, target and filters is unchanged
// whatever its sealed bytes (each sealing draws a fresh nonce).
func (im *importer) ImportSubscription(in *aimemoryv1.WebhookSubscription) (string, error) {
	sub, err := ops.ImportedSubscription(in)
	if err != nil {
		return "", err
	}
	old, err := im.t.Record(ops.Key{Kind: ops.KindSubscription, ID: sub.ID})
	if err != nil {
		return "", err
	}
	if old != nil {
		return ops.ImportOverExisting(ops.SubscriptionOf(old.GetSubscription()), sub)
	}
	return "created", im.t.PutRecord(&aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_Subscription{Subscription: in}})
}

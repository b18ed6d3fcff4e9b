package pgstore

import (
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
	"github.com/ai-memory/ai-memory/sdk/record"
)

// The graph's part of Export and Import, boltstore's rules: an import
// creates a record, finds it identical (unchanged), or refuses it
// (refusal), writing nothing of it; it never overwrites.

// importLink writes a live link: both its memories must be here and live
// (so memories come first).
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
	old, err := w.readLink(liveLinks, l.GetSourceId(), l.GetTargetId(), l.GetRelation())
	if err != nil {
		return "", err
	}
	if old != nil {
		if proto.Equal(old, l) {
			return "unchanged", nil
		}
		return "", ops.Refusef("link %s -%s-> %s exists with other validity; import does not overwrite", l.GetSourceId(), l.GetRelation(), l.GetTargetId())
	}
	return "created", w.writeLink(liveLinks, l)
}

// importArchivedLink writes a link kept in the archive: both ends must be
// here (live or archived, so memories and archived memories come first)
// and at least one archived, as the archive keeps them.
func (w *writeTx) ImportArchivedLink(l *aimemoryv1.Link) (string, error) {
	if err := record.ValidateLink(l.GetSourceId(), l.GetTargetId(), l.GetRelation()); err != nil {
		return "", ops.Refuse(err)
	}
	archivedEnd := false
	for _, id := range []string{l.GetSourceId(), l.GetTargetId()} {
		var archived, live bool
		if err := w.tx.QueryRow(w.ctx, `SELECT EXISTS (SELECT 1 FROM archived WHERE id = $1), EXISTS (SELECT 1 FROM memories WHERE id = $1)`, id).Scan(&archived, &live); err != nil {
			return "", err
		}
		if archived {
			archivedEnd = true
		} else if !live {
			return "", ops.Refusef("archived link %s -%s-> %s: memory %s is neither live nor archived here (import memories first)", l.GetSourceId(), l.GetRelation(), l.GetTargetId(), id)
		}
	}
	if !archivedEnd {
		return "", ops.Refusef("archived link %s -%s-> %s: both ends are live here; the archive keeps only links with an archived end", l.GetSourceId(), l.GetRelation(), l.GetTargetId())
	}
	old, err := w.readLink(archivedLinks, l.GetSourceId(), l.GetTargetId(), l.GetRelation())
	if err != nil {
		return "", err
	}
	if old != nil {
		if proto.Equal(old, l) {
			return "unchanged", nil
		}
		return "", ops.Refusef("archived link %s -%s-> %s exists with other validity; import does not overwrite", l.GetSourceId(), l.GetRelation(), l.GetTargetId())
	}
	return "created", w.writeLink(archivedLinks, l)
}

// importEntity gives a live memory the alias rows it was exported with;
// an alias another entity holds in its namespace refuses the record.
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
	t := opsTx{w}
	for _, a := range e.GetAliases() {
		if err := record.ValidateAlias("alias", a.GetAlias()); err != nil {
			return "", ops.Refuse(err)
		}
		holder, err := t.AliasHolder(rules.FoldAlias(a.GetAlias()), m.GetNamespace())
		if err != nil {
			return "", err
		}
		if holder != "" && holder != e.GetId() {
			return "", ops.Refusef("entity %s: alias %s is held by entity %s in namespace %s", e.GetId(), record.Quote(a.GetAlias()), holder, record.Quote(m.GetNamespace()))
		}
	}
	created := false
	for _, a := range e.GetAliases() {
		f := rules.FoldAlias(a.GetAlias())
		holder, err := t.AliasHolder(f, m.GetNamespace())
		if err != nil {
			return "", err
		}
		if holder == e.GetId() {
			continue
		}
		if err := t.AddAlias(e.GetId(), m.GetNamespace(), f, a); err != nil {
			return "", err
		}
		created = true
	}
	if !created {
		return "unchanged", nil
	}
	return "created", nil
}

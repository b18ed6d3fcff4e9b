package boltstore

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
	"github.com/ai-memory/ai-memory/sdk/record"
)

// Entities (family-graph §1.5, with the changes): an entity is a
// memory registered by RegisterEntity (long tier, title = content = the
// canonical name, tag "entity", metadata.kind "entity") that has aliases.
// Having alias rows is what makes a memory an entity here: metadata can be
// edited by any writer, the alias rows only by the engine.
//
//	aliases         fold(alias) NUL namespace → entity id   (unique per namespace)
//	entity_aliases  entity id NUL fold(alias) → aliasRow     (the entity's set)
//
// The canonical name is itself an alias. Deleting the memory removes its
// rows (removeEntity); moving or renaming it re-keys them (moveEntity).

func aliasKey(folded, namespace string) []byte {
	k := make([]byte, 0, len(folded)+1+len(namespace))
	k = append(k, folded...)
	k = append(k, 0)
	return append(k, namespace...)
}

func entityAliasKey(id, folded string) []byte {
	k := make([]byte, 0, len(id)+1+len(folded))
	k = append(k, id...)
	k = append(k, 0)
	return append(k, folded...)
}

// aliasRow: version 1, added_at (8 bytes, big-endian), uvarint length and
// added_by, then the alias as given.
func encodeAliasRow(a *aimemoryv1.EntityAlias) []byte {
	b := []byte{1}
	b = binary.BigEndian.AppendUint64(b, uint64(a.AddedAt))
	b = binary.AppendUvarint(b, uint64(len(a.AddedBy)))
	b = append(b, a.AddedBy...)
	return append(b, a.Alias...)
}

func decodeAliasRow(b []byte) (*aimemoryv1.EntityAlias, error) {
	if len(b) < 10 || b[0] != 1 {
		return nil, errors.New("corrupt alias row")
	}
	a := &aimemoryv1.EntityAlias{AddedAt: int64(binary.BigEndian.Uint64(b[1:9]))}
	l, k := binary.Uvarint(b[9:])
	if k <= 0 || uint64(len(b)-9-k) < l {
		return nil, errors.New("corrupt alias row")
	}
	a.AddedBy = string(b[9+k : 9+k+int(l)])
	a.Alias = string(b[9+k+int(l):])
	return a, nil
}

// isEntity reports whether memory id has alias rows.
func isEntity(tx *bolt.Tx, id string) bool {
	prefix := idPrefix(id)
	k, _ := tx.Bucket(bucketEntityAliases).Cursor().Seek(prefix)
	return k != nil && bytes.HasPrefix(k, prefix)
}

// aliasesOf is the alias set of entity id keyed by folded form, in the
// order they were added, then alphabetically.
func aliasesOf(tx *bolt.Tx, id string) (folded []string, rows []*aimemoryv1.EntityAlias, err error) {
	prefix := idPrefix(id)
	c := tx.Bucket(bucketEntityAliases).Cursor()
	type pair struct {
		f string
		a *aimemoryv1.EntityAlias
	}
	var all []pair
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		a, err := decodeAliasRow(v)
		if err != nil {
			return nil, nil, err
		}
		all = append(all, pair{string(k[len(prefix):]), a})
	}
	slices.SortFunc(all, func(x, y pair) int {
		return cmp.Or(cmp.Compare(x.a.AddedAt, y.a.AddedAt), cmp.Compare(x.a.Alias, y.a.Alias))
	})
	for _, p := range all {
		folded, rows = append(folded, p.f), append(rows, p.a)
	}
	return folded, rows, nil
}

func entityOf(tx *bolt.Tx, m *aimemoryv1.Memory) (*aimemoryv1.Entity, error) {
	_, rows, err := aliasesOf(tx, m.Id)
	if err != nil {
		return nil, err
	}
	return &aimemoryv1.Entity{Id: m.Id, CanonicalName: m.Title, Namespace: m.Namespace, Aliases: rows, CreatedAt: m.CreatedAt}, nil
}

// aliasHolder is the entity holding folded in namespace ("" = none).
func aliasHolder(tx *bolt.Tx, folded, namespace string) string {
	return string(tx.Bucket(bucketAliases).Get(aliasKey(folded, namespace)))
}

// claim checks that alias (field) is free in namespace or already held by
// id, returning its folded form.
func (w *writeTx) claim(field, alias, namespace, id string) (string, error) {
	f := rules.FoldAlias(alias)
	holder := aliasHolder(w.tx, f, namespace)
	if holder == "" || holder == id {
		return f, nil
	}
	name := "?"
	if m, err := w.get(holder); err != nil {
		return "", err
	} else if m != nil {
		name = m.Title
	}
	return "", &storage.AliasTakenError{Field: field, Alias: alias, Namespace: namespace, EntityID: holder, EntityName: name}
}

// addAlias gives entity id the alias (folded f) in namespace unless it
// already has it; claim must have passed.
func (w *writeTx) addAlias(id, namespace, alias, f, by string) error {
	ek := entityAliasKey(id, f)
	ea := w.tx.Bucket(bucketEntityAliases)
	if ea.Get(ek) != nil {
		return nil
	}
	if err := ea.Put(ek, encodeAliasRow(&aimemoryv1.EntityAlias{Alias: alias, AddedAt: w.now, AddedBy: by})); err != nil {
		return err
	}
	return w.tx.Bucket(bucketAliases).Put(aliasKey(f, namespace), []byte(id))
}

// RegisterEntity creates the entity (canonical_name, namespace), or reuses
// it when it exists (its metadata left as it is), and adds the aliases it
// lacks; all in one transaction, so an alias held by another entity of the
// namespace (storage.AliasTakenError) writes nothing. A memory with the same title
// that is not an entity blocks registration.
func (s *Store) RegisterEntity(ctx context.Context, req *aimemoryv1.RegisterEntityRequest) (*aimemoryv1.RegisterEntityResponse, error) {
	name := strings.TrimSpace(req.GetCanonicalName())
	ns := strings.TrimSpace(req.GetNamespace())
	if err := record.ValidateAlias("canonical_name", name); err != nil {
		return nil, err
	}
	if err := record.ValidateNamespace("namespace", ns); err != nil {
		return nil, err
	}
	if len(req.GetAliases()) > record.MaxAliasesPerOp {
		return nil, &record.FieldError{Field: "aliases", Rule: fmt.Sprintf("must have at most %d entries (got %d)", record.MaxAliasesPerOp, len(req.GetAliases()))}
	}
	type alias struct{ field, text string }
	aliases := []alias{{"canonical_name", name}}
	for i, a := range req.GetAliases() {
		a = strings.TrimSpace(a)
		field := fmt.Sprintf("aliases[%d]", i)
		if err := record.ValidateAlias(field, a); err != nil {
			return nil, err
		}
		aliases = append(aliases, alias{field, a})
	}
	by := req.GetRegisteredBy()
	if err := record.ValidateAgentID("registered_by", by); err != nil {
		return nil, err
	}
	entity, err := rules.EntityMemory(name, ns, req.GetMetadataJson())
	if err != nil {
		return nil, err
	}

	var resp *aimemoryv1.RegisterEntityResponse
	err = s.write(ctx, func(w *writeTx) error {
		// A run may be repeated (group commit): change a copy, answer afresh.
		m := rules.Clone(entity)
		resp = &aimemoryv1.RegisterEntityResponse{}
		id := w.titleOwner(ns, name)
		if id != "" && !isEntity(w.tx, id) {
			return &storage.AliasTakenError{Field: "canonical_name", Alias: name, Namespace: ns, EntityID: id}
		}
		folded := make([]string, len(aliases))
		for i, a := range aliases {
			f, err := w.claim(a.field, a.text, ns, id)
			if err != nil {
				return err
			}
			folded[i] = f
		}
		if id == "" {
			if err := w.create(m, &aimemoryv1.StoreMemoryResponse{}); err != nil {
				return err
			}
			id, resp.Created = m.Id, true
		} else {
			ent, err := w.get(id)
			if err != nil {
				return err
			}
			if err := w.authorize(storage.Write{Op: storage.OpAlias, Old: ent, New: ent}); err != nil {
				return err
			}
		}
		for i, a := range aliases {
			if err := w.addAlias(id, ns, a.text, folded[i], by); err != nil {
				return err
			}
		}
		ent, err := w.get(id)
		if err != nil {
			return err
		}
		resp.Entity, err = entityOf(w.tx, ent)
		return err
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// GetEntityByAlias resolves an alias (case-folded) in a namespace, or in
// every namespace, where the most recently created entity wins. No entity
// is an empty response, not an error.
func (s *Store) GetEntityByAlias(ctx context.Context, req *aimemoryv1.GetEntityByAliasRequest) (*aimemoryv1.GetEntityByAliasResponse, error) {
	alias := strings.TrimSpace(req.GetAlias())
	ns := strings.TrimSpace(req.GetNamespace())
	if err := record.ValidateAlias("alias", alias); err != nil {
		return nil, err
	}
	if ns != "" {
		if err := record.ValidateNamespace("namespace", ns); err != nil {
			return nil, err
		}
	}
	f := rules.FoldAlias(alias)
	resp := &aimemoryv1.GetEntityByAliasResponse{}
	err := s.db.View(func(tx *bolt.Tx) error {
		var ids []string
		if ns != "" {
			if id := aliasHolder(tx, f, ns); id != "" {
				ids = append(ids, id)
			}
		} else {
			prefix := append([]byte(f), 0)
			c := tx.Bucket(bucketAliases).Cursor()
			for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
				ids = append(ids, string(v))
			}
		}
		var best *aimemoryv1.Memory
		for _, id := range ids {
			raw := tx.Bucket(bucketMemories).Get([]byte(id))
			if raw == nil {
				return fmt.Errorf("alias index names missing memory %s", id)
			}
			m, err := decodeMemory(raw)
			if err != nil {
				return err
			}
			if !storage.Readable(ctx, m.Namespace) {
				continue // outside the caller's scope, or another's inbox
			}
			if best == nil || m.CreatedAt > best.CreatedAt || (m.CreatedAt == best.CreatedAt && m.Id < best.Id) {
				best = m
			}
		}
		if best == nil {
			return nil
		}
		var err error
		resp.Entity, err = entityOf(tx, best)
		return err
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// removeEntity drops the alias rows of m, if it is an entity, in the
// transaction that deletes it.
func (w *writeTx) removeEntity(m *aimemoryv1.Memory) error {
	folded, _, err := aliasesOf(w.tx, m.Id)
	if err != nil {
		return err
	}
	aliases, ea := w.tx.Bucket(bucketAliases), w.tx.Bucket(bucketEntityAliases)
	for _, f := range folded {
		ak := aliasKey(f, m.Namespace)
		if bytes.Equal(aliases.Get(ak), []byte(m.Id)) {
			if err := aliases.Delete(ak); err != nil {
				return err
			}
		}
		if err := ea.Delete(entityAliasKey(m.Id, f)); err != nil {
			return err
		}
	}
	return nil
}

// moveEntity keeps an entity's aliases right when an update changes its
// namespace (the aliases move with it, and must be free there) or its
// title (the new canonical name becomes an alias too; the old stays).
func (w *writeTx) moveEntity(old, m *aimemoryv1.Memory) error {
	if old.Namespace == m.Namespace && old.Title == m.Title {
		return nil
	}
	folded, rows, err := aliasesOf(w.tx, m.Id)
	if err != nil || len(folded) == 0 {
		return err
	}
	if old.Namespace != m.Namespace {
		for i, f := range folded {
			if _, err := w.claim("namespace", rows[i].Alias, m.Namespace, m.Id); err != nil {
				return err
			}
			aliases := w.tx.Bucket(bucketAliases)
			if err := aliases.Delete(aliasKey(f, old.Namespace)); err != nil {
				return err
			}
			if err := aliases.Put(aliasKey(f, m.Namespace), []byte(m.Id)); err != nil {
				return err
			}
		}
	}
	if old.Title != m.Title {
		f, err := w.claim("title", m.Title, m.Namespace, m.Id)
		if err != nil {
			return err
		}
		by := rows[0].AddedBy
		return w.addAlias(m.Id, m.Namespace, m.Title, f, by)
	}
	return nil
}

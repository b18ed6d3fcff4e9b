package boltstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
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
	slices.SortFunc(all, func(x, y pair) int { return ops.AliasOrder(x.a, y.a) })
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
	return ops.EntityOf(m, rows), nil
}

// aliasHolder is the entity holding folded in namespace ("" = none).
func aliasHolder(tx *bolt.Tx, folded, namespace string) string {
	return string(tx.Bucket(bucketAliases).Get(aliasKey(folded, namespace)))
}

// The entity steps' view of the transaction (ops.EntityTx).
func (t opsTx) IsEntity(id string) (bool, error) { return isEntity(t.w.tx, id), nil }
func (t opsTx) AliasHolder(folded, namespace string) (string, error) {
	return aliasHolder(t.w.tx, folded, namespace), nil
}
func (t opsTx) Aliases(id string) ([]string, []*aimemoryv1.EntityAlias, error) {
	return aliasesOf(t.w.tx, id)
}

func (t opsTx) AddAlias(id, namespace, f string, a *aimemoryv1.EntityAlias) error {
	ek := entityAliasKey(id, f)
	ea := t.w.tx.Bucket(bucketEntityAliases)
	if ea.Get(ek) != nil {
		return nil
	}
	if err := ea.Put(ek, encodeAliasRow(a)); err != nil {
		return err
	}
	return t.w.tx.Bucket(bucketAliases).Put(aliasKey(f, namespace), []byte(id))
}

func (t opsTx) MoveAlias(id, f, from, to string) error {
	aliases := t.w.tx.Bucket(bucketAliases)
	if err := aliases.Delete(aliasKey(f, from)); err != nil {
		return err
	}
	return aliases.Put(aliasKey(f, to), []byte(id))
}

// RegisterEntity creates the entity (canonical_name, namespace), or reuses
// it when it exists (its metadata left as it is), and adds the aliases it
// lacks; all in one transaction, so an alias held by another entity of the
// namespace (storage.AliasTakenError) writes nothing. A memory with the same title
// that is not an entity blocks registration.
func (s *Store) RegisterEntity(ctx context.Context, req *aimemoryv1.RegisterEntityRequest) (*aimemoryv1.RegisterEntityResponse, error) {
	in, err := ops.ValidateRegisterEntity(ctx, req)
	if err != nil {
		return nil, err
	}
	var resp *aimemoryv1.RegisterEntityResponse
	err = s.write(ctx, func(w *writeTx) error {
		resp = &aimemoryv1.RegisterEntityResponse{}
		return ops.RegisterEntity(opsTx{w}, in, resp)
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
	f, ns, err := ops.ValidateEntityLookup(req)
	if err != nil {
		return nil, err
	}
	resp := &aimemoryv1.GetEntityByAliasResponse{}
	err = s.db.View(func(tx *bolt.Tx) error {
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
			m, err := decodeLive(raw)
			if err != nil {
				return err
			}
			if !authz.Of(ctx).Reads(m.Namespace) {
				continue // outside the caller's scope, or another's inbox
			}
			if ops.Newer(m, best) {
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
// namespace or title (ops.MoveEntity).
func (w *writeTx) moveEntity(old, m *aimemoryv1.Memory) error {
	return ops.MoveEntity(opsTx{w}, old, m)
}

package boltstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"

	bolt "go.etcd.io/bbolt"

	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
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

// aliasHolder is the entity holding folded in namespace ("" = none).
func aliasHolder(tx *bolt.Tx, folded, namespace string) string {
	return string(tx.Bucket(bucketAliases).Get(aliasKey(folded, namespace)))
}

// The entity steps' view of the transaction (ops.EntityTx).
func (t opsTx) AliasHolder(folded, namespace string) (string, error) {
	return aliasHolder(t.w.tx, folded, namespace), nil
}

// AliasHolders is the entities holding folded in any namespace (seam.Tx).
func (t opsTx) AliasHolders(folded string) ([]string, error) {
	var ids []string
	prefix := append([]byte(folded), 0)
	c := t.w.tx.Bucket(bucketAliases).Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		ids = append(ids, string(v))
	}
	return ids, nil
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

package ops

import (
	"context"
	"fmt"
	"strings"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Entities (family-graph §1.5, with the changes): an entity is a
// memory registered by RegisterEntity (long tier, title = content = the
// canonical name, tag "entity", metadata.kind "entity") that has aliases.
// Having alias rows is what makes a memory an entity: metadata can be
// edited by any writer, the alias rows only by the engine. An alias is
// unique per namespace under rules.FoldAlias; the canonical name is itself
// an alias. Deleting the memory removes its rows; moving or renaming it
// moves them (MoveEntity).

// EntityTx is what the entity steps need of a backend's write transaction.
type EntityTx interface {
	Tx
	// AliasHolder is the entity holding folded in namespace ("" = none).
	AliasHolder(folded, namespace string) (string, error)
	// Aliases is the alias set of entity id with the folded forms, in the
	// order they were added, then alphabetically (AliasOrder).
	Aliases(id string) (folded []string, rows []*aimemoryv1.EntityAlias, err error)
	// AddAlias gives entity id the alias row a (folded f) in namespace
	// unless it already has f; the claim must have passed.
	AddAlias(id, namespace, f string, a *aimemoryv1.EntityAlias) error
	// MoveAlias re-keys entity id's alias f from one namespace to another.
	MoveAlias(id, f, from, to string) error
}

// AliasOrder orders an entity's alias rows: by when added, then by text.
func AliasOrder(x, y *aimemoryv1.EntityAlias) int {
	if x.AddedAt != y.AddedAt {
		if x.AddedAt < y.AddedAt {
			return -1
		}
		return 1
	}
	return strings.Compare(x.Alias, y.Alias)
}

// EntityRequest is a validated RegisterEntity request.
type EntityRequest struct {
	Name, Namespace string
	Aliases         []Alias // the canonical name first
	By              string
	Memory          *aimemoryv1.Memory // the memory of a new entity (rules.EntityMemory)
}

// Alias is an alias to claim with the request field it came from.
type Alias struct{ Field, Text string }

// ValidateRegisterEntity checks a RegisterEntity request (names trimmed);
// who registers is the verified caller of ctx.
func ValidateRegisterEntity(ctx context.Context, req *aimemoryv1.RegisterEntityRequest) (*EntityRequest, error) {
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
	aliases := []Alias{{"canonical_name", name}}
	for i, a := range req.GetAliases() {
		a = strings.TrimSpace(a)
		field := fmt.Sprintf("aliases[%d]", i)
		if err := record.ValidateAlias(field, a); err != nil {
			return nil, err
		}
		aliases = append(aliases, Alias{field, a})
	}
	by := storage.Principal(ctx)
	if err := record.ValidateAgentID("registered_by", by); err != nil {
		return nil, err
	}
	m, err := rules.EntityMemory(name, ns, req.GetMetadataJson())
	if err != nil {
		return nil, err
	}
	return &EntityRequest{Name: name, Namespace: ns, Aliases: aliases, By: by, Memory: m}, nil
}

// ValidateEntityLookup checks a GetEntityByAlias request, returning the
// folded alias and the namespace ("" = every namespace).
func ValidateEntityLookup(req *aimemoryv1.GetEntityByAliasRequest) (folded, ns string, err error) {
	alias := strings.TrimSpace(req.GetAlias())
	ns = strings.TrimSpace(req.GetNamespace())
	if err := record.ValidateAlias("alias", alias); err != nil {
		return "", "", err
	}
	if ns != "" {
		if err := record.ValidateNamespace("namespace", ns); err != nil {
			return "", "", err
		}
	}
	return rules.FoldAlias(alias), ns, nil
}

// Newer reports whether entity memory m beats best for an alias asked in
// every namespace: the most recently created wins, then the smaller id.
func Newer(m, best *aimemoryv1.Memory) bool {
	return best == nil || m.CreatedAt > best.CreatedAt || (m.CreatedAt == best.CreatedAt && m.Id < best.Id)
}

// Claim checks that alias (field) is free in namespace or already held by
// id, returning its folded form.
func Claim(tx EntityTx, field, alias, namespace, id string) (string, error) {
	f := rules.FoldAlias(alias)
	holder, err := tx.AliasHolder(f, namespace)
	if err != nil {
		return "", err
	}
	if holder == "" || holder == id {
		return f, nil
	}
	name := "?"
	if m, err := tx.Get(holder); err != nil {
		return "", err
	} else if m != nil {
		name = m.Title
	}
	return "", &storage.AliasTakenError{Field: field, Alias: alias, Namespace: namespace, EntityID: holder, EntityName: name}
}

// EntityOf is the entity memory m is, with its alias rows (AliasOrder).
func EntityOf(m *aimemoryv1.Memory, aliases []*aimemoryv1.EntityAlias) *aimemoryv1.Entity {
	return &aimemoryv1.Entity{Id: m.Id, CanonicalName: m.Title, Namespace: m.Namespace, Aliases: aliases, CreatedAt: m.CreatedAt}
}

// RegisterEntity is RegisterEntity inside tx: it creates the entity
// (canonical_name, namespace), or reuses it when it exists (its metadata
// left as it is), and adds the aliases it lacks, so an alias held by
// another entity of the namespace (storage.AliasTakenError) writes
// nothing. A memory with the same title that is not an entity blocks it.
func RegisterEntity(tx EntityTx, in *EntityRequest, resp *aimemoryv1.RegisterEntityResponse) error {
	// A run may be repeated (group commit, a retried transaction): change
	// a copy, answer afresh.
	m := rules.Clone(in.Memory)
	if err := writable(tx, storage.OpAlias, in.Namespace); err != nil {
		return err // a taken alias would name its entity
	}
	id, err := tx.TitleOwner(in.Namespace, in.Name)
	if err != nil {
		return err
	}
	if id != "" {
		folded, _, err := tx.Aliases(id)
		if err != nil {
			return err
		}
		if len(folded) == 0 { // a memory, not an entity
			return &storage.AliasTakenError{Field: "canonical_name", Alias: in.Name, Namespace: in.Namespace, EntityID: id}
		}
	}
	folded := make([]string, len(in.Aliases))
	for i, a := range in.Aliases {
		f, err := Claim(tx, a.Field, a.Text, in.Namespace, id)
		if err != nil {
			return err
		}
		folded[i] = f
	}
	if id == "" {
		if err := Create(tx, m, &aimemoryv1.StoreMemoryResponse{}); err != nil {
			return err
		}
		id, resp.Created = m.Id, true
	} else {
		ent, err := tx.Get(id)
		if err != nil {
			return err
		}
		if err := tx.Authorize(storage.Write{Op: storage.OpAlias, Old: ent, New: ent}); err != nil {
			return err
		}
	}
	for i, a := range in.Aliases {
		row := &aimemoryv1.EntityAlias{Alias: a.Text, AddedAt: tx.Now(), AddedBy: in.By}
		if err := tx.AddAlias(id, in.Namespace, folded[i], row); err != nil {
			return err
		}
	}
	ent, err := tx.Get(id)
	if err != nil {
		return err
	}
	_, rows, err := tx.Aliases(id)
	if err != nil {
		return err
	}
	resp.Entity = EntityOf(ent, rows)
	return nil
}

// MoveEntity keeps an entity's aliases right when an update changes its
// namespace (the aliases move with it, and must be free there) or its
// title (the new canonical name becomes an alias too; the old stays):
// what a backend's Tx.Moved does.
func MoveEntity(tx EntityTx, old, m *aimemoryv1.Memory) error {
	if old.Namespace == m.Namespace && old.Title == m.Title {
		return nil
	}
	folded, rows, err := tx.Aliases(m.Id)
	if err != nil || len(folded) == 0 {
		return err
	}
	if old.Namespace != m.Namespace {
		for i, f := range folded {
			if _, err := Claim(tx, "namespace", rows[i].Alias, m.Namespace, m.Id); err != nil {
				return err
			}
			if err := tx.MoveAlias(m.Id, f, old.Namespace, m.Namespace); err != nil {
				return err
			}
		}
	}
	if old.Title != m.Title {
		f, err := Claim(tx, "title", m.Title, m.Namespace, m.Id)
		if err != nil {
			return err
		}
		return tx.AddAlias(m.Id, m.Namespace, f, &aimemoryv1.EntityAlias{Alias: m.Title, AddedAt: tx.Now(), AddedBy: rows[0].AddedBy})
	}
	return nil
}

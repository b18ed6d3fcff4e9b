package sdk

import (
	"context"
	"slices"
	"strings"

	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// StorageKeys is how many keys a Storage holds at most: it reads the
// keyspace whole, so it suits a family's settings and small state; what
// grows with use belongs in memories of the keyspace (Engine.Store).
const StorageKeys = 1000

// Storage is a family's keyspace as a key-value store (a view over the
// memories of Keyspace(family): a key is a memory's title, its value the
// content). The engine lets only the family's own tool calls read or write
// it, so a value is the family's, whoever the caller is.
type Storage struct {
	e  *Engine
	ns string
}

// Storage returns family's key-value view. Its calls need a tool call's
// ctx of that family, as every engine call does.
func (e *Engine) Storage(family string) *Storage { return &Storage{e: e, ns: Keyspace(family)} }

// entries lists the keyspace's live memories, refusing to answer from a
// partial read.
func (s *Storage) entries(ctx context.Context) ([]*aimemoryv1.Memory, error) {
	r, err := s.e.w.ListMemories(ctx, &aimemoryv1.ListMemoriesRequest{Limit: StorageKeys + 1, Filter: &aimemoryv1.Filter{Namespace: s.ns}})
	if err != nil {
		return nil, EngineError(err)
	}
	if len(r.GetMemories()) > StorageKeys {
		return nil, Errorf("%s holds more than %d keys; a Storage reads at most that many", s.ns, StorageKeys)
	}
	return r.GetMemories(), nil
}

func (s *Storage) find(ctx context.Context, key string) (*aimemoryv1.Memory, error) {
	all, err := s.entries(ctx)
	if err != nil {
		return nil, err
	}
	for _, m := range all {
		if m.GetTitle() == key {
			return m, nil
		}
	}
	return nil, nil
}

// Get returns the value of key, and whether it is set.
func (s *Storage) Get(ctx context.Context, key string) (string, bool, error) {
	m, err := s.find(ctx, key)
	if m == nil || err != nil {
		return "", false, err
	}
	return m.GetContent(), true, nil
}

// Put sets key to value (the engine's title and content rules apply: a
// key is a non-empty line, a value non-empty text).
func (s *Storage) Put(ctx context.Context, key, value string) error {
	_, err := s.e.w.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{OnConflict: aimemoryv1.ConflictPolicy_CONFLICT_POLICY_MERGE,
		Memory: &aimemoryv1.Memory{Title: key, Content: value, Namespace: s.ns, Tier: "long"}})
	if err != nil {
		return EngineError(err)
	}
	return nil
}

// Delete removes key; deleting a key that is not set changes nothing.
func (s *Storage) Delete(ctx context.Context, key string) error {
	m, err := s.find(ctx, key)
	if m == nil || err != nil {
		return err
	}
	if _, err := s.e.w.DeleteMemories(ctx, &aimemoryv1.DeleteMemoriesRequest{Ids: []string{m.GetId()}}); err != nil {
		return EngineError(err)
	}
	return nil
}

// List returns the keys starting with prefix, sorted.
func (s *Storage) List(ctx context.Context, prefix string) ([]string, error) {
	all, err := s.entries(ctx)
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, m := range all {
		if strings.HasPrefix(m.GetTitle(), prefix) {
			keys = append(keys, m.GetTitle())
		}
	}
	slices.Sort(keys)
	return keys, nil
}

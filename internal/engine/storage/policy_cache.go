package storage

import (
	"sync"

	"github.com/ai-memory/ai-memory/internal/engine/governance"
)

// storedPolicies caches parsed stored policies by their JSON: every
// governed write resolves its namespace's policy, and parsing it each
// time was most of the check's cost. A stored policy was valid when it was
// written and Policy is a plain value, so a cached copy is the parse.
var storedPolicies = struct {
	sync.Mutex
	m map[string]governance.Policy
}{m: map[string]governance.Policy{}}

// maxCachedPolicies bounds the cache (a data dir has a few policies; the
// bound only keeps a pathological one from growing it without end).
const maxCachedPolicies = 1024

// parseStored is governance.Parse of a stored policy, cached.
func parseStored(raw string) (governance.Policy, error) {
	storedPolicies.Lock()
	p, ok := storedPolicies.m[raw]
	storedPolicies.Unlock()
	if ok {
		return p, nil
	}
	p, err := governance.Parse([]byte(raw))
	if err != nil {
		return p, err
	}
	storedPolicies.Lock()
	if len(storedPolicies.m) >= maxCachedPolicies {
		clear(storedPolicies.m)
	}
	storedPolicies.m[raw] = p
	storedPolicies.Unlock()
	return p, nil
}

package governance

import "strings"

// Global is the namespace of the global standard, the root of every chain.
const Global = "*"

// maxParentHops bounds the walk along explicit parents (data-model §12).
const maxParentHops = 8

// Chain is the standards chain of ns, most general first (data-model §12):
// "*", then the explicit parents reached from ns's root segment (walked
// upwards, at most 8 hops, cycle-safe, stopping at "*"), inserted top-down,
// then ns's '/'-ancestors from the root to ns itself; duplicates skipped.
// parent is the recorded parent of a namespace ("" for none).
func Chain(ns string, parent func(string) string) []string {
	out := []string{Global}
	seen := map[string]bool{Global: true}
	add := func(n string) {
		if n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	if ns == "" || ns == Global {
		return out
	}
	root, _, _ := strings.Cut(ns, "/")
	var ups []string
	visited := map[string]bool{root: true}
	for cur, hops := root, 0; hops < maxParentHops; hops++ {
		p := parent(cur)
		if p == "" || p == Global || visited[p] {
			break
		}
		visited[p] = true
		ups = append(ups, p)
		cur = p
	}
	for i := len(ups) - 1; i >= 0; i-- {
		add(ups[i])
	}
	segs := strings.Split(ns, "/")
	for i := range segs {
		add(strings.Join(segs[:i+1], "/"))
	}
	return out
}

// ParentCandidates are the namespaces an unset parent is auto-detected
// from, nearest first: ns with trailing "-segment"s stripped
// ("ai-memory-tests" → "ai-memory", "ai"). The first with a standard wins.
func ParentCandidates(ns string) []string {
	var out []string
	for {
		i := strings.LastIndexByte(ns, '-')
		if i <= 0 {
			return out
		}
		ns = ns[:i]
		out = append(out, ns)
	}
}

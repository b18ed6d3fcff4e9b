package graphfamily

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/ai-memory/ai-memory/sdk"
	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Taxonomy limits (family-graph §9).
const (
	defaultTaxonomyDepth = record.MaxNamespaceSegs
	defaultTaxonomyLimit = 1000
	maxTaxonomyLimit     = 10000
)

var taxonomyArgs = argNames(taxonomySchema)

type taxonomyParams struct {
	prefix string
	depth  int
	limit  int
}

// node is one namespace of the tree. The root carries the prefix as
// namespace; below it each node has its last segment as name (its full
// namespace is the path of names). count: live memories at exactly this
// namespace; subtree_count: those plus the visible descendants'.
type node struct {
	Namespace    string  `json:"namespace,omitempty"`
	Name         string  `json:"name,omitempty"`
	Count        uint64  `json:"count,omitempty"`
	SubtreeCount uint64  `json:"subtree_count"`
	Children     []*node `json:"children,omitempty"`
	byName       map[string]*node
}

type taxonomyResult struct {
	Tree       *node  `json:"tree"`
	TotalCount uint64 `json:"total_count"`
	Truncated  bool   `json:"truncated,omitempty"`
}

func parseTaxonomy(raw []byte) (*taxonomyParams, error) {
	a, err := sdk.ParseArgs(raw, taxonomyArgs)
	if err != nil {
		return nil, err
	}
	p := &taxonomyParams{}
	// The one namespace rule, as sent: "a/b/" and " " are errors, not
	// quietly a/b and the whole tree (the reference stripped and trimmed).
	if p.prefix, err = a.NamespaceFilter("namespace_prefix"); err != nil {
		return nil, err
	}
	depth, err := a.Integer("depth", defaultTaxonomyDepth, 0, record.MaxNamespaceSegs)
	if err != nil {
		return nil, err
	}
	limit, err := a.Integer("limit", defaultTaxonomyLimit, 1, maxTaxonomyLimit)
	if err != nil {
		return nil, err
	}
	p.depth, p.limit = int(depth), int(limit)
	return p, nil
}

func (s *service) taxonomy(ctx context.Context, call sdk.Call) (any, error) {
	p, err := parseTaxonomy(call.Arguments)
	if err != nil {
		return nil, err
	}
	resp, err := s.eng.CountNamespaces(ctx, &aimemoryv1.CountNamespacesRequest{Prefix: p.prefix, Limit: uint32(p.limit)})
	if err != nil {
		return nil, sdk.EngineError(err)
	}
	return buildTree(p, resp), nil
}

// buildTree folds the densest namespaces (the engine kept at most limit)
// into a tree under the prefix, family-graph §9 steps 4–6: a namespace
// adds its count to the subtree_count of the root and of every visible
// node on its path, and to the count of its own node only when that node
// is visible (no deeper than depth below the prefix). Unlike the reference
// at depth 0, the root's count is only the memories at the prefix itself.
func buildTree(p *taxonomyParams, resp *aimemoryv1.CountNamespacesResponse) *taxonomyResult {
	root := &node{Namespace: p.prefix}
	var kept uint64
	for _, g := range resp.GetNamespaces() {
		kept += g.GetCount()
		rest := strings.TrimPrefix(strings.TrimPrefix(g.GetKey(), p.prefix), "/")
		var segs []string
		if rest != "" {
			segs = strings.Split(rest, "/")
		}
		root.SubtreeCount += g.GetCount()
		cur := root
		for i, seg := range segs {
			if i == p.depth {
				break
			}
			cur = cur.child(seg)
			cur.SubtreeCount += g.GetCount()
		}
		if len(segs) <= p.depth {
			cur.Count += g.GetCount()
		}
	}
	root.sort()
	return &taxonomyResult{Tree: root, TotalCount: resp.GetTotal(), Truncated: kept < resp.GetTotal()}
}

func (n *node) child(name string) *node {
	if c := n.byName[name]; c != nil {
		return c
	}
	if n.byName == nil {
		n.byName = map[string]*node{}
	}
	c := &node{Name: name}
	n.byName[name] = c
	n.Children = append(n.Children, c)
	return c
}

func (n *node) sort() {
	slices.SortFunc(n.Children, func(a, b *node) int { return cmp.Compare(a.Name, b.Name) })
	for _, c := range n.Children {
		c.sort()
	}
}

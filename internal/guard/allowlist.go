// Package guard decides which families a session identity may use: the
// per-agent allowlist of config.toml [mcp.allowlist] and the rate limit on
// mid-session expansion.
package guard

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/ai-memory/ai-memory/internal/catalog"
	"github.com/ai-memory/ai-memory/sdk"
)

// Allowlist maps agent-id patterns to the families they may use. The zero
// value (no table) allows everything: a single operator needs no gate.
type Allowlist struct {
	rows map[string][]string // pattern → expanded families
	keys []string            // non-"*" patterns, longest first
	set  *catalog.Set
	// limit, when non-nil, is the families a credential grants (an HTTP
	// token's families): the table's answer is intersected with it.
	limit []string
	// attest and level: the attestation each family needs, and the
	// principal's (see Attested).
	attest Attestation
	level  int
}

// CredentialRule is the Decision.Rule of a family the table allows but the
// principal's credential does not grant.
const CredentialRule = "credential"

// Within returns the allowlist limited to families (a credential's grant):
// a family outside them is denied whatever the table says. nil = no limit.
func (a Allowlist) Within(families []string) Allowlist {
	if families == nil {
		return a
	}
	a.limit = append([]string{}, families...)
	return a
}

// NewAllowlist validates a table against the host's family set: each value
// is a list of profile and family names ("full" = all, "admin" =
// core+lifecycle+governance; a family names itself only). Unknown names are
// an error naming the row, so a typo never silently denies or allows.
func NewAllowlist(table map[string][]string, set *catalog.Set) (Allowlist, error) {
	a := Allowlist{rows: map[string][]string{}, set: set}
	for pattern, names := range table {
		fams, err := catalog.ExpandNames(names, set)
		if err != nil {
			return Allowlist{}, fmt.Errorf("[mcp.allowlist] %s: %w", sdk.Quote(pattern), err)
		}
		a.rows[pattern] = fams
		if pattern != "*" {
			a.keys = append(a.keys, pattern)
		}
	}
	sort.Slice(a.keys, func(i, j int) bool { return len(a.keys[i]) > len(a.keys[j]) })
	return a, nil
}

// Enabled reports whether a table, a credential limit or an attestation
// requirement applies.
func (a Allowlist) Enabled() bool { return len(a.rows) > 0 || a.limit != nil || a.attest != nil }

// Decision is the outcome for one identity and family, and the row that decided it.
type Decision struct {
	Allowed bool
	Rule    string // the matching pattern, "*", "" (no table) or "none"
	Need    string // for AttestationRule: the level the family requires
}

// Decide applies: no table → allow; exact key; else the longest key that is
// a plain prefix of the identity; else "*"; else deny.
func (a Allowlist) Decide(agentID, family string) Decision {
	if a.attest[family] > a.level {
		return Decision{Allowed: false, Rule: AttestationRule, Need: AttestationLevels[a.attest[family]]}
	}
	if a.limit != nil && !slices.Contains(a.limit, family) {
		return Decision{Allowed: false, Rule: CredentialRule}
	}
	if len(a.rows) == 0 {
		return Decision{Allowed: true}
	}
	rule := ""
	if _, ok := a.rows[agentID]; ok {
		rule = agentID
	} else {
		for _, k := range a.keys {
			if strings.HasPrefix(agentID, k) {
				rule = k
				break
			}
		}
	}
	if rule == "" {
		if _, ok := a.rows["*"]; !ok {
			return Decision{Allowed: false, Rule: "none"}
		}
		rule = "*"
	}
	return Decision{Allowed: slices.Contains(a.rows[rule], family), Rule: rule}
}

// Allowed lists the families an identity is cleared for, in canonical order.
func (a Allowlist) Allowed(agentID string) []string {
	if a.set == nil {
		return nil
	}
	var out []string
	for _, f := range a.set.Families() {
		if a.Decide(agentID, f).Allowed {
			out = append(out, f)
		}
	}
	return out
}

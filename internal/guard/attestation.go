package guard

import (
	"fmt"
	"slices"
	"sort"

	"github.com/ai-memory/ai-memory/internal/catalog"
	"github.com/ai-memory/ai-memory/sdk"
)

// Attestation levels, weakest first: how an HTTP principal was identified.
// "none" is a claimed identity (an unauthenticated loopback client).
var AttestationLevels = []string{"none", "token", "oauth", "mtls"}

// AttestationRule is the Decision.Rule of a family that needs a stronger
// attestation than the principal's.
const AttestationRule = "attestation"

// Attestation is [mcp.attestation]: the least attestation level each
// family requires of an HTTP principal.
type Attestation map[string]int

// NewAttestation validates the table: family (or profile) names → level.
func NewAttestation(table map[string]string, set *catalog.Set) (Attestation, error) {
	a := Attestation{}
	keys := make([]string, 0, len(table))
	for k := range table {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, name := range keys {
		level := slices.Index(AttestationLevels, table[name])
		if level < 0 {
			return nil, fmt.Errorf("[mcp.attestation] %s: level %s: must be one of none, token, oauth, mtls", sdk.Quote(name), sdk.Quote(table[name]))
		}
		fams, err := catalog.ExpandNames([]string{name}, set)
		if err != nil {
			return nil, fmt.Errorf("[mcp.attestation] %s: %w", sdk.Quote(name), err)
		}
		for _, f := range fams {
			a[f] = max(a[f], level)
		}
	}
	return a, nil
}

// Required is the level family needs ("none" if the table says nothing).
func (a Attestation) Required(family string) string { return AttestationLevels[a[family]] }

// Attested returns the allowlist for a principal identified at level: a
// family that needs more is denied (Rule AttestationRule) whatever the
// table says.
func (a Allowlist) Attested(req Attestation, level string) Allowlist {
	if len(req) == 0 {
		return a
	}
	a.attest, a.level = req, max(0, slices.Index(AttestationLevels, level))
	return a
}

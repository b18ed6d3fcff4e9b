package corefamily

import "github.com/ai-memory/ai-memory/sdk"

// tokenCounter counts cl100k_base tokens, the unit of recall's budget,
// with the counter every budget and doctor --tokens use (sdk.CountTokens).
type tokenCounter struct{}

// count returns the number of cl100k_base tokens in s.
func (t *tokenCounter) count(s string) (int, error) { return sdk.CountTokens(s) }

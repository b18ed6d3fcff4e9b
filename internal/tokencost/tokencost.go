// Package tokencost counts what a tool surface costs a model, in real
// cl100k_base tokens (pure Go, ranks embedded: nothing is downloaded).
package tokencost

import "github.com/ai-memory/ai-memory/sdk"

// Count returns the cl100k_base token count of s, with the counter
// plugins use for their budgets (sdk.CountTokens).
func Count(s string) int {
	n, err := sdk.CountTokens(s)
	if err != nil {
		return 0
	}
	return n
}

// Package tokencost counts what a tool surface costs a model, in real
// cl100k_base tokens (pure Go, ranks embedded: nothing is downloaded).
// The counter is the SDK's, so a family measures what doctor reports.
package tokencost

import "github.com/ai-memory/ai-memory/sdk/tokens"

// Count returns the cl100k_base token count of s.
func Count(s string) int { return tokens.Count(s) }

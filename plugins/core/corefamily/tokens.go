package corefamily

import "github.com/ai-memory/ai-memory/sdk/tokens"

// tokenCounter counts cl100k_base tokens, the unit of recall's budget: the
// SDK's counter, the one doctor --tokens uses.
type tokenCounter struct{}

// count returns the number of cl100k_base tokens in s.
func (tokenCounter) count(s string) (int, error) { return tokens.Count(s), nil }

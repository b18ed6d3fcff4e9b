package sdk

import (
	"sync"

	"github.com/tiktoken-go/tokenizer/codec"
)

var cl100k = sync.OnceValue(codec.NewCl100kBase)

// CountTokens returns the cl100k_base token count of s: the counter
// `ai-memory doctor --tokens` uses (pure Go, ranks embedded, nothing is
// downloaded). A family checks what its tool definitions and results
// cost a model with it.
func CountTokens(s string) int {
	n, err := cl100k().Count(s)
	if err != nil {
		return 0
	}
	return n
}

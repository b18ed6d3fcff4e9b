// Package tokens counts what text costs a model, in cl100k_base tokens: the
// counter `ai-memory doctor --tokens` uses (pure Go, ranks embedded,
// nothing is downloaded). It is its own package because its tables add
// megabytes to a binary: only what counts tokens imports it.
package tokens

import (
	"sync"

	"github.com/tiktoken-go/tokenizer/codec"
)

var cl100k = sync.OnceValue(codec.NewCl100kBase)

// Count returns the cl100k_base token count of s. A family checks what its
// tool definitions and results cost a model with it.
func Count(s string) int {
	n, err := cl100k().Count(s)
	if err != nil {
		return 0
	}
	return n
}

// Package tokencost counts what a tool surface costs a model, in real
// cl100k_base tokens (pure Go, ranks embedded: nothing is downloaded).
package tokencost

import (
	"sync"

	"github.com/tiktoken-go/tokenizer/codec"
)

var cl100k = sync.OnceValue(codec.NewCl100kBase)

// Count returns the cl100k_base token count of s.
func Count(s string) int {
	n, err := cl100k().Count(s)
	if err != nil {
		return 0
	}
	return n
}

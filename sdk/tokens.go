package sdk

import (
	"sync"

	"github.com/tiktoken-go/tokenizer/codec"
)

// cl100k is the cl100k_base codec: its ranks are embedded (nothing is
// downloaded); building them costs tens of milliseconds, once.
var cl100k = sync.OnceValue(codec.NewCl100kBase)

// CountTokens is the number of cl100k_base tokens in s: the unit of every
// token budget and of `ai-memory doctor --tokens`, one counter for both.
func CountTokens(s string) (int, error) { return cl100k().Count(s) }

package corefamily

import (
	"sync"

	"github.com/tiktoken-go/tokenizer/codec"
)

// tokenCounter counts cl100k_base tokens, the unit of recall's budget. The
// codec's ranks are embedded (no download); building them costs tens of
// milliseconds, so it happens once, on the first budgeted recall.
type tokenCounter struct {
	once  sync.Once
	codec *codec.Codec
}

// count returns the number of cl100k_base tokens in s.
func (t *tokenCounter) count(s string) (int, error) {
	t.once.Do(func() { t.codec = codec.NewCl100kBase() })
	return t.codec.Count(s)
}

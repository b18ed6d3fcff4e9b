package sdk

import "github.com/ai-memory/ai-memory/sdk/record"

// Quote renders a bad value for an error message: at most 64 characters of
// it, quoted, then its size. The rule lives in sdk/record, whose own errors
// quote values too and which cannot import this package.
func Quote(s string) string { return record.Quote(s) }

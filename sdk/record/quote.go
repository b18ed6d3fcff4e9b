package record

import (
	"fmt"
	"strconv"
)

// MaxQuotedChars is how much of a bad value an error message repeats.
const MaxQuotedChars = 64

// Quote renders a bad value for an error message: Go-quoted, and when it is
// longer than 64 characters cut there with its size in bytes appended. An
// error must stay short whatever the client sent: a 10 MB value echoed back
// whole once made a client disconnect.
func Quote(s string) string {
	n := 0
	for i := range s {
		if n == MaxQuotedChars {
			return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(s[:i]), len(s))
		}
		n++
	}
	return strconv.Quote(s)
}

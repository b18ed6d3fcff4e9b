package sdk

import (
	"fmt"
	"strconv"
	"unicode/utf8"
)

// QuoteLimit is how many bytes of a bad value an error message shows.
const QuoteLimit = 64

// Quote renders a bad value for an error message: Go-quoted when it is
// short, else its first QuoteLimit bytes (cut on a rune boundary), an
// ellipsis and its size. An error never echoes a 10 MB argument back.
func Quote(s string) string {
	if len(s) <= QuoteLimit {
		return strconv.Quote(s)
	}
	cut := QuoteLimit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(s[:cut]), len(s))
}

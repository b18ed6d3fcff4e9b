package sdk

import (
	"strings"
	"testing"
)

func TestQuote(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", `""`},
		{"graph", `"graph"`},
		{"a\"b\n", `"a\"b\n"`},
		{strings.Repeat("x", 64), `"` + strings.Repeat("x", 64) + `"`},
		{strings.Repeat("x", 65), `"` + strings.Repeat("x", 64) + `"… (65 bytes)`},
		// A cut never splits a rune: 63 ASCII bytes then a 3-byte rune.
		{strings.Repeat("x", 63) + "€€", `"` + strings.Repeat("x", 63) + `"… (69 bytes)`},
		{"\xff\xfe", `"\xff\xfe"`},
	}
	for _, c := range cases {
		if got := Quote(c.in); got != c.want {
			t.Errorf("Quote(%.20q) = %s, want %s", c.in, got, c.want)
		}
	}
	if got := Quote(strings.Repeat("y", 10<<20)); len(got) > 100 || !strings.Contains(got, "(10485760 bytes)") {
		t.Errorf("10 MB value quoted as %d bytes: %.100s", len(got), got)
	}
}

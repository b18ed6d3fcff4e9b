package record

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// What names something (a namespace, an agent type, a standard's owner) is
// compared byte for byte, so what looks the same must be the same:
// "glo\u200bbal" shows as "global" but is another namespace. The identity
// rule therefore asks for NFC and refuses format characters (Unicode Cf:
// zero-width spaces and joiners, direction marks), private-use and
// surrogate code points, and any '/'-separated label that mixes scripts
// beyond UTS #39's moderately restrictive level. An agent id's rule (ASCII
// letters, digits and _ - : @ . /) is stricter still. A title is shown
// rather than compared, so it only refuses format characters, bidi
// controls among them, except the two joiners that emoji sequences and
// Persian or Indic words need.

// identityRule is the identity rule s breaks, "" if none; s is valid UTF-8.
func identityRule(s string) string {
	if isASCII(s) { // NFC, no format character, one script: the common case costs a scan
		return ""
	}
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Cf, r):
			return "must not contain format characters (Unicode Cf: zero-width spaces and joiners, direction marks)"
		case unicode.Is(unicode.Co, r):
			return "must not contain private-use characters"
		case unicode.Is(unicode.Cs, r):
			return "must not contain surrogate code points"
		}
	}
	if !norm.NFC.IsNormalString(s) {
		return "must be in Unicode normalization form NFC"
	}
	for label := range strings.SplitSeq(s, "/") {
		if mixesScripts(label) {
			return "must not mix scripts within a '/'-separated part (UTS #39 moderately restrictive: one script, Latin with one other but Cyrillic or Greek, or Han with Latin and Japanese kana, Bopomofo or Hangul)"
		}
	}
	return ""
}

// ValidateIdentity applies the identity rule to field's value s (valid
// UTF-8, no control characters, within its length: the caller's rules).
func ValidateIdentity(field, s string) error {
	if !utf8.ValidString(s) {
		return fieldErr(field, "must be valid UTF-8")
	}
	if rule := identityRule(s); rule != "" {
		return fieldErr(field, "%s (got %s)", rule, Quote(s))
	}
	return nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// hasFormatChar reports a format character (Cf) in a title other than the
// joiners ZWNJ and ZWJ.
func hasFormatChar(s string) bool {
	if isASCII(s) {
		return false
	}
	for _, r := range s {
		if r != '\u200c' && r != '\u200d' && unicode.Is(unicode.Cf, r) {
			return true
		}
	}
	return false
}

// mixesScripts reports a label whose characters come from a set of scripts
// UTS #39's moderately restrictive level refuses. Common and Inherited
// (digits, punctuation, combining marks) belong to any script.
func mixesScripts(label string) bool {
	var scripts []string
	for _, r := range label {
		s := scriptOf(r)
		if s != "" && !slices.Contains(scripts, s) {
			scripts = append(scripts, s)
		}
	}
	if len(scripts) < 2 {
		return false
	}
	within := func(allowed ...string) bool {
		for _, s := range scripts {
			if !slices.Contains(allowed, s) {
				return false
			}
		}
		return true
	}
	switch {
	case within("Latin", "Han", "Hiragana", "Katakana"), within("Latin", "Han", "Bopomofo"), within("Latin", "Han", "Hangul"):
		return false
	case len(scripts) == 2 && slices.Contains(scripts, "Latin"):
		return slices.Contains(scripts, "Cyrillic") || slices.Contains(scripts, "Greek")
	}
	return true
}

// frequentScripts are tried before the whole table.
var frequentScripts = []string{"Latin", "Common", "Inherited", "Han", "Cyrillic", "Greek", "Arabic", "Hiragana", "Katakana", "Hangul"}

// scriptOf is r's script, "" for Common, Inherited and unassigned code points.
func scriptOf(r rune) string {
	if r < utf8.RuneSelf {
		if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' {
			return "Latin"
		}
		return ""
	}
	name := ""
	for _, s := range frequentScripts {
		if unicode.Is(unicode.Scripts[s], r) {
			name = s
			break
		}
	}
	if name == "" {
		for s, table := range unicode.Scripts {
			if unicode.Is(table, r) {
				name = s
				break
			}
		}
	}
	if name == "Common" || name == "Inherited" {
		return ""
	}
	return name
}

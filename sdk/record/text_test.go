package record

import (
	"strings"
	"testing"
)

func TestIdentityRule(t *testing.T) {
	for _, tc := range []struct {
		ns   string
		rule string // "" = valid
	}{
		{"global", ""},
		{"café/notes", ""},        // NFC
		{"проект/notes", ""},      // one script per part
		{"日本語abc/カタカナと漢字", ""},    // Han with Latin, Han with kana
		{"한국어abc/中文注音ㄅㄆ", ""},     // Hangul with Latin; Han with Bopomofo
		{"αβγ/مرحباabc/v2-ü", ""}, // Greek alone; Latin with Arabic; digits and marks are any script's
		{"glo\u200bbal", "format characters"},
		{"team\u200d", "format characters"},
		{"\u202egnp", "format characters"},
		{"soft\u00adhyphen", "format characters"},
		{"cafe\u0301", "NFC"},
		{"priv\ue000ate", "private-use"},
		{"p\u0430ypal", "mix scripts"},    // Cyrillic a among Latin
		{"\u03b1bc", "mix scripts"},       // Greek alpha among Latin
		{"жβ", "mix scripts"},             // Cyrillic with Greek
		{"한국어カタカナ", "mix scripts"},        // Hangul with kana, no Han combination holds both
		{"ok/p\u0430ypal", "mix scripts"}, // any part
	} {
		err := ValidateNamespace("namespace", tc.ns)
		switch {
		case tc.rule == "" && err != nil:
			t.Errorf("%q: %v", tc.ns, err)
		case tc.rule != "" && (err == nil || !strings.Contains(err.Error(), tc.rule)):
			t.Errorf("%q: got %v, want the %s rule", tc.ns, err, tc.rule)
		}
	}
	// The error shows what the value holds, invisible characters escaped.
	if err := ValidateNamespace("namespace", "glo\u200bbal"); err == nil || !strings.Contains(err.Error(), `namespace: must not contain format characters`) || !strings.Contains(err.Error(), `(got "glo\u200bbal")`) {
		t.Errorf("zero-width namespace: %v", err)
	}
	if err := ValidateIdentity("agent_type", "hu\u200bman"); err == nil || !strings.HasPrefix(err.Error(), "agent_type: ") {
		t.Errorf("agent_type with a zero-width space: %v", err)
	}
	if err := ValidateIdentity("agent_type", "reviewer bot"); err != nil {
		t.Errorf("plain agent_type: %v", err)
	}
}

func TestTitleFormatCharacters(t *testing.T) {
	for title, ok := range map[string]bool{
		"Deploy rule":                 true,
		"👨\u200d💻 setup":              true, // ZWJ emoji sequence
		"می\u200cخواهم":               true, // Persian ZWNJ
		"Deploy\u200brule":            false,
		"price \u202e01$":             false, // right-to-left override
		"mark\u200e":                  false,
		"\ufeffbyte order mark first": false,
	} {
		if err := ValidateTitle(title); (err == nil) != ok {
			t.Errorf("ValidateTitle(%q) = %v, want ok=%v", title, err, ok)
		}
	}
}

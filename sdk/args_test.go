package sdk

import (
	"strings"
	"testing"
)

func TestArgsStrict(t *testing.T) {
	known := []string{"n", "s", "l", "o"}
	if _, err := ParseArgs([]byte(`{"typo":1}`), known); err == nil || !strings.Contains(err.Error(), `"typo"`) {
		t.Fatalf("unknown argument: %v", err)
	}
	if _, err := ParseArgs([]byte(`[1]`), known); err == nil || !strings.Contains(err.Error(), "arguments: must be a JSON object") {
		t.Fatalf("array arguments: %v", err)
	}
	cases := []struct {
		in, err string
		get     func(a *Args) error
	}{
		{`{"n":5}`, "", func(a *Args) error { _, err := a.Integer("n", 1, 1, 10); return err }},
		{`{"n":5.0}`, "", func(a *Args) error { _, err := a.Integer("n", 1, 1, 10); return err }},
		{`{"n":5.5}`, "n:", func(a *Args) error { _, err := a.Integer("n", 1, 1, 10); return err }},
		{`{"n":1e30}`, "n:", func(a *Args) error { _, err := a.Integer("n", 1, 1, 10); return err }},
		{`{"n":"5"}`, "n: must be an integer", func(a *Args) error { _, err := a.Integer("n", 1, 1, 10); return err }},
		{`{"n":null}`, "", func(a *Args) error { _, err := a.Integer("n", 1, 1, 10); return err }},
		{`{"s":3}`, "s:", func(a *Args) error { _, err := a.Str("s", ""); return err }},
		{`{}`, "s is required", func(a *Args) error { _, err := a.Required("s"); return err }},
		{`{"s":"x"}`, "s:", func(a *Args) error { _, err := a.OneOf("s", "a", "a", "b"); return err }},
		{`{"l":["a",1]}`, "l[1]", func(a *Args) error { _, err := a.StringList("l"); return err }},
		{`{"o":[]}`, "o:", func(a *Args) error { _, err := a.Object("o"); return err }},
	}
	for _, c := range cases {
		a, err := ParseArgs([]byte(c.in), known)
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		err = c.get(a)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: unexpected %v", c.in, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want containing %q", c.in, err, c.err)
		}
	}
}

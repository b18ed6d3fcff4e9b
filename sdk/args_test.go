package sdk

import (
	"encoding/json"
	"math"
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

// TestArgsRejectInvalidUTF8 reads every string's raw bytes: encoding/json
// alone would hand the tool U+FFFD and store it without a word.
func TestArgsRejectInvalidUTF8(t *testing.T) {
	known := []string{"title", "content", "tags", "metadata"}
	cases := []struct {
		in, err string // err "" = accepted
	}{
		{"{\"content\":\"a\xffb\"}", "content: must be valid UTF-8"},
		{"{\"title\":\"ok\",\"content\":\"cut \xc3\"}", "content: must be valid UTF-8"},
		{"{\"tags\":[\"ok\",\"\xed\xa0\x80\"]}", "tags[1]: must be valid UTF-8"}, // a surrogate encoded as UTF-8
		{"{\"metadata\":{\"note\":\"\xfe\"}}", "metadata.note: must be valid UTF-8"},
		{"{\"metadata\":{\"a\":[1,{\"b\":\"\x80\"}]}}", "metadata.a[1].b: must be valid UTF-8"},
		{"{\"metadata\":{\"\xff\":1}}", "metadata: every key must be valid UTF-8"},
		{"{\"\xff\":1}", "arguments: every argument name must be valid UTF-8"},
		{`{"title":"\udc00"}`, "title: must be valid UTF-8"},       // a lone low surrogate
		{`{"title":"x\uD800"}`, "title: must be valid UTF-8"},      // a lone high surrogate at the end
		{`{"title":"\ud800\u0041"}`, "title: must be valid UTF-8"}, // high, then no low
		{`{"title":"\ud800\ud800"}`, "title: must be valid UTF-8"},
		{`{"title":"\ud83d\ude00 \uD83D\uDE00"}`, ""}, // escaped pairs are fine
		{`{"title":"\\ud800"}`, ""},                   // an escaped backslash: the text \ud800
		{`{"title":"\ufffd"}`, ""},                    // U+FFFD sent on purpose is text
		{"{\"title\":\"\xef\xbf\xbd é 日本 🙂\"}", ""},
		{`{"metadata":{"n":-1.5e3,"t":true,"z":null,"a":[]},"tags":[]}`, ""},
	}
	for _, c := range cases {
		_, err := ParseArgs([]byte(c.in), known)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%q: unexpected %v", c.in, err)
		case c.err != "" && (err == nil || err.Error() != c.err):
			t.Errorf("%q: error %v, want %q", c.in, err, c.err)
		}
	}
}

// TestNamespaceGetters is the one namespace rule as every tool reads it.
func TestNamespaceGetters(t *testing.T) {
	get := func(in string, read func(a *Args) (string, error)) (string, error) {
		a, err := ParseArgs([]byte(in), []string{"namespace"})
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		return read(a)
	}
	filter := func(a *Args) (string, error) { return a.NamespaceFilter("namespace") }
	value := func(a *Args) (string, error) { return a.Namespace("namespace", "global") }
	required := func(a *Args) (string, error) { return a.RequiredNamespace("namespace") }
	cases := []struct {
		name string
		read func(a *Args) (string, error)
		in   string
		want string // the value, or the error
	}{
		{"filter absent", filter, `{}`, ""},
		{"filter empty", filter, `{"namespace":""}`, ""},
		{"filter null", filter, `{"namespace":null}`, ""},
		{"filter ok", filter, `{"namespace":"a/b"}`, "a/b"},
		{"filter blank", filter, `{"namespace":" "}`, "namespace: must not be empty"},
		{"filter slash", filter, `{"namespace":"a/"}`, "namespace: must not start or end with '/'"},
		{"filter slashes", filter, `{"namespace":"///"}`, "namespace: must not start or end with '/'"},
		{"filter padded", filter, `{"namespace":" a"}`, "namespace: must not contain spaces, backslashes or control characters"},
		{"filter number", filter, `{"namespace":1}`, "namespace: must be a string (got number)"},
		{"value default", value, `{}`, "global"},
		{"value ok", value, `{"namespace":"org/team"}`, "org/team"},
		{"value empty", value, `{"namespace":""}`, "namespace: must not be empty"},
		{"value dotdot", value, `{"namespace":"a/../b"}`, "namespace: must not contain a '.' or '..' segment"},
		{"required absent", required, `{}`, "namespace is required"},
		{"required blank", required, `{"namespace":" "}`, "namespace: must not be empty"},
		{"required ok", required, `{"namespace":"n"}`, "n"},
	}
	for _, c := range cases {
		got, err := get(c.in, c.read)
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%s: %s → %q, want %q", c.name, c.in, got, c.want)
		}
	}
}

// TestErrorsQuoteLittle: a bad value is echoed at most 64 characters, then its size.
func TestErrorsQuoteLittle(t *testing.T) {
	huge := strings.Repeat("x", 10<<20)
	a, err := ParseArgs([]byte(`{"s":"`+huge+`","n":`+strings.Repeat("9", 1<<20)+`}`), []string{"s", "n"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.OneOf("s", "a", "a", "b")
	if err == nil || len(err.Error()) > 200 || !strings.Contains(err.Error(), "(10485760 bytes)") {
		t.Errorf("OneOf error: %.300v", err)
	}
	_, err = a.Integer("n", 1, 1, 10)
	if err == nil || len(err.Error()) > 200 || !strings.Contains(err.Error(), "(1048576 bytes)") {
		t.Errorf("Integer error: %.300v", err)
	}
	_, err = ParseArgs([]byte(`{"`+huge+`":1}`), []string{"s"})
	if err == nil || len(err.Error()) > 200 {
		t.Errorf("unknown argument error: %.300v", err)
	}
	if q := Quote("short"); q != `"short"` {
		t.Errorf("Quote(short) = %s", q)
	}
	if q := Quote(strings.Repeat("é", 65)); q != `"`+strings.Repeat("é", 64)+`"… (130 bytes)` {
		t.Errorf("Quote(65 runes) = %s", q)
	}
}

func TestTimeArguments(t *testing.T) {
	a, err := ParseArgs([]byte(`{"at":"2026-01-02T15:04:05Z","blank":"  ","far":"9999-01-01T00:00:00Z","bad":"tuesday","num":3}`), []string{"at", "blank", "far", "bad", "num", "none"})
	if err != nil {
		t.Fatal(err)
	}
	if ns, ok, err := a.Time("at"); err != nil || !ok || ns != 1767366245000000000 {
		t.Errorf("at = %d %v %v", ns, ok, err)
	}
	for _, name := range []string{"blank", "none"} {
		if _, ok, err := a.Time(name); ok || err != nil {
			t.Errorf("%s: ok=%v err=%v, want absent", name, ok, err)
		}
	}
	if _, _, err := a.Time("far"); err == nil || !strings.Contains(err.Error(), "far: must be between the years 1678 and 2261") {
		t.Errorf("far as an instant: %v", err)
	}
	if ns, ok, err := a.TimeBound("far"); err != nil || !ok || ns != math.MaxInt64 {
		t.Errorf("far as a bound = %d %v %v, want open", ns, ok, err)
	}
	for _, name := range []string{"bad", "num"} {
		if _, _, err := a.TimeBound(name); err == nil || !strings.HasPrefix(err.Error(), name+":") {
			t.Errorf("%s: %v, want an error naming the field", name, err)
		}
	}
}

// Str reads a string without escapes from its bytes and one with escapes
// through the decoder: both give what encoding/json gives.
func TestStrDecodesLikeJSON(t *testing.T) {
	for _, raw := range []string{`""`, `"plain"`, `"tab\tquote\" slash\\ \u00e9"`, `"é ünï 日本"`, `"\ud83d\ude00"`} {
		a, err := ParseArgs([]byte(`{"s":`+raw+`}`), []string{"s"})
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		got, err := a.Str("s", "default")
		var want string
		if jerr := json.Unmarshal([]byte(raw), &want); err != nil || jerr != nil || got != want {
			t.Errorf("Str(%s) = %q, %v; want %q", raw, got, err, want)
		}
	}
}

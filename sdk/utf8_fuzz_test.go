package sdk

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzArgsText: whatever the bytes, ParseArgs either refuses them or hands
// the tool exactly the text that was sent, never a U+FFFD that encoding/json
// put in place of invalid UTF-8 or a lone surrogate.
// Run: go test -fuzz=FuzzArgsText ./sdk
func FuzzArgsText(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"a":"x"}`, "{\"a\":\"\xff\"}", `{"a":"\udc00"}`, `{"a":"\ud83d\ude00"}`, `{"a":"\\ud800"}`,
		`{"a":["\ufffd",{"b":"\uD800\uDC00"}]}`, "{\"\xc3\":1}", `{"a":1e5,"b":true,"c":null}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := ParseArgs(data, nil) // nothing is known: a valid object with names fails on them
		if err != nil && !strings.HasPrefix(err.Error(), "unknown argument") {
			return
		}
		if t := bytes.Trim(data, " \t\r\n"); len(t) == 0 || string(t) == "null" {
			return // no arguments: {}
		}
		var v any
		if json.Unmarshal(data, &v) != nil {
			t.Fatalf("accepted invalid JSON %q", data)
		}
		sent := bytes.Count(data, []byte("\uFFFD")) + bytes.Count(bytes.ToLower(data), []byte(`\ufffd`))
		if got := countReplacement(v); got > sent {
			t.Fatalf("accepted %q: the tool would see %d U+FFFD, %d were sent", data, got, sent)
		}
	})
}

// countReplacement counts U+FFFD in every string and key of a decoded value.
func countReplacement(v any) int {
	switch x := v.(type) {
	case string:
		return strings.Count(x, "\uFFFD")
	case []any:
		n := 0
		for _, e := range x {
			n += countReplacement(e)
		}
		return n
	case map[string]any:
		n := 0
		for k, e := range x {
			n += strings.Count(k, "\uFFFD") + countReplacement(e)
		}
		return n
	}
	return 0
}

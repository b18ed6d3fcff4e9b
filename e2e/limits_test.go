package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// maxErrorBytes is how long a field error may be: it quotes at most about
// 64 characters of the bad value.
const maxErrorBytes = 300

// TestOversizedValuesGetFieldErrors: values far over the record limits (4
// MB and 10 MB) reach the validator through every hop and get the field's
// own short error, never a gRPC ResourceExhausted; nothing is stored.
//
// The host's own MCP message cap (1 MiB by default, see stdio_test.go for
// what a larger message gets) is raised here so that such values reach the
// gRPC hops at all.
func TestOversizedValuesGetFieldErrors(t *testing.T) {
	e := newEnv(t)
	e.writeConfig("[mcp]\nmax_message_bytes = 33554432\n")
	h := e.startHost(nil)
	for _, size := range []int{4 << 20, 10 << 20} {
		big := strings.Repeat("x", size)
		cases := []struct {
			args map[string]any
			want string
		}{
			{map[string]any{"title": "t", "content": big}, fmt.Sprintf("content: must be at most 65536 bytes (got %d)", size)},
			{map[string]any{"title": big, "content": "c"}, fmt.Sprintf("title: must be at most 512 characters (got %d)", size)},
			{map[string]any{"title": "t", "content": "c", "namespace": big}, "namespace: must be at most 512 characters"},
			{map[string]any{"title": "t", "content": "c", "tier": big}, fmt.Sprintf(`tier: must be one of short, mid, long (got "%s"… (%d bytes))`, big[:64], size)},
			{map[string]any{"title": "t", "content": "c", "tags": []string{big}}, "tags[0]: must be at most 128 bytes"},
			{map[string]any{"title": "t", "content": "c", "metadata": map[string]any{"k": big}}, "metadata: must serialise to at most 65536 bytes"},
		}
		for _, c := range cases {
			text, isErr := h.call("memory_store", c.args)
			if !isErr || !strings.Contains(text, c.want) || len(text) > maxErrorBytes {
				t.Errorf("%d bytes: isError=%v, error %.400q; want a short error containing %.200q", size, isErr, text, c.want)
			}
		}
		// The bridge is the same path.
		text, isErr := h.call("memory_capabilities", map[string]any{"tool": "memory_store", "arguments": map[string]any{"title": "t", "content": big}})
		if !isErr || !strings.Contains(text, "content: must be at most 65536 bytes") || len(text) > maxErrorBytes {
			t.Errorf("bridged %d bytes: isError=%v, error %.400q", size, isErr, text)
		}
	}
	if list := h.ok("memory_list", map[string]any{"format": "json"}); list["count"] != float64(0) {
		t.Errorf("rejected stores wrote %v memories", list["count"])
	}
}

// TestInvalidUTF8IsAFieldErrorOverTheWire sends bytes a JSON library would
// never produce: invalid UTF-8 and a lone surrogate escape. Each is an
// error naming its field, not text silently stored with U+FFFD.
func TestInvalidUTF8IsAFieldErrorOverTheWire(t *testing.T) {
	s := newEnv(t).startRaw()
	cases := []struct{ tool, args, want string }{
		{"memory_store", `{"title":"t","content":"caf` + "\xe9" + `"}`, "content: must be valid UTF-8"},
		{"memory_store", `{"title":"` + "\xff" + `","content":"c"}`, "title: must be valid UTF-8"},
		{"memory_store", `{"title":"t","content":"c","tags":["ok","\udc00"]}`, "tags[1]: must be valid UTF-8"},
		{"memory_store", `{"title":"t","content":"c","metadata":{"who":"` + "\xc0\xaf" + `"}}`, "metadata.who: must be valid UTF-8"},
		{"memory_search", `{"query":"\ud800"}`, "query: must be valid UTF-8"},
		{"memory_list", `{"namespace":"a` + "\x80" + `"}`, "namespace: must be valid UTF-8"},
	}
	for _, c := range cases {
		resp := s.requestRaw("tools/call", `{"name":"`+c.tool+`","arguments":`+c.args+`}`)
		if text, isErr := toolResult(resp); !isErr || !strings.Contains(text, c.want) {
			t.Errorf("%s %q: got %v, want an error containing %q", c.tool, c.args, resp, c.want)
		}
	}
	// A U+FFFD that was really sent is text like any other.
	resp := s.requestRaw("tools/call", `{"name":"memory_store","arguments":{"title":"t","content":"\ufffd `+"\xef\xbf\xbd"+`"}}`)
	if text, isErr := toolResult(resp); isErr {
		t.Fatalf("real U+FFFD refused: %s", text)
	}
	list, _ := toolResult(s.request("tools/call", map[string]any{"name": "memory_list", "arguments": map[string]any{"format": "json"}}))
	var got struct{ Count int }
	if err := json.Unmarshal([]byte(list), &got); err != nil || got.Count != 1 {
		t.Errorf("after the rejected stores: %s (%v); want the one valid memory", list, err)
	}
}

package httpfront

import (
	"strconv"
	"strings"
	"testing"
)

// The framing follower finds every header block of a keep-alive stream,
// whatever the bodies hold and however the reads split the bytes, and
// reports exactly the streams with a request carrying both
// Content-Length and Transfer-Encoding (or framing it cannot follow).
func TestFramingFindsSmuggledRequests(t *testing.T) {
	post := func(body string) string {
		return "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
	}
	chunked := "POST /mcp HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" +
		"5;ext=1\r\nhello\r\n10\r\n0123456789abcdef\r\n0\r\nTrailer: x\r\n\r\n"
	both := "POST /mcp HTTP/1.1\r\nHost: x\r\ncontent-length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
	headerLikeBody := "a\r\n\r\nPOST /mcp HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"
	for _, tc := range []struct {
		name, stream string
		refused      bool
	}{
		{"keep-alive posts", post("{}") + "GET /mcp HTTP/1.1\r\nHost: x\r\n\r\n" + post(`{"a":1}`), false},
		{"chunked, then a post", chunked + post("{}"), false},
		{"a body that looks like headers", post(headerLikeBody) + post("{}"), false},
		{"a blank line between requests", post("{}") + "\r\n" + post("{}"), false},
		{"both, first", both, true},
		{"both, after a chunked body", chunked + both, true},
		{"both, after a body", post(headerLikeBody) + both, true},
		{"both on HTTP/1.0", "POST /mcp HTTP/1.0\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\nx", true},
		{"a bad chunk size", "POST /mcp HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", true},
		{"a bad Content-Length", "POST /mcp HTTP/1.1\r\nContent-Length: -1\r\n\r\n", true},
		{"chunk data without its line end", "POST /mcp HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nxy\r\n0\r\n\r\n", true},
	} {
		for _, size := range []int{1, 3, 7, 64, len(tc.stream)} {
			f := &framing{}
			refused := false
			for s := tc.stream; len(s) > 0 && !refused; {
				n := min(size, len(s))
				refused, s = f.follow([]byte(s[:n])), s[n:]
			}
			if refused != tc.refused {
				t.Errorf("%s, read %d bytes at a time: refused %v, want %v", tc.name, size, refused, tc.refused)
			}
		}
	}
}

// A header line longer than what is kept does not lose the stream.
func TestFramingLongHeaderLine(t *testing.T) {
	stream := "POST /mcp HTTP/1.1\r\nAuthorization: Bearer " + strings.Repeat("x", 5000) + "\r\nContent-Length: 2\r\n\r\n{}" +
		"POST /mcp HTTP/1.1\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n"
	f := &framing{}
	if !f.follow([]byte(stream)) {
		t.Fatal("the second request's Content-Length with Transfer-Encoding went unseen")
	}
}

// BenchmarkFramingFollow is what following a connection's framing costs
// per request: a tools/call as a harness sends it, header and body.
func BenchmarkFramingFollow(b *testing.B) {
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"memory_store","arguments":{"title":"a title","content":"` + strings.Repeat("x", 300) + `"}}}`
	req := []byte("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:8420\r\nUser-Agent: Go-http-client/1.1\r\nContent-Length: " + strconv.Itoa(len(body)) +
		"\r\nAccept: application/json, text/event-stream\r\nAuthorization: Bearer aim_0123456789ab_" + strings.Repeat("k", 43) +
		"\r\nContent-Type: application/json\r\nMcp-Protocol-Version: 2025-06-18\r\nMcp-Session-Id: mcp-session-9b2b87b4-4eeb-4c1e-9f3a-0123456789ab\r\n\r\n" + body)
	f := &framing{}
	b.SetBytes(int64(len(req)))
	for b.Loop() {
		if f.follow(req) {
			b.Fatal("refused")
		}
	}
}

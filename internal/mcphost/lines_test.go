package mcphost

import (
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
)

func TestLineReader(t *testing.T) {
	long := strings.Repeat("a", 100)
	in := "one\r\n\n  \ntwo\n" + `{"id":3,"x":"` + long + `"}` + "\n" + `{"x":"` + long + `","id":"last"}` + "\n" + strings.Repeat("b", 20) + "\nend"
	r := newLineReader(strings.NewReader(in), 20)
	var got []string
	for {
		line, over, err := r.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if over != nil {
			got = append(got, "over:"+string(over.id)+":"+itoa(over.size))
			continue
		}
		got = append(got, string(line))
	}
	want := []string{"one", "two", "over:3:" + itoa(int64(len(long)+15)), `over:"last":` + itoa(int64(len(long)+20)), strings.Repeat("b", 20), "end"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("lines = %q\nwant    %q", got, want)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestRecoveredIDs(t *testing.T) {
	for head, want := range map[string]string{
		`{"jsonrpc":"2.0","id":5,"params":{"a":"xx`:   "5",
		`{"id":"abc","params":`:                       `"abc"`,
		`{"params":{"id":9,"content":"xx`:             "",
		`{"jsonrpc":"2.0","params":{"nested":[1,2,{"`: "",
		`[1,2`:                         "",
		`{"id":{"bad":1},"method":"x"`: "",
		`{"method":"tools/call","id":-7,"params":{"x":`: "-7",
	} {
		if got := string(leadingID([]byte(head))); got != want {
			t.Errorf("leadingID(%s) = %q, want %q", head, got, want)
		}
	}
	for tail, want := range map[string]string{
		`xxxx"}},"jsonrpc":"2.0","id":12}`:   "12",
		`xxxx"}},"id":"a\"b"}` + "\r\n":      `"a\"b"`,
		`xxxx"}}, "id" : 4 }`:                "4",
		`xx","arguments":{"id":5}}}`:         "",
		`xx\",\"id\":5}"}}`:                  "",
		`xxxx"}},"id":null}`:                 "",
		`truncated garbage without an end x`: "",
	} {
		if got := string(trailingID([]byte(tail))); got != want {
			t.Errorf("trailingID(%s) = %q, want %q", tail, got, want)
		}
	}
}

func TestNestsDeeperThan(t *testing.T) {
	for in, want := range map[string]bool{
		`[[1]]`:                  false,
		`[[[1]]]`:                true,
		`{"a":{"b":[1]}}`:        true,
		`{"a":"[[[[","b":[1]}`:   false, // brackets in a string
		`{"a":"\"[[[[","b":[1]}`: false, // after an escaped quote, still in the string
		`{"a":"\\","b":[[[1]]]}`: true,  // an escaped backslash ends before the quote
		`[[1],[1],[1],[1],[1]]`:  false, // siblings do not add up
	} {
		if got := nestsDeeperThan([]byte(in), 2); got != want {
			t.Errorf("nestsDeeperThan(%s, 2) = %v, want %v", in, got, want)
		}
	}
}

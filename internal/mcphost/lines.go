package mcphost

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"regexp"
)

// DefaultMaxMessageBytes bounds one stdio message. The largest valid request
// is a core store with 64 KiB of content and 64 KiB of metadata: JSON
// escaping can make each byte six (a control character as \u00XX), so those
// two fields alone may take 768 KiB, and a 512-character title, 50 tags of
// 128 bytes and a namespace, all escaped, about 60 KiB more. 1 MiB holds
// that with room for the envelope, so an oversized field still reaches its
// tool and gets its own field error.
const DefaultMaxMessageBytes = 1 << 20

// readChunk is the read buffer: an oversized line is dropped this much at a time.
const readChunk = 64 << 10

// oversized describes a line longer than the limit, read and dropped.
type oversized struct {
	size int64           // bytes in the line, newline excluded
	id   json.RawMessage // the request's id when it could be recovered, else nil
}

// lineReader reads newline-delimited messages of at most max bytes. It
// never holds more than max (plus one read chunk) of a line: a longer line
// is read to its end and dropped in chunks, keeping only its head and tail
// to recover the request id for the error answer.
type lineReader struct {
	r   *bufio.Reader
	max int
	err error // a read error that ended a dropped line, reported next
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, readChunk), max: max}
}

// next returns the next non-blank line without its line ending, or an
// *oversized for a dropped one, or the read error (io.EOF at the end).
func (l *lineReader) next() ([]byte, *oversized, error) {
	if l.err != nil {
		return nil, nil, l.err
	}
	var line []byte
	for {
		chunk, err := l.r.ReadSlice('\n')
		n := len(line) + len(chunk)
		if err == nil {
			n-- // the newline is not part of the message
		}
		if n > l.max {
			return nil, l.drop(line, chunk, err), nil
		}
		line = append(line, chunk...)
		switch {
		case err == nil:
			if len(bytes.TrimSpace(line)) == 0 {
				line = line[:0]
				continue
			}
			return bytes.TrimRight(line, "\r\n"), nil, nil
		case errors.Is(err, bufio.ErrBufferFull):
		case errors.Is(err, io.EOF) && len(bytes.TrimSpace(line)) > 0:
			l.err = err
			return bytes.TrimRight(line, "\r\n"), nil, nil // a last message without a newline
		default:
			return nil, nil, err
		}
	}
}

// drop reads the rest of an oversized line: head is what was kept of it,
// chunk the read that went over the limit.
func (l *lineReader) drop(head, chunk []byte, err error) *oversized {
	lead := head[:min(len(head), headKeep):min(len(head), headKeep)]
	lead = append(lead, chunk[:min(len(chunk), headKeep-len(lead))]...)
	o := &oversized{size: int64(len(head)), id: leadingID(lead)}
	tail := append([]byte(nil), head[max(0, len(head)-tailKeep):]...)
	for {
		o.size += int64(len(chunk))
		tail = append(tail, chunk...)
		if len(tail) > tailKeep {
			tail = append(tail[:0], tail[len(tail)-tailKeep:]...)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			break
		}
		chunk, err = l.r.ReadSlice('\n')
	}
	if err == nil {
		o.size-- // the newline
	} else {
		l.err = err
	}
	if o.id == nil {
		o.id = trailingID(tail)
	}
	return o
}

// How much of a dropped line's start and end is searched for its id.
const (
	headKeep = 4 << 10
	tailKeep = 256
)

// leadingID finds the top-level "id" of a JSON object that may be cut
// short, when it comes before the cut (Go and Python clients send it early).
func leadingID(head []byte) json.RawMessage {
	d := json.NewDecoder(bytes.NewReader(head))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for {
		t, err := d.Token()
		key, ok := t.(string)
		if err != nil || !ok {
			return nil
		}
		if key == "id" {
			var id json.RawMessage
			if d.Decode(&id) != nil || !validID(id) {
				return nil
			}
			return id
		}
		if skipValue(d) != nil {
			return nil
		}
	}
}

func skipValue(d *json.Decoder) error {
	depth := 0
	for {
		t, err := d.Token()
		if err != nil {
			return err
		}
		switch t {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}

// trailingIDPattern matches an object whose last member is its id (the
// TypeScript SDK sends the id after the params).
var trailingIDPattern = regexp.MustCompile(`[{,]\s*"id"\s*:\s*(-?[0-9][0-9.eE+-]*|"(?:[^"\\]|\\.)*")\s*}\s*$`)

func trailingID(tail []byte) json.RawMessage {
	m := trailingIDPattern.FindSubmatch(bytes.TrimRight(tail, "\r\n"))
	if m == nil || !validID(m[1]) {
		return nil
	}
	return json.RawMessage(append([]byte(nil), m[1]...))
}

// validID accepts what JSON-RPC allows as a request id: a string or a number.
func validID(raw []byte) bool {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	switch v.(type) {
	case string, float64:
		return true
	}
	return false
}

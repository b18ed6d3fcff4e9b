package httpfront

import (
	"bytes"
	"strconv"
)

// framing follows one plain-HTTP connection's request stream as the server
// reads it, just far enough to find each request's header block, and
// reports a request that carries both Content-Length and
// Transfer-Encoding. net/http reads such a request by its chunked
// encoding and deletes the Content-Length before any handler runs, so the
// front cannot see it otherwise; a proxy in front may have used the
// Content-Length, and the two would then disagree on where the next
// request starts (request smuggling). A stream it cannot follow is
// reported too: net/http refuses such framing itself, so only a request
// built to slip past would be.
type framing struct {
	state         framingState
	line          []byte // a line split across reads, up to maxFramingLine bytes
	inRequest     bool   // the request line was read
	http10        bool   // ignores Transfer-Encoding, as net/http does
	hasCL, hasTE  bool
	contentLength int64
	left          int64 // body or chunk bytes still to pass
	wrong         bool
}

type framingState int

const (
	inHeader framingState = iota
	inBody
	inChunkSize
	inChunkData
	inChunkEnd
	inTrailer
)

// maxFramingLine is what is kept of a line: enough for every header name
// and value framing depends on.
const maxFramingLine = 256

// follow consumes the next bytes read and reports whether the stream is
// to be refused.
func (f *framing) follow(p []byte) bool {
	for len(p) > 0 && !f.wrong {
		switch f.state {
		case inBody, inChunkData:
			n := min(int64(len(p)), f.left)
			p, f.left = p[n:], f.left-n
			if f.left == 0 {
				if f.state == inBody {
					f.nextRequest()
				} else {
					f.state = inChunkEnd
				}
			}
		default:
			i := bytes.IndexByte(p, '\n')
			if i < 0 {
				f.keep(p) // the line goes on in the next read
				return false
			}
			line := p[:i]
			if len(f.line) > 0 {
				f.keep(line)
				line = f.line
			}
			p = p[i+1:]
			f.endLine(bytes.TrimSuffix(line, []byte("\r")))
			f.line = f.line[:0]
		}
	}
	return f.wrong
}

// keep adds the start of a line split across reads, up to maxFramingLine.
func (f *framing) keep(part []byte) {
	if room := maxFramingLine - len(f.line); room > 0 {
		f.line = append(f.line, part[:min(len(part), room)]...)
	}
}

func (f *framing) endLine(line []byte) {
	switch f.state {
	case inHeader:
		switch {
		case !f.inRequest:
			if len(line) > 0 { // blank lines between requests are skipped
				f.inRequest, f.http10 = true, bytes.HasSuffix(line, []byte("HTTP/1.0"))
			}
		case len(line) == 0:
			f.endHeader()
		default:
			name, value, _ := bytes.Cut(line, []byte(":"))
			switch {
			case bytes.EqualFold(name, []byte("Content-Length")):
				n, err := strconv.ParseUint(string(bytes.TrimSpace(value)), 10, 63)
				f.hasCL, f.contentLength, f.wrong = true, int64(n), f.wrong || err != nil
			case bytes.EqualFold(name, []byte("Transfer-Encoding")):
				f.hasTE = true
			}
		}
	case inChunkSize:
		size, _, _ := bytes.Cut(line, []byte(";"))
		n, err := strconv.ParseUint(string(bytes.TrimSpace(size)), 16, 63)
		switch {
		case err != nil:
			f.wrong = true
		case n == 0:
			f.state = inTrailer
		default:
			f.state, f.left = inChunkData, int64(n)
		}
	case inChunkEnd:
		f.state, f.wrong = inChunkSize, len(line) != 0
	case inTrailer:
		if len(line) == 0 {
			f.nextRequest()
		}
	}
}

// endHeader decides how the request's body is framed.
func (f *framing) endHeader() {
	switch {
	case f.hasCL && f.hasTE:
		f.wrong = true
	case f.hasTE && !f.http10:
		f.state = inChunkSize
	case f.contentLength > 0:
		f.state, f.left = inBody, f.contentLength
	default:
		f.nextRequest()
	}
}

func (f *framing) nextRequest() {
	*f = framing{line: f.line[:0]}
}

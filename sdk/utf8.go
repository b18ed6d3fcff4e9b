package sdk

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/ai-memory/ai-memory/sdk/record"
)

// encoding/json silently replaces invalid UTF-8 and lone surrogate escapes
// ("\udc00") with U+FFFD, so a decoded string can no longer tell what the
// client sent. badText reads the raw bytes of every string in a valid JSON
// value instead and names the first one that is not valid text.

// badText returns an error naming the first string (value or key) in the
// arguments data that is not valid UTF-8: "content", "tags[2]" or
// "metadata.note". data must be valid JSON.
func badText(data []byte) error {
	// Fast path: valid bytes and no \uD8xx–\uDFxx escape means nothing to find.
	if utf8.Valid(data) && !bytes.Contains(data, []byte(`\ud`)) && !bytes.Contains(data, []byte(`\uD`)) {
		return nil
	}
	s := &textScanner{data: data}
	bad, found := s.value("")
	switch {
	case !found:
		return nil
	case bad.key && bad.path == "":
		return Errorf("arguments: every argument name must be valid UTF-8")
	case bad.key:
		return Errorf("%s: every key must be valid UTF-8", bad.path)
	}
	return Errorf("%s: must be valid UTF-8", bad.path)
}

// badString is where the scanner found invalid text: the string at path,
// or (key) one of the keys of the object at path.
type badString struct {
	path string
	key  bool
}

type textScanner struct {
	data []byte
	pos  int
}

func (s *textScanner) skipSpace() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// value scans one JSON value at s.pos and reports the path of the first bad
// string in it.
func (s *textScanner) value(path string) (badString, bool) {
	s.skipSpace()
	if s.pos >= len(s.data) {
		return badString{}, false
	}
	switch s.data[s.pos] {
	case '"':
		if _, valid := s.str(false); !valid {
			return badString{path: path}, true
		}
	case '{':
		s.pos++
		for {
			s.skipSpace()
			if s.pos >= len(s.data) || s.data[s.pos] == '}' {
				s.pos++
				return badString{}, false
			}
			key, valid := s.str(true)
			if !valid {
				return badString{path: path, key: true}, true
			}
			s.skipSpace()
			s.pos++ // ':'
			if p, bad := s.value(join(path, key)); bad {
				return p, true
			}
			s.skipSpace()
			if s.pos < len(s.data) && s.data[s.pos] == ',' {
				s.pos++
			}
		}
	case '[':
		s.pos++
		for i := 0; ; i++ {
			s.skipSpace()
			if s.pos >= len(s.data) || s.data[s.pos] == ']' {
				s.pos++
				return badString{}, false
			}
			if p, bad := s.value(path + "[" + strconv.Itoa(i) + "]"); bad {
				return p, true
			}
			s.skipSpace()
			if s.pos < len(s.data) && s.data[s.pos] == ',' {
				s.pos++
			}
		}
	default: // number, true, false, null
		for s.pos < len(s.data) && strings.IndexByte(",]} \t\n\r", s.data[s.pos]) < 0 {
			s.pos++
		}
	}
	return badString{}, false
}

// str scans the string at s.pos (on its opening quote) and reports whether
// it is valid text, and with decode its text (to name object keys).
func (s *textScanner) str(decode bool) (string, bool) {
	start := s.pos
	s.pos++
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		switch {
		case c == '"':
			s.pos++
			var text string
			if decode {
				json.Unmarshal(s.data[start:s.pos], &text) // valid text, so decoded faithfully
			}
			return text, true
		case c == '\\':
			if s.pos+1 < len(s.data) && s.data[s.pos+1] == 'u' {
				r := s.hex4(s.pos + 2)
				s.pos += 6
				switch {
				case utf16.IsSurrogate(r) && r < 0xDC00: // high: a low one must follow
					if s.pos+6 > len(s.data) || s.data[s.pos] != '\\' || s.data[s.pos+1] != 'u' {
						return "", false
					}
					if lo := s.hex4(s.pos + 2); lo < 0xDC00 || lo > 0xDFFF {
						return "", false
					}
					s.pos += 6
				case utf16.IsSurrogate(r): // a low surrogate alone
					return "", false
				}
				continue
			}
			s.pos += 2
		case c < utf8.RuneSelf:
			s.pos++
		default:
			r, size := utf8.DecodeRune(s.data[s.pos:])
			if r == utf8.RuneError && size == 1 {
				return "", false
			}
			s.pos += size
		}
	}
	return "", false
}

// hex4 reads the four hex digits of a \u escape at i.
func (s *textScanner) hex4(i int) rune {
	if i+4 > len(s.data) {
		return -1
	}
	n, err := strconv.ParseUint(string(s.data[i:i+4]), 16, 32)
	if err != nil {
		return -1
	}
	return rune(n)
}

// join names a member of an object: the argument itself at the top, then
// dotted keys; a long key is cut so the error stays short.
func join(path, key string) string {
	if len(key) > record.MaxQuotedChars || key == "" {
		key = record.Quote(key)
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

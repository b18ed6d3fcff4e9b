// Package wordpiece is BERT's tokenizer: the basic tokenizer (clean-up,
// lower-casing and accent stripping, CJK characters and punctuation split
// off) and greedy longest-match WordPiece over a vocab.txt, giving the
// same ids as Hugging Face's `tokenizers` BertNormalizer + BertPreTokenizer
// + WordPiece for the models this project loads.
package wordpiece

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// maxWordChars is WordPiece's limit: a longer word is one [UNK].
const maxWordChars = 100

// Tokenizer maps text to vocabulary ids.
type Tokenizer struct {
	vocab     map[string]int32
	lowerCase bool
	// CLS, SEP and UNK are the special tokens' ids.
	CLS, SEP, UNK int32
}

// Load reads a vocab.txt (one token a line, its id the line number).
// lowerCase is the model's do_lower_case (which also strips accents).
func Load(r io.Reader, lowerCase bool) (*Tokenizer, error) {
	t := &Tokenizer{vocab: make(map[string]int32, 32768), lowerCase: lowerCase}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1024), 1<<20)
	for id := int32(0); sc.Scan(); id++ {
		tok := strings.TrimRight(sc.Text(), "\r")
		if _, dup := t.vocab[tok]; !dup {
			t.vocab[tok] = id
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("vocab: %w", err)
	}
	// In a fixed order, so a vocabulary missing several names the first.
	for _, sp := range []struct {
		name string
		id   *int32
	}{{"[CLS]", &t.CLS}, {"[SEP]", &t.SEP}, {"[UNK]", &t.UNK}} {
		v, ok := t.vocab[sp.name]
		if !ok {
			return nil, fmt.Errorf("vocab: no %s token", sp.name)
		}
		*sp.id = v
	}
	if len(t.vocab) < 100 {
		return nil, errors.New("vocab: fewer than 100 tokens")
	}
	return t, nil
}

// Size is the number of distinct tokens.
func (t *Tokenizer) Size() int { return len(t.vocab) }

// Encode returns [CLS] text's tokens [SEP], at most maxLen ids in all
// (the text's tokens cut to fit, as the reference truncates).
func (t *Tokenizer) Encode(text string, maxLen int) []int32 {
	ids := []int32{t.CLS}
	budget := maxLen - 2
	for _, word := range t.words(text) {
		if len(ids)-1 >= budget {
			break
		}
		ids = t.wordPiece(word, ids)
	}
	if len(ids)-1 > budget {
		ids = ids[:budget+1]
	}
	return append(ids, t.SEP)
}

// Tokens is Encode's tokens as text, for tests and diagnostics.
func (t *Tokenizer) Tokens(ids []int32) []string {
	byID := make(map[int32]string, len(ids))
	for tok, id := range t.vocab {
		byID[id] = tok
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = byID[id]
	}
	return out
}

// Words is text split as the model reads it, before WordPiece: lower-cased
// and accent-stripped (for an uncased model), punctuation on its own.
func (t *Tokenizer) Words(text string) []string { return t.words(text) }

// Whole reports whether word, one of Words' words, is a vocabulary entry
// of its own rather than pieces of one: a word the model was trained on,
// not a name or identifier it can only spell.
func (t *Tokenizer) Whole(word string) bool {
	_, ok := t.vocab[word]
	return ok
}

// words is the basic tokenizer: text normalised, then split on white
// space and around every punctuation and CJK character.
func (t *Tokenizer) words(text string) []string {
	var b strings.Builder
	b.Grow(len(text) + 16)
	for _, r := range text {
		switch {
		case r == 0 || r == utf8.RuneError || (isControl(r) && r != '\t' && r != '\n' && r != '\r'):
			continue
		case unicode.IsSpace(r):
			b.WriteByte(' ')
		case isCJK(r):
			b.WriteByte(' ')
			b.WriteRune(r)
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	s := b.String()
	if t.lowerCase {
		s = strings.ToLower(stripAccents(s))
	}
	var words []string
	for _, field := range strings.Fields(s) {
		start := 0
		for i, r := range field {
			if isPunct(r) {
				if start < i {
					words = append(words, field[start:i])
				}
				words = append(words, field[i:i+utf8.RuneLen(r)])
				start = i + utf8.RuneLen(r)
			}
		}
		if start < len(field) {
			words = append(words, field[start:])
		}
	}
	return words
}

// wordPiece appends word's pieces: the longest vocabulary prefix, then the
// longest "##"-prefixed continuation, and so on; [UNK] for the whole word
// when some rest matches nothing.
func (t *Tokenizer) wordPiece(word string, ids []int32) []int32 {
	if utf8.RuneCountInString(word) > maxWordChars {
		return append(ids, t.UNK)
	}
	n := len(ids)
	var piece strings.Builder
	for start := 0; start < len(word); {
		end, found := len(word), int32(-1)
		for end > start {
			piece.Reset()
			if start > 0 {
				piece.WriteString("##")
			}
			piece.WriteString(word[start:end])
			if id, ok := t.vocab[piece.String()]; ok {
				found = id
				break
			}
			_, size := utf8.DecodeLastRuneInString(word[:end])
			end -= size
		}
		if found < 0 {
			return append(ids[:n], t.UNK)
		}
		ids = append(ids, found)
		start = end
	}
	return ids
}

// stripAccents drops combining marks after canonical decomposition.
func stripAccents(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range norm.NFD.String(s) {
		if !unicode.Is(unicode.Mn, r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isControl: the "other" categories, as the reference's clean-up drops them.
func isControl(r rune) bool {
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs)
}

// isPunct: ASCII symbols count as punctuation too, as in BERT.
func isPunct(r rune) bool {
	if r >= 33 && r <= 47 || r >= 58 && r <= 64 || r >= 91 && r <= 96 || r >= 123 && r <= 126 {
		return true
	}
	return unicode.IsPunct(r)
}

// isCJK: the CJK Unified Ideographs blocks BERT splits per character.
func isCJK(r rune) bool {
	return r >= 0x4E00 && r <= 0x9FFF || r >= 0x3400 && r <= 0x4DBF || r >= 0x20000 && r <= 0x2A6DF ||
		r >= 0x2A700 && r <= 0x2B73F || r >= 0x2B740 && r <= 0x2B81F || r >= 0x2B820 && r <= 0x2CEAF ||
		r >= 0xF900 && r <= 0xFAFF || r >= 0x2F800 && r <= 0x2FA1F
}

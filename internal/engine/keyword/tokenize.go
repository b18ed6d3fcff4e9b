// Package keyword turns text into the stemmed terms the keyword index holds
// and scores them with BM25. Documents and queries go through the same
// tokenizer, so a query term always has the spelling the index gave it.
package keyword

import (
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/kljensen/snowball/english"
)

// MaxTermBytes skips longer words (hashes, base64 blobs): they are rarely
// searched for and would bloat the index. Queries skip them the same way.
const MaxTermBytes = 64

// TermFreq is one distinct term of a document and how often it occurs.
type TermFreq struct {
	Term string
	Freq uint32
}

// Terms appends the terms of text to dst, in order, repeats kept. See
// Analyzer.Terms.
func Terms(dst []string, text string) []string { return (*Analyzer)(nil).Terms(dst, text) }

// Document returns a memory's distinct terms; see Analyzer.Document.
func Document(title, content string, tags []string) ([]TermFreq, uint32) {
	return (*Analyzer)(nil).Document(title, content, tags)
}

// Query returns the distinct terms of a search string; see Analyzer.Query.
func Query(q string) []string { return (*Analyzer)(nil).Query(q) }

// Analyzer tokenizes and stems, remembering the stems of words it has
// seen: Snowball converts strings to runes at every suffix test, and prose
// repeats its words, so most words are stemmed once. Safe for concurrent
// use. A nil *Analyzer works without a cache.
type Analyzer struct {
	mu    sync.RWMutex
	stems map[string]string
	max   int
}

// NewAnalyzer caches up to maxCached stems (forgetting them all when full,
// which keeps the bound without bookkeeping).
func NewAnalyzer(maxCached int) *Analyzer {
	return &Analyzer{stems: make(map[string]string), max: maxCached}
}

func (a *Analyzer) stem(w string) string {
	if a == nil {
		return english.Stem(w, true)
	}
	a.mu.RLock()
	s, ok := a.stems[w]
	a.mu.RUnlock()
	if ok {
		return s
	}
	s = english.Stem(w, true)
	a.mu.Lock()
	if len(a.stems) >= a.max {
		clear(a.stems)
	}
	a.stems[w] = s
	a.mu.Unlock()
	return s
}

// Terms appends the terms of text to dst, in order, repeats kept.
//
// A word is a run of letters, digits and combining marks; apostrophes inside
// it are dropped ("don't" → "dont"); invisible format characters (zero-width,
// bidi controls, soft hyphen) are ignored wherever they appear. Words joined
// by '-' or '_' yield each part and the joined form, so "e-mail" is found by
// "mail" and by "email", and "memory_store" by "store". Each term is
// lowercased and Snowball-stemmed (English).
func (a *Analyzer) Terms(dst []string, text string) []string {
	eachWord(text, func(w string) {
		dst = a.appendStem(dst, w)
	})
	return dst
}

// Words calls fn with each word of text (lowercased, unstemmed) and its
// term, in the order Terms gives the terms: how a term is shown to people,
// who read "configuration", not "configur".
func (a *Analyzer) Words(text string, fn func(word, term string)) {
	eachWord(text, func(w string) {
		if len(w) <= MaxTermBytes {
			fn(w, a.stem(w))
		}
	})
}

// eachWord splits text into the lowercased words Terms stems (see Terms).
func eachWord(text string, emit func(w string)) {
	var word strings.Builder
	var parts []string
	flushWord := func() {
		if word.Len() > 0 {
			parts = append(parts, word.String())
			word.Reset()
		}
	}
	flushCompound := func() {
		flushWord()
		for _, p := range parts {
			emit(p)
		}
		if len(parts) > 1 {
			emit(strings.Join(parts, ""))
		}
		parts = parts[:0]
	}
	runes := []rune(text)
	for i, r := range runes {
		switch {
		case unicode.Is(unicode.Cf, r):
			// invisible: neither part of a word nor a separator
		case isWordRune(r):
			word.WriteRune(unicode.ToLower(r))
		case (r == '\'' || r == '\u2019') && word.Len() > 0 && nextIsWord(runes, i):
			// apostrophe inside a word: dropped
		case (r == '-' || r == '_') && word.Len() > 0 && nextIsWord(runes, i):
			flushWord()
		default:
			flushCompound()
		}
	}
	flushCompound()
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
}

// nextIsWord reports whether the first visible rune after i is a word rune.
func nextIsWord(runes []rune, i int) bool {
	for _, r := range runes[i+1:] {
		if !unicode.Is(unicode.Cf, r) {
			return isWordRune(r)
		}
	}
	return false
}

func (a *Analyzer) appendStem(dst []string, w string) []string {
	if len(w) > MaxTermBytes {
		return dst
	}
	return append(dst, a.stem(w))
}

// Document returns the distinct terms of a memory's indexed fields (title,
// content and tags), sorted by term, and the document length in terms.
func (a *Analyzer) Document(title, content string, tags []string) ([]TermFreq, uint32) {
	all := a.Terms(nil, title)
	all = a.Terms(all, content)
	for _, t := range tags {
		all = a.Terms(all, t)
	}
	slices.Sort(all)
	var out []TermFreq
	for i, t := range all {
		if i > 0 && all[i-1] == t {
			out[len(out)-1].Freq++
			continue
		}
		out = append(out, TermFreq{Term: t, Freq: 1})
	}
	return out, uint32(len(all))
}

// Query sanitises a search string (data-model §9.1) and returns its distinct
// terms in first-seen order. Words equal to AND, OR, NOT or NEAR in any case
// are operators in the reference's query language and are dropped; the
// characters " * ^ { } ( ) : | + are separators, as any other punctuation.
// An empty result means the query can match nothing.
func (a *Analyzer) Query(q string) []string {
	var terms []string
	for _, tok := range strings.FieldsFunc(q, unicode.IsSpace) {
		if isOperator(stripInvisible(tok)) {
			continue
		}
		terms = a.Terms(terms, tok)
	}
	out := terms[:0]
	seen := make(map[string]bool, len(terms))
	for _, t := range terms {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

func isOperator(tok string) bool {
	for _, op := range []string{"AND", "OR", "NOT", "NEAR"} {
		if strings.EqualFold(tok, op) {
			return true
		}
	}
	return false
}

func stripInvisible(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Cf, r) {
			return -1
		}
		return r
	}, s)
}

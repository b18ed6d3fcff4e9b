package powerfamily

import (
	"hash/maphash"
	"strings"
	"unicode"
)

// shingleSize is the words per shingle: three tells reworded text from
// copied text while one changed word costs only three shingles.
const shingleSize = 3

var shingleSeed = maphash.MakeSeed()

// words splits text into lowercased runs of letters and digits: the
// shingling's own token rule (no stemming: a copy is a copy).
func words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// shingles is the set of hashed word n-grams of text; a text shorter than
// n words is one shingle of all its words.
func shingles(text string) map[uint64]struct{} {
	ws := words(text)
	n := min(shingleSize, len(ws))
	out := make(map[uint64]struct{}, len(ws))
	for i := 0; n > 0 && i+n <= len(ws); i++ {
		out[maphash.String(shingleSeed, strings.Join(ws[i:i+n], " "))] = struct{}{}
	}
	return out
}

// jaccard is |a∩b| / |a∪b|; two empty sets are not similar.
func jaccard(a, b map[uint64]struct{}) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	if len(a) > len(b) {
		a, b = b, a
	}
	inter := 0
	for h := range a {
		if _, ok := b[h]; ok {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}

package powerfamily

import (
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/ai-memory/ai-memory/sdk/record"
)

// The extractive summary: every sentence of the sources is scored by its
// cosine to the centroid of all of them (term weights tf × log(1 +
// sentences / sentences holding the term), function words left out), and
// sentences are picked by maximal marginal relevance: first each source's
// best, then the best of the rest, each time penalised by its likeness to
// what was picked, until summaryBytes are used; a sentence too like a
// picked one (cosine ≥ redundantCosine) is never taken, so a fact the
// sources repeat appears once. The picks keep their order in the sources.
const (
	mmrLambda       = 0.7
	redundantCosine = 0.6
	summaryBytes    = 2000 // a summary's budget beyond each source's best sentence
)

type sentence struct {
	text   string
	source int
	vec    map[string]float64 // weights, L2-normalised
	score  float64
}

func extractiveSummary(texts []string, function map[string]bool) string {
	h := heuristics{function: function}
	var sents []sentence
	seen := map[string]bool{}
	df := map[string]int{}
	for i, t := range texts {
		for _, s := range sentenceTexts(t) {
			key := strings.ToLower(strings.Join(strings.Fields(s), " "))
			if seen[key] {
				continue // said word for word before
			}
			seen[key] = true
			tf := map[string]float64{}
			for _, tok := range tokens(s) {
				if h.content(tok) || valueRE.MatchString(tok) {
					tf[stem(tok)]++
				}
			}
			for k := range tf {
				df[k]++
			}
			sents = append(sents, sentence{text: s, source: i, vec: tf})
		}
	}
	if len(sents) == 0 {
		return cutBytes(strings.TrimSpace(strings.Join(texts, " ")), record.MaxContentBytes)
	}
	centroid := map[string]float64{}
	for i := range sents {
		for k, v := range sents[i].vec {
			sents[i].vec[k] = v * math.Log(1+float64(len(sents))/float64(df[k]))
		}
		normalise(sents[i].vec)
		for k, v := range sents[i].vec {
			centroid[k] += v
		}
	}
	normalise(centroid)
	for i := range sents {
		sents[i].score = cosine(sents[i].vec, centroid)
	}

	picked := make([]bool, len(sents))
	var chosen []int
	size := 0
	redundant := func(i int) (float64, bool) {
		most := 0.0
		for _, j := range chosen {
			most = max(most, cosine(sents[i].vec, sents[j].vec))
		}
		return most, most >= redundantCosine && len(sents[i].vec) > 0
	}
	take := func(i int) {
		picked[i] = true
		chosen = append(chosen, i)
		size += len(sents[i].text) + 1
	}
	// Each source's best sentence first: every source is represented.
	for src := range texts {
		best := -1
		for i, s := range sents {
			if s.source == src && (best < 0 || s.score > sents[best].score) {
				best = i
			}
		}
		if best >= 0 && size+len(sents[best].text)+1 <= record.MaxContentBytes {
			if _, r := redundant(best); !r {
				take(best)
			}
		}
	}
	for {
		best, bestMMR := -1, math.Inf(-1)
		for i := range sents {
			if picked[i] || size+len(sents[i].text)+1 > summaryBytes {
				continue
			}
			sim, r := redundant(i)
			if r {
				continue
			}
			if mmr := mmrLambda*sents[i].score - (1-mmrLambda)*sim; mmr > bestMMR {
				best, bestMMR = i, mmr
			}
		}
		if best < 0 {
			break
		}
		take(best)
	}
	slices.Sort(chosen) // sentences are in source order already
	out := make([]string, len(chosen))
	for n, i := range chosen {
		out[n] = sents[i].text
	}
	return cutBytes(strings.Join(out, " "), record.MaxContentBytes)
}

// cutBytes cuts s to at most n bytes at a rune boundary.
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// sentenceTexts splits text into sentences, each keeping its final
// punctuation (one is added where a line ends without).
func sentenceTexts(text string) []string {
	var out []string
	add := func(s string) {
		if s = strings.TrimSpace(s); s == "" {
			return
		}
		if !strings.ContainsRune(".!?;:", rune(s[len(s)-1])) {
			s += "."
		}
		out = append(out, s)
	}
	start := 0
	for _, m := range sentenceRE.FindAllStringIndex(text, -1) {
		end := m[0] + len(strings.TrimRight(text[m[0]:m[1]], " \t\r\n"))
		add(text[start:end])
		start = m[1]
	}
	add(text[start:])
	return out
}

func normalise(v map[string]float64) {
	n := 0.0
	for _, x := range v {
		n += x * x
	}
	if n == 0 {
		return
	}
	n = math.Sqrt(n)
	for k := range v {
		v[k] /= n
	}
}

func cosine(a, b map[string]float64) float64 {
	if len(a) > len(b) {
		a, b = b, a
	}
	dot := 0.0
	for k, x := range a {
		dot += x * b[k]
	}
	return dot
}

package keyword

import "sync"

// DropFunctionWords removes the terms of English function words ("what",
// "did", "the", ...) from a recall's query terms, so that a question's
// grammar does not outweigh its content words; terms made only of function
// words are kept as they are (the question has nothing else to match).
// Search does not use it: its contract is that every word must match.
func DropFunctionWords(terms []string) []string {
	stop := stopTerms()
	out := make([]string, 0, len(terms))
	for _, t := range terms {
		if !stop[t] {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return terms
	}
	return out
}

// stopTerms is the stop list as the index spells it: stemmed, apostrophes
// dropped ("don't" → "dont").
var stopTerms = sync.OnceValue(func() map[string]bool {
	m := make(map[string]bool, len(stopWords))
	for _, w := range stopWords {
		for _, t := range Terms(nil, w) {
			m[t] = true
		}
	}
	return m
})

// stopWords is the Snowball project's English stop list
// (snowballstem.org/algorithms/english/stop.txt).
var stopWords = []string{
	"i", "me", "my", "myself", "we", "our", "ours", "ourselves", "you", "your", "yours", "yourself",
	"yourselves", "he", "him", "his", "himself", "she", "her", "hers", "herself", "it", "its", "itself",
	"they", "them", "their", "theirs", "themselves", "what", "which", "who", "whom", "this", "that",
	"these", "those", "am", "is", "are", "was", "were", "be", "been", "being", "have", "has", "had",
	"having", "do", "does", "did", "doing", "would", "should", "could", "ought", "i'm", "you're",
	"he's", "she's", "it's", "we're", "they're", "i've", "you've", "we've", "they've", "i'd", "you'd",
	"he'd", "she'd", "we'd", "they'd", "i'll", "you'll", "he'll", "she'll", "we'll", "they'll",
	"isn't", "aren't", "wasn't", "weren't", "hasn't", "haven't", "hadn't", "doesn't", "don't",
	"didn't", "won't", "wouldn't", "shan't", "shouldn't", "can't", "cannot", "couldn't", "mustn't",
	"let's", "that's", "who's", "what's", "here's", "there's", "when's", "where's", "why's", "how's",
	"a", "an", "the", "and", "but", "if", "or", "because", "as", "until", "while", "of", "at", "by",
	"for", "with", "about", "against", "between", "into", "through", "during", "before", "after",
	"above", "below", "to", "from", "up", "down", "in", "out", "on", "off", "over", "under", "again",
	"further", "then", "once", "here", "there", "when", "where", "why", "how", "all", "any", "both",
	"each", "few", "more", "most", "other", "some", "such", "no", "nor", "not", "only", "own", "same",
	"so", "than", "too", "very",
}

// IsFunctionWord reports whether term is the term of an English function
// word (as DropFunctionWords drops them).
func IsFunctionWord(term string) bool { return stopTerms()[term] }

package retrieval

import (
	"fmt"
	"math"
	"strings"
)

// Notes generates the "notes" collection: 1,400 short technical notes and
// 210 questions about them, with graded judgements. It is a simulated
// collection in the manner of Azzopardi, de Rijke and Balog, "Building
// simulated queries for known-item topics" (SIGIR 2007): documents and
// queries are drawn from known topic models, so the judgements follow from
// how each document was made.
//
// The content words are invented (so no licence question arises), the
// function words and question forms are English. Each of 70 topics has 4
// core words, 20 general words that also occur elsewhere, and 3 facets of
// 3 words; a note is mostly about one facet (grade 2 for a query on it)
// and sometimes partly about a facet of another topic (grade 1). Words come
// inflected (-s, -ing, -ed, -er, -ation), so a query may not spell a word
// as the note does. Titles usually name the note's facet and topic, but a
// quarter are vague; tags, when present, are topic and facet words.
// Priority, tier and confidence are drawn independently of everything
// else, as in a store an agent filled over months: they say nothing about
// what a later question is about.
func Notes() *Collection {
	const (
		topics  = 70
		facets  = 3
		docs    = 1400
		seed    = 20260801
		backlen = 4000
	)
	r := newRNG(seed)
	words := newLexicon(r)
	background := words.take(backlen)
	backZipf := newZipf(backlen, 1.05)
	type topic struct {
		core, general []string
		facets        [facets][]string
	}
	ts := make([]topic, topics)
	for i := range ts {
		ts[i].core = words.take(4)
		for range 20 {
			ts[i].general = append(ts[i].general, background[50+r.intn(1950)])
		}
		for f := range facets {
			for range 3 {
				if r.chance(0.3) {
					ts[i].facets[f] = append(ts[i].facets[f], background[300+r.intn(backlen-300)])
				} else {
					ts[i].facets[f] = append(ts[i].facets[f], words.take(1)[0])
				}
			}
		}
	}
	z3, z4, z20 := newZipf(3, 1), newZipf(4, 1), newZipf(20, 1)
	funcZipf := newZipf(len(functionWords), 1)

	c := &Collection{Name: "notes", Qrels: map[string]map[string]int{}}
	type about struct{ topic, facet int }
	primary := make([]about, docs)
	secondary := make([]about, docs)
	for i := range docs {
		p := about{r.intn(topics), r.intn(facets)}
		s := about{-1, -1}
		if r.chance(0.4) {
			s = about{(p.topic + 1 + r.intn(topics-1)) % topics, r.intn(facets)}
		}
		primary[i], secondary[i] = p, s
		t := &ts[p.topic]
		length := int(math.Round(math.Exp(math.Log(90) + 0.6*r.normal())))
		length = min(max(length, 15), 600)
		var text []string
		for range length {
			u := r.float()
			var w string
			switch {
			case u < 0.40:
				text = append(text, functionWords[funcZipf.draw(r)])
				continue
			case u < 0.50:
				w = t.core[z4.draw(r)]
			case u < 0.62:
				w = t.facets[p.facet][z3.draw(r)]
			case u < 0.74:
				w = t.general[z20.draw(r)]
			case s.topic >= 0 && u < 0.77:
				w = ts[s.topic].core[z4.draw(r)]
			case s.topic >= 0 && u < 0.82:
				w = ts[s.topic].facets[s.facet][z3.draw(r)]
			default:
				w = background[backZipf.draw(r)]
			}
			text = append(text, inflect(r, w))
		}
		var title string
		if r.chance(0.25) {
			title = fmt.Sprintf("%s %s %d", capitalize(inflect(r, background[backZipf.draw(r)])), pick(r, []string{"notes", "follow-up", "summary", "log"}), 1+r.intn(40))
		} else {
			parts := []string{inflect(r, t.facets[p.facet][z3.draw(r)])}
			if r.chance(0.4) {
				parts = append(parts, inflect(r, t.facets[p.facet][z3.draw(r)]))
			}
			parts = append(parts, pick(r, []string{"of", "in", "for", "and"}), inflect(r, t.core[z4.draw(r)]))
			if r.chance(0.3) {
				parts = append(parts, pick(r, []string{"with", "under", "after"}), inflect(r, t.general[z20.draw(r)]))
			}
			title = capitalize(strings.Join(parts, " "))
		}
		var tags []string
		if r.chance(0.5) {
			tags = append(tags, t.core[0])
			if r.chance(0.3) {
				tags = append(tags, t.facets[p.facet][0])
			}
		}
		conf := math.Round((0.5+0.5*r.float())*100) / 100
		c.Docs = append(c.Docs, Doc{
			ID:         fmt.Sprintf("n%04d", i+1),
			Namespace:  "notes",
			Title:      fmt.Sprintf("%s (#%d)", title, i+1), // titles are unique in a namespace
			Content:    sentences(r, text),
			Tags:       tags,
			Priority:   1 + r.intn(10),
			Tier:       pick(r, []string{"short", "mid", "mid", "long", "long"}),
			Confidence: &conf,
		})
	}

	forms := []string{"what is known about %s", "what did we decide about %s", "how does %s work",
		"which notes describe %s", "are there any results on %s", "what do we know about %s and how was it done",
		"can you find what was said about %s", "%s"}
	links := []string{"of", "in", "for", "and", "with", "on"}
	n := 0
	for ti := range ts {
		for f := range facets {
			t := &ts[ti]
			phrase := []string{inflect(r, t.facets[f][z3.draw(r)])}
			add := func(w string) {
				phrase = append(phrase, pick(r, links), inflect(r, w))
			}
			if r.chance(0.8) {
				add(t.core[z4.draw(r)])
			}
			if r.chance(0.4) {
				add(t.facets[f][z3.draw(r)])
			}
			if r.chance(0.5) {
				add(t.general[z20.draw(r)])
			}
			if r.chance(0.25) {
				add(background[backZipf.draw(r)])
			}
			form := forms[r.intn(len(forms))]
			if r.chance(0.5) {
				phrase = append([]string{"the"}, phrase...)
			}
			n++
			q := Query{ID: fmt.Sprintf("q%03d", n), Namespace: "notes", Text: fmt.Sprintf(form, strings.Join(phrase, " ")) + "?", After: docs}
			for i := range docs {
				switch (about{ti, f}) {
				case primary[i]:
					c.judge(q.ID, c.Docs[i].ID, 2)
				case secondary[i]:
					c.judge(q.ID, c.Docs[i].ID, 1)
				}
			}
			if len(c.Qrels[q.ID]) > 0 {
				c.Queries = append(c.Queries, q)
			}
		}
	}
	// Stored in random order: a store is not filled topic by topic.
	for i := len(c.Docs) - 1; i > 0; i-- {
		j := r.intn(i + 1)
		c.Docs[i], c.Docs[j] = c.Docs[j], c.Docs[i]
	}
	return c
}

// inflect gives w one of the endings English words take.
func inflect(r *rng, w string) string {
	u := r.float()
	switch {
	case u < 0.5:
		return w
	case u < 0.7:
		return w + "s"
	case u < 0.8:
		return w + "ing"
	case u < 0.9:
		return w + "ed"
	case u < 0.95:
		return w + "er"
	}
	return w + "ation"
}

// sentences joins words into sentences of 6 to 20 words.
func sentences(r *rng, words []string) string {
	var b strings.Builder
	for len(words) > 0 {
		n := min(len(words), 6+r.intn(15))
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(capitalize(strings.Join(words[:n], " ")))
		b.WriteByte('.')
		words = words[n:]
	}
	return b.String()
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// lexicon invents distinct words from syllables; take hands out unused ones.
type lexicon struct {
	r    *rng
	seen map[string]bool
}

func newLexicon(r *rng) *lexicon {
	l := &lexicon{r: r, seen: map[string]bool{}}
	for _, w := range functionWords {
		l.seen[w] = true
	}
	return l
}

var (
	onsets = []string{"b", "br", "c", "ch", "d", "dr", "f", "fl", "g", "gr", "h", "j", "k", "l", "m", "n", "p", "pl", "qu", "r", "s", "sh", "st", "t", "tr", "v", "w", "z"}
	vowels = []string{"a", "e", "i", "o", "u", "ai", "ea", "ou"}
	codas  = []string{"n", "r", "l", "m", "t", "nd", "rk", "lt", "v", "p"}
)

func (l *lexicon) take(n int) []string {
	out := make([]string, 0, n)
	for len(out) < n {
		var b strings.Builder
		syll := 2 + l.r.intn(2)
		for i := range syll {
			b.WriteString(pick(l.r, onsets))
			b.WriteString(pick(l.r, vowels))
			if i == syll-1 || l.r.chance(0.3) {
				b.WriteString(pick(l.r, codas))
			}
		}
		w := b.String()
		if !l.seen[w] {
			l.seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// functionWords are common English function words, most frequent first.
var functionWords = strings.Fields(`the of and to a in is that for it as with was on be by this are or
from at which an have not but they has had were their been more also can one its there all would
these than other into some may such when only what who how about over after between both each used
use using however many most very same through where while within without under whether during do
does did our we you your he she them his her then so if no any should could will must just well
new first two three our those here why because before again`)

package retrieval

import (
	"flag"
	"math"
	"slices"
	"testing"

	"github.com/ai-memory/ai-memory/internal/engine/keyword"
)

// The variants below are how the ranking changes of issue 8 were chosen
// before they went into the engine: each scores both shipped collections
// offline with the engine's own analyzer (Snowball stems) and BM25, no
// priors, the collection's statistics as stored so far. Run with
//
//	go test ./e2e/retrieval -run TestVariants -variants -v
var variants = flag.Bool("variants", false, "score the offline ranking variants")

// variant is one ranking: field weights (title and tags vs content, by
// repetition or, with perFieldNorm, BM25F with each field's own length
// normalisation), stop words dropped from the query, RM3 feedback.
type variant struct {
	name            string
	titleW, tagW    float64
	stop            bool
	rm3             bool
	fbDocs, fbTerms int
	fbWeight        float64
	perFieldNorm    bool
	// fuse, when set, gets the keyword top 30 with their scores and the
	// query's own weight (the sum of its terms' idf) and returns the
	// ranking scored instead (hybrid variants, models_test.go).
	fuse func(q Query, keyword []string, scores []float64, self float64) []string
}

type fdoc struct {
	d      Doc
	tf     map[string]float64
	length float64
	ttf    map[string]float64 // title+tags
	tlen   float64
	ctf    map[string]float64
	clen   float64
}

// stopSet is the Snowball English stop list, stemmed.
func stopSet() map[string]bool {
	m := map[string]bool{}
	for _, w := range snowballStop {
		for _, t := range keyword.Terms(nil, w) {
			m[t] = true
		}
	}
	return m
}

var snowballStop = []string{"i", "me", "my", "myself", "we", "our", "ours", "ourselves", "you", "your", "yours", "yourself", "yourselves", "he", "him", "his", "himself", "she", "her", "hers", "herself", "it", "its", "itself", "they", "them", "their", "theirs", "themselves", "what", "which", "who", "whom", "this", "that", "these", "those", "am", "is", "are", "was", "were", "be", "been", "being", "have", "has", "had", "having", "do", "does", "did", "doing", "would", "should", "could", "ought", "i'm", "you're", "he's", "she's", "it's", "we're", "they're", "i've", "you've", "we've", "they've", "i'd", "you'd", "he'd", "she'd", "we'd", "they'd", "i'll", "you'll", "he'll", "she'll", "we'll", "they'll", "isn't", "aren't", "wasn't", "weren't", "hasn't", "haven't", "hadn't", "doesn't", "don't", "didn't", "won't", "wouldn't", "shan't", "shouldn't", "can't", "cannot", "couldn't", "mustn't", "let's", "that's", "who's", "what's", "here's", "there's", "when's", "where's", "why's", "how's", "a", "an", "the", "and", "but", "if", "or", "because", "as", "until", "while", "of", "at", "by", "for", "with", "about", "against", "between", "into", "through", "during", "before", "after", "above", "below", "to", "from", "up", "down", "in", "out", "on", "off", "over", "under", "again", "further", "then", "once", "here", "there", "when", "where", "why", "how", "all", "any", "both", "each", "few", "more", "most", "other", "some", "such", "no", "nor", "not", "only", "own", "same", "so", "than", "too", "very"}

func run(c *Collection, v variant) Scores {
	stops := stopSet()
	var docs []fdoc
	df := map[string]int{}
	total, ttotal, ctotal := 0.0, 0.0, 0.0
	var tally Tally
	qi := 0
	score := func(q Query) []string {
		terms := keyword.Query(q.Text)
		if v.stop {
			var keep []string
			for _, x := range terms {
				if !stops[x] {
					keep = append(keep, x)
				}
			}
			if len(keep) > 0 {
				terms = keep
			}
		}
		n := float64(len(docs))
		avg := total / n
		tavg, cavg := ttotal/n, ctotal/n
		type sc struct {
			i int
			s float64
		}
		rank := func(weights map[string]float64) []sc {
			var out []sc
			for i, d := range docs {
				if q.Namespace != "" && d.d.Namespace != q.Namespace {
					continue
				}
				s := 0.0
				if v.perFieldNorm {
					for term, w := range weights {
						tt, ct := d.ttf[term], d.ctf[term]
						if tt == 0 && ct == 0 {
							continue
						}
						f := v.titleW*tt/(1-0.5+0.5*d.tlen/tavg) + ct/(0.25+0.75*d.clen/cavg)
						idf := math.Log(1 + (n-float64(df[term])+0.5)/(float64(df[term])+0.5))
						s += w * idf * f * 2.2 / (f + 1.2)
					}
					if s > 0 {
						out = append(out, sc{i, s})
					}
					continue
				}
				for term, w := range weights {
					f := d.tf[term]
					if f == 0 {
						continue
					}
					idf := math.Log(1 + (n-float64(df[term])+0.5)/(float64(df[term])+0.5))
					s += w * idf * f * 2.2 / (f + 1.2*(0.25+0.75*d.length/avg))
				}
				if s > 0 {
					out = append(out, sc{i, s})
				}
			}
			slices.SortStableFunc(out, func(a, b sc) int {
				if a.s > b.s {
					return -1
				}
				if a.s < b.s {
					return 1
				}
				return 0
			})
			return out
		}
		w := map[string]float64{}
		for _, x := range terms {
			w[x] = 1
		}
		res := rank(w)
		if v.rm3 && len(res) > 0 {
			// RM3: feedback model from top fbDocs weighted by normalized score.
			fb := map[string]float64{}
			k := min(v.fbDocs, len(res))
			sum := 0.0
			for _, r := range res[:k] {
				sum += r.s
			}
			for _, r := range res[:k] {
				d := docs[r.i]
				for term, f := range d.tf {
					if stops[term] {
						continue
					}
					fb[term] += (r.s / sum) * f / d.length
				}
			}
			type tw struct {
				t string
				w float64
			}
			var list []tw
			for term, x := range fb {
				list = append(list, tw{term, x})
			}
			slices.SortFunc(list, func(a, b tw) int {
				if a.w > b.w {
					return -1
				}
				if a.w < b.w {
					return 1
				}
				if a.t < b.t {
					return -1
				}
				return 1
			})
			list = list[:min(v.fbTerms, len(list))]
			tot := 0.0
			for _, x := range list {
				tot += x.w
			}
			nw := map[string]float64{}
			for term := range w {
				nw[term] = (1 - v.fbWeight) / float64(len(w))
			}
			for _, x := range list {
				nw[x.t] += v.fbWeight * x.w / tot
			}
			res = rank(nw)
		}
		cut := 10
		if v.fuse != nil {
			cut = 30 // the engine's keyword candidates: max(3·limit, 30)
		}
		var ids []string
		var scores []float64
		for _, r := range res[:min(cut, len(res))] {
			ids = append(ids, docs[r.i].d.ID)
			scores = append(scores, r.s)
		}
		if v.fuse != nil {
			self := 0.0
			for _, x := range terms {
				self += math.Log(1 + (n-float64(df[x])+0.5)/(float64(df[x])+0.5))
			}
			ids = v.fuse(q, ids, scores, self)
		}
		return ids[:min(10, len(ids))]
	}
	queries := slices.Clone(c.Queries)
	slices.SortStableFunc(queries, func(a, b Query) int { return a.After - b.After })
	ask := func() {
		for ; qi < len(queries) && queries[qi].After <= len(docs); qi++ {
			tally.Add(score(queries[qi]), c.Qrels[queries[qi].ID])
		}
	}
	for _, d := range c.Docs {
		ask()
		tf := map[string]float64{}
		add := func(text string, w float64) {
			for _, x := range keyword.Terms(nil, text) {
				tf[x] += w
			}
		}
		add(d.Title, v.titleW)
		add(d.Content, 1)
		for _, g := range d.Tags {
			add(g, v.tagW)
		}
		l := 0.0
		for term, f := range tf {
			df[term]++
			l += f
		}
		ttf, ctf := map[string]float64{}, map[string]float64{}
		tl, cl := 0.0, 0.0
		for _, x := range keyword.Terms(nil, d.Title) {
			ttf[x]++
			tl++
		}
		for _, g := range d.Tags {
			for _, x := range keyword.Terms(nil, g) {
				ttf[x]++
				tl++
			}
		}
		for _, x := range keyword.Terms(nil, d.Content) {
			ctf[x]++
			cl++
		}
		docs = append(docs, fdoc{d, tf, l, ttf, tl, ctf, cl})
		total += l
		ttotal += tl
		ctotal += cl
	}
	ask()
	return tally.Mean()
}

func TestVariants(t *testing.T) {
	if !*variants {
		t.Skip("run with -variants")
	}
	for _, name := range []string{"notes", "dialogue"} {
		c, err := Load(Dir, name)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []variant{
			{name: "bm25-stem", titleW: 1, tagW: 1},
			{name: "+stop", titleW: 1, tagW: 1, stop: true},
			{name: "+stop t2", titleW: 2, tagW: 1, stop: true},
			{name: "+stop t2 g2", titleW: 2, tagW: 2, stop: true},
			{name: "+stop t3 g2", titleW: 3, tagW: 2, stop: true},
			{name: "+stop t1.5 g1.5", titleW: 1.5, tagW: 1.5, stop: true},
			{name: "t2 g2 nostop", titleW: 2, tagW: 2},
			{name: "+stop f1", titleW: 1, tagW: 1, stop: true, perFieldNorm: true},
			{name: "+stop f2", titleW: 2, tagW: 1, stop: true, perFieldNorm: true},
			{name: "+stop f3", titleW: 3, tagW: 1, stop: true, perFieldNorm: true},
			{name: "+stop f0.5", titleW: 0.5, tagW: 1, stop: true, perFieldNorm: true},
			{name: "+stop t2 g2 rm3", titleW: 2, tagW: 2, stop: true, rm3: true, fbDocs: 5, fbTerms: 10, fbWeight: 0.3},
			{name: "+stop t2 g2 rm3b", titleW: 2, tagW: 2, stop: true, rm3: true, fbDocs: 3, fbTerms: 5, fbWeight: 0.2},
		} {
			t.Logf("%-8s %-18s %v", name, v.name, run(c, v))
		}
	}
}

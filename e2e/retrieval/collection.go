// Package retrieval holds the retrieval benchmark's test collections, the
// generators that made them, a textbook BM25 baseline and the measures
// (recall@k, nDCG@k). The e2e tests store a collection through
// memory_store and ask its queries through memory_recall over MCP.
package retrieval

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Doc is one memory of a collection, stored as it is here.
type Doc struct {
	ID         string   `json:"id"`
	Namespace  string   `json:"namespace"`
	Title      string   `json:"title"`
	Content    string   `json:"content"`
	Tags       []string `json:"tags,omitempty"`
	Priority   int      `json:"priority,omitempty"` // 0 = the default
	Tier       string   `json:"tier,omitempty"`     // "" = the default
	Confidence *float64 `json:"confidence,omitempty"`
}

// Query is one memory_recall, asked once the first After docs are stored.
type Query struct {
	ID        string `json:"id"`
	Namespace string `json:"namespace"`
	Text      string `json:"text"`
	After     int    `json:"after"`
}

// Collection is docs, queries and graded judgements (qrels: query id →
// doc id → grade, 1 = partly relevant, 2 = relevant).
type Collection struct {
	Name    string
	Docs    []Doc
	Queries []Query
	Qrels   map[string]map[string]int
}

// Files of a collection in its directory. qrels.txt is TREC format:
// "query-id 0 doc-id grade".
const (
	docsFile    = "docs.jsonl"
	queriesFile = "queries.jsonl"
	qrelsFile   = "qrels.txt"
)

// Dir is where the shipped collections live, relative to this package.
const Dir = "testdata"

// Load reads the collection name from dir.
func Load(dir, name string) (*Collection, error) {
	c := &Collection{Name: name, Qrels: map[string]map[string]int{}}
	base := filepath.Join(dir, name)
	if err := readJSONL(filepath.Join(base, docsFile), &c.Docs); err != nil {
		return nil, err
	}
	if err := readJSONL(filepath.Join(base, queriesFile), &c.Queries); err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(base, qrelsFile))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 4 {
			return nil, fmt.Errorf("%s: bad qrels line %q", name, sc.Text())
		}
		grade, err := strconv.Atoi(fields[3])
		if err != nil {
			return nil, fmt.Errorf("%s: bad grade in %q", name, sc.Text())
		}
		c.judge(fields[0], fields[2], grade)
	}
	return c, sc.Err()
}

func (c *Collection) judge(query, doc string, grade int) {
	if c.Qrels[query] == nil {
		c.Qrels[query] = map[string]int{}
	}
	c.Qrels[query][doc] = max(c.Qrels[query][doc], grade)
}

func readJSONL[T any](path string, out *[]T) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	dec := json.NewDecoder(f)
	for dec.More() {
		var v T
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		*out = append(*out, v)
	}
	return nil
}

// Files renders the collection as its three files (name → content).
func (c *Collection) Files() map[string][]byte {
	out := map[string][]byte{}
	var b strings.Builder
	for _, d := range c.Docs {
		line, _ := json.Marshal(d)
		b.Write(line)
		b.WriteByte('\n')
	}
	out[docsFile] = []byte(b.String())
	b.Reset()
	for _, q := range c.Queries {
		line, _ := json.Marshal(q)
		b.Write(line)
		b.WriteByte('\n')
	}
	out[queriesFile] = []byte(b.String())
	b.Reset()
	for _, q := range c.Queries {
		docs := make([]string, 0, len(c.Qrels[q.ID]))
		for d := range c.Qrels[q.ID] {
			docs = append(docs, d)
		}
		slices.Sort(docs)
		for _, d := range docs {
			fmt.Fprintf(&b, "%s 0 %s %d\n", q.ID, d, c.Qrels[q.ID][d])
		}
	}
	out[qrelsFile] = []byte(b.String())
	return out
}

// Subset keeps, in order, the docs and queries for which keepDoc and
// keepQuery are true, and the judgements of kept docs.
func (c *Collection) Subset(keepDoc func(i int, d Doc) bool, keepQuery func(Query) bool) *Collection {
	out := &Collection{Name: c.Name + "-subset", Qrels: map[string]map[string]int{}}
	pos := map[int]int{} // index in c.Docs → how many kept docs precede it
	for i, d := range c.Docs {
		pos[i] = len(out.Docs)
		if keepDoc(i, d) {
			out.Docs = append(out.Docs, d)
		}
	}
	pos[len(c.Docs)] = len(out.Docs)
	kept := map[string]bool{}
	for _, d := range out.Docs {
		kept[d.ID] = true
	}
	for _, q := range c.Queries {
		if !keepQuery(q) {
			continue
		}
		q.After = pos[q.After]
		out.Queries = append(out.Queries, q)
		for d, g := range c.Qrels[q.ID] {
			if kept[d] {
				out.judge(q.ID, d, g)
			}
		}
	}
	return out
}

package index

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ai-memory/ai-memory/internal/engine/keyword"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// TestApplyMatchesRecords drives the index through random creates,
// updates (with and without new terms) and deletes, enough for long lists
// with block tables, splits, emptied blocks and a compaction, and checks it
// against the records after every step.
func TestApplyMatchesRecords(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("alpha beta gamma delta eps zeta eta theta iota kappa lambda mu")
	text := func() string {
		var b strings.Builder
		for range 1 + r.IntN(8) {
			// Skewed: the first words land in most memories.
			b.WriteString(words[min(r.IntN(len(words)), r.IntN(len(words)))] + " ")
		}
		fmt.Fprintf(&b, "w%d", r.IntN(50))
		return b.String()
	}
	x := New()
	records := map[string]*aimemoryv1.Memory{}
	var ids []string
	// A snapshot taken mid-way and the ids changed since, as a backend's log.
	var snap []byte
	var atSnap map[string]*aimemoryv1.Memory
	logged := map[string]bool{}
	change := func(id string, m *aimemoryv1.Memory) Change {
		if snap != nil {
			logged[id] = true
		}
		c := Change{ID: id, Memory: m, Reindex: true}
		if old := records[id]; old != nil {
			c.OldTerms, _ = keyword.Document(old.Title, old.Content, old.Tags)
		}
		if m != nil {
			c.NewTerms, _ = keyword.Document(m.Title, m.Content, m.Tags)
		}
		return c
	}
	for step := range 3000 {
		var cs []Change
		for range 1 + r.IntN(3) {
			switch op := r.IntN(10); {
			case op < 5 || len(ids) == 0:
				id := fmt.Sprintf("id-%05d", step*10+len(cs))
				m := &aimemoryv1.Memory{Id: id, Title: text(), Content: text(), Namespace: fmt.Sprintf("ns%d", r.IntN(3)),
					Priority: int32(1 + r.IntN(10)), Confidence: r.Float64(), UpdatedAt: int64(step)}
				if r.IntN(2) == 0 {
					m.Tags = []string{fmt.Sprintf("t%d", r.IntN(4))}
				}
				cs = append(cs, change(id, m))
				records[id] = m
				ids = append(ids, id)
			case op < 8:
				id := ids[r.IntN(len(ids))]
				m := &aimemoryv1.Memory{Id: id, Title: records[id].Title, Content: text(), Tags: records[id].Tags, Namespace: records[id].Namespace, Priority: 5}
				c := change(id, m)
				if r.IntN(3) == 0 { // no new terms
					m.Content = records[id].Content
					c = Change{ID: id, Memory: m}
				}
				cs = append(cs, c)
				records[id] = m
			default:
				i := r.IntN(len(ids))
				id := ids[i]
				cs = append(cs, change(id, nil))
				delete(records, id)
				ids = append(ids[:i], ids[i+1:]...)
			}
		}
		x.Apply(cs)
		if step == 2000 {
			snap, atSnap = x.Encode(), maps.Clone(records)
		}
		if step%97 == 0 || step > 2900 {
			if err := x.Verify(records); err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
		}
		if step == 1500 { // delete most: the next Apply compacts
			for len(ids) > 20 {
				x.Apply([]Change{change(ids[0], nil)})
				delete(records, ids[0])
				ids = ids[1:]
			}
		}
	}
	if err := x.Verify(records); err != nil {
		t.Fatal(err)
	}
	checkSnapshot(t, x, records)
	checkIntersect(t, x)

	// The snapshot plus a replay of the log is the index of the records.
	y, err := Decode(snap)
	if err != nil {
		t.Fatal(err)
	}
	var replay []Change
	for id := range logged {
		if old := atSnap[id]; old != nil {
			terms, _ := keyword.Document(old.Title, old.Content, old.Tags)
			replay = append(replay, Change{ID: id, OldTerms: terms})
		}
		if m := records[id]; m != nil {
			terms, _ := keyword.Document(m.Title, m.Content, m.Tags)
			replay = append(replay, Change{ID: id, Memory: m, Reindex: true, NewTerms: terms})
		}
	}
	y.Replay(replay)
	if err := y.Verify(records); err != nil {
		t.Fatalf("snapshot + replay of %d logged: %v", len(logged), err)
	}

	big := 0
	for i := range x.lists {
		if x.lists[i].big != 0 {
			big++
		}
	}
	if big == 0 {
		t.Fatal("no list grew a block table")
	}
}

// checkSnapshot: a decoded snapshot is the same index, and every damaged
// or cut one is refused without a panic.
func checkSnapshot(t *testing.T, x *Index, records map[string]*aimemoryv1.Memory) {
	t.Helper()
	snap := x.Encode()
	y, err := Decode(snap)
	if err != nil {
		t.Fatal(err)
	}
	if err := y.Verify(records); err != nil {
		t.Fatalf("decoded snapshot: %v", err)
	}
	for _, q := range []string{"alpha", "beta gamma", "w3", "zeta eta theta"} {
		terms, _ := keyword.Document(q, "", nil)
		var ts []string
		for _, tf := range terms {
			ts = append(ts, tf.Term)
		}
		for _, all := range []bool{true, false} {
			a := x.Search(Query{Terms: ts, All: all, Limit: 10, Now: 5})
			b := y.Search(Query{Terms: ts, All: all, Limit: 10, Now: 5})
			if fmt.Sprint(a) != fmt.Sprint(b) {
				t.Fatalf("search %q: %v from the snapshot, %v before", q, b, a)
			}
		}
	}
	for n := 0; n < len(snap); n += 1 + len(snap)/50 {
		if _, err := Decode(snap[:n]); err == nil {
			t.Fatalf("a snapshot cut to %d of %d bytes decoded", n, len(snap))
		}
		bad := append([]byte(nil), snap...)
		bad[n] ^= 0x41
		if _, err := Decode(bad); err == nil {
			t.Fatalf("a snapshot with byte %d flipped decoded", n)
		}
		// Past the checksum (as an encoder bug would be), the decoder's
		// own checks must still hold: no panic, and an index that Verify
		// can read if it decodes at all.
		body := bad[:len(bad)-4]
		bad = binary.LittleEndian.AppendUint32(body, crc32.Checksum(body, castagnoli))
		if z, err := Decode(bad); err == nil {
			_ = z.Verify(records)
		}
	}
}

// checkIntersect: ALL queries answer the same, scores to the bit, whether
// long lists are intersected block by block or scanned.
func checkIntersect(t *testing.T, x *Index) {
	t.Helper()
	queries := [][]string{}
	for i := range 50 {
		queries = append(queries, []string{fmt.Sprintf("w%d", i), "alpha"}, []string{fmt.Sprintf("w%d", i), "alpha", "beta", "gamma"})
	}
	for _, q := range queries {
		var ts []string
		for _, w := range q {
			terms, _ := keyword.Document(w, "", nil)
			ts = append(ts, terms[0].Term)
		}
		a := x.Search(Query{Terms: ts, All: true, Limit: 20, Now: 5})
		useIntersect = false
		b := x.Search(Query{Terms: ts, All: true, Limit: 20, Now: 5})
		useIntersect = true
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Fatalf("%q: intersected %v, scanned %v", q, a, b)
		}
	}
}

// TestPrefixMatchesATermNoMemoryHolds: under All with Prefix, a query term
// no memory holds matches the terms it begins ("postgres" finds
// "PostgreSQL"), a memory holding two such terms counts the query term
// once (the other terms still must match), an exact term is never
// widened, and a term under minPrefix bytes is not.
func TestPrefixMatchesATermNoMemoryHolds(t *testing.T) {
	x := New()
	var cs []Change
	for id, text := range map[string]string{
		"db":    "We chose PostgreSQL 16 over MySQL for replication",
		"both":  "postgresql and postgrest serve the replication api",
		"other": "PostgreSQL backups run nightly",
		"go":    "gofumpt in CI for the Go services",
	} {
		tf, _ := keyword.Document(id, text, nil)
		cs = append(cs, Change{ID: id, Memory: &aimemoryv1.Memory{Id: id, Title: id, Content: text, Namespace: "n"}, NewTerms: tf, Reindex: true})
	}
	x.Apply(cs)
	search := func(q string, prefix bool) []string {
		var ids []string
		for _, h := range x.Search(Query{Terms: keyword.Query(q), All: true, Prefix: prefix, Limit: 10, Now: 1}) {
			ids = append(ids, h.ID)
		}
		slices.Sort(ids)
		return ids
	}
	for _, c := range []struct {
		q      string
		prefix bool
		want   string
	}{
		{"postgres", false, "[]"},
		{"postgres", true, "[both db other]"},
		{"postgres replication", true, "[both db]"},
		{"gofumpt", true, "[go]"},
		{"gof", true, "[go]"},
		{"go", true, "[go]"},
		{"po", true, "[]"},
	} {
		if got := fmt.Sprint(search(c.q, c.prefix)); got != c.want {
			t.Errorf("%q prefix %v: %s, want %s", c.q, c.prefix, got, c.want)
		}
	}
}

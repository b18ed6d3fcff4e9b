package keyword

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestTerms(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"Running runs RUNNER", []string{"run", "run", "runner"}},
		{"e-mail", []string{"e", "mail", "email"}},
		{"state-of-the-art", []string{"state", "of", "the", "art", "stateoftheart"}},
		{"memory_store", []string{"memori", "store", "memorystor"}},
		{"-flag trailing- a--b", []string{"flag", "trail", "a", "b"}},
		{"don't user's", []string{"dont", "user"}},
		{"'quoted'", []string{"quot"}},
		{"pass\u200bword", []string{"password"}},
		{"\u202edeploy\u202c", []string{"deploy"}},
		{"v1.2.3 foo:bar (baz)", []string{"v1", "2", "3", "foo", "bar", "baz"}},
		{"Café naïve", []string{"café", "naïv"}},
		{"日本語 テキスト", []string{"日本語", "テキスト"}},
		{strings.Repeat("x", MaxTermBytes+1) + " kept", []string{"kept"}},
		{"", nil},
		{"  \t\n ", nil},
	}
	for _, tc := range tests {
		if got := Terms(nil, tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Terms(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestQuery(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"deploy rollback deploy", []string{"deploy", "rollback"}},
		{`"deploy" AND (rollback*) OR NOT near`, []string{"deploy", "rollback"}},
		{"and Or nOt NEAR", nil},
		{"android oracle", []string{"android", "oracl"}},
		{"a+b c^d {e} f|g h:i", []string{"a", "b", "c", "d", "e", "f", "g", "h", "i"}},
		{"A\u200bND deploy", []string{"deploy"}},
		{"***", nil},
		{"e-mail", []string{"e", "mail", "email"}},
	}
	for _, tc := range tests {
		got := Query(tc.in)
		if len(got) == 0 {
			got = nil
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Query(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// The index and a query spell every word the same way.
func TestQueryMatchesDocument(t *testing.T) {
	text := "Configuring the e-mail relay: don't restart_services twice (v2)."
	doc, n := Document("Relay setup", text, []string{"ops-notes"})
	if n == 0 {
		t.Fatal("empty document")
	}
	have := map[string]bool{}
	for _, tf := range doc {
		have[tf.Term] = true
	}
	for _, w := range strings.Fields("configured relays e-mail don't restart_services ops-notes setup v2 twice") {
		for _, term := range Query(w) {
			if !have[term] {
				t.Errorf("query word %q → term %q not in the document's terms %v", w, term, doc)
			}
		}
	}
}

func TestDocumentCounts(t *testing.T) {
	doc, n := Document("Go go", "GO gone", []string{"go"})
	want := []TermFreq{{"go", 4}, {"gone", 1}}
	if !reflect.DeepEqual(doc, want) || n != 5 {
		t.Errorf("Document = %v, %d", doc, n)
	}
}

func TestBM25(t *testing.T) {
	if got, want := IDF(1, 10), math.Log(1+9.5/1.5); math.Abs(got-want) > 1e-12 {
		t.Errorf("IDF = %v, want %v", got, want)
	}
	if IDF(10, 10) <= 0 {
		t.Error("IDF of a word in every document must stay positive")
	}
	// tf=1 in an average-length document: idf·2.2/2.2.
	if got := TermScore(2, 1, 10, 10); math.Abs(got-2) > 1e-12 {
		t.Errorf("TermScore = %v", got)
	}
	if TermScore(1, 1, 20, 10) >= TermScore(1, 1, 5, 10) {
		t.Error("longer documents must score lower for the same tf")
	}
}

func FuzzQuery(f *testing.F) {
	for _, s := range []string{"deploy AND rollback", "e-mail", "\u200b\u202e", "日本"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		for _, term := range Query(q) {
			if term == "" || len(term) > MaxTermBytes {
				t.Errorf("bad term %q", term)
			}
		}
	})
}

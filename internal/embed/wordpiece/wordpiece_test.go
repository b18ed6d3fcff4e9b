package wordpiece

import (
	"slices"
	"strings"
	"testing"
)

var vocab = []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "cafe", "un", "##aff", "##able", "go", "##fum", "##pt", ",", "!", "?", "我", "们", "x", "=", "1", ";", "a", "b"}

func tokenizer(t *testing.T, lower bool) *Tokenizer {
	t.Helper()
	// pad the vocabulary past Load's minimum with tokens no test uses
	words := slices.Clone(vocab)
	for i := len(words); i < 120; i++ {
		words = append(words, "unused"+strings.Repeat("z", i))
	}
	tok, err := Load(strings.NewReader(strings.Join(words, "\n")), lower)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestEncode(t *testing.T) {
	tok := tokenizer(t, true)
	for _, c := range []struct {
		text string
		want []string
	}{
		{"", []string{"[CLS]", "[SEP]"}},
		{"The CAFÉ", []string{"[CLS]", "the", "cafe", "[SEP]"}},                  // lower-cased, accent stripped
		{"unaffable!", []string{"[CLS]", "un", "##aff", "##able", "!", "[SEP]"}}, // longest match first, punctuation split
		{"gofumpt,the", []string{"[CLS]", "go", "##fum", "##pt", ",", "the", "[SEP]"}},
		{"我们", []string{"[CLS]", "我", "们", "[SEP]"}},                                   // CJK split per character
		{"x=1;\tthe\u200b\x00", []string{"[CLS]", "x", "=", "1", ";", "the", "[SEP]"}}, // control and format characters dropped
		{"unknownword the", []string{"[CLS]", "[UNK]", "the", "[SEP]"}},
		{strings.Repeat("a", 101) + " b", []string{"[CLS]", "[UNK]", "b", "[SEP]"}}, // over 100 characters: one [UNK]
	} {
		if got := tok.Tokens(tok.Encode(c.text, 512)); !slices.Equal(got, c.want) {
			t.Errorf("%q: %v, want %v", c.text, got, c.want)
		}
	}
}

func TestEncodeTruncates(t *testing.T) {
	tok := tokenizer(t, true)
	got := tok.Tokens(tok.Encode("the the the unaffable the", 5))
	want := []string{"[CLS]", "the", "the", "the", "[SEP]"}
	if !slices.Equal(got, want) {
		t.Fatalf("%v, want %v", got, want)
	}
	got = tok.Tokens(tok.Encode("the unaffable", 4))
	want = []string{"[CLS]", "the", "un", "[SEP]"} // cut inside a word, as the reference cuts
	if !slices.Equal(got, want) {
		t.Fatalf("%v, want %v", got, want)
	}
}

func TestCaseKeptWithoutLowerCasing(t *testing.T) {
	tok := tokenizer(t, false)
	if got := tok.Tokens(tok.Encode("The the", 512)); !slices.Equal(got, []string{"[CLS]", "[UNK]", "the", "[SEP]"}) {
		t.Fatalf("%v", got)
	}
}

func TestLoadNeedsSpecialTokens(t *testing.T) {
	if _, err := Load(strings.NewReader("a\nb\n"), true); err == nil || !strings.Contains(err.Error(), "[CLS]") {
		t.Fatalf("%v, want an error naming [CLS]", err)
	}
}

// TestWhole: a word is whole when the vocabulary holds it as one entry,
// after the same clean-up Encode does; a word it only spells in pieces is
// not.
func TestWhole(t *testing.T) {
	tok := tokenizer(t, true)
	words := tok.Words("The CAFÉ: gofumpt!")
	if want := []string{"the", "cafe", ":", "gofumpt", "!"}; !slices.Equal(words, want) {
		t.Fatalf("Words: %v, want %v", words, want)
	}
	for w, want := range map[string]bool{"the": true, "cafe": true, "gofumpt": false, "unaffable": false, "nothing": false} {
		if got := tok.Whole(w); got != want {
			t.Errorf("Whole(%q) = %v, want %v", w, got, want)
		}
	}
}

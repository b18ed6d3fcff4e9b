package boltstore

import (
	"errors"
	"slices"
	"testing"
	"unicode/utf8"

	"github.com/ai-memory/ai-memory/internal/engine/keyword"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// FuzzForgetPattern: for any pattern, a dry-run forget either refuses it
// with a short field error or matches exactly the memories whose indexed
// words hold every word of the pattern (checked against the analyser
// directly, not the store's term lists), and never writes.
// Run: go test -fuzz=FuzzForgetPattern ./internal/engine/storage/boltstore
func FuzzForgetPattern(f *testing.F) {
	for _, seed := range []string{
		"draft notes", "DRAFT", "drafting", "notes AND draft", "\"draft\" OR", "naïve café", "Straße",
		"", " ", "...", "a*b^c{d}", "x\x00y", "\xff\xfe", "the of and", "日本語 テキスト", "NEAR NOT",
	} {
		f.Add(seed)
	}
	s, _ := openTest(f, Options{})
	ctx := storagetest.Operator()
	var mems []*aimemoryv1.Memory
	for _, m := range []*aimemoryv1.Memory{
		storagetest.Mem("Draft notes", "for the meeting"),
		storagetest.Mem("Draft only", "a naïve café", storagetest.Tags("Straße")),
		storagetest.Mem("Notes", "drafting 日本語 テキスト", storagetest.InNS("f")),
		storagetest.Mem("Other", "the of and near", storagetest.Tier("long")),
	} {
		mems = append(mems, storagetest.Store(f, records.New(s), m))
	}
	f.Fuzz(func(t *testing.T, pattern string) {
		resp, err := records.New(s).Forget(ctx, &aimemoryv1.ForgetRequest{Pattern: pattern, DryRun: true})
		if err != nil {
			var fe *record.FieldError
			if !errors.As(err, &fe) || (fe.Field != "pattern" && fe.Field != "namespace") {
				t.Fatalf("Forget(%q) = %v, want a field error", pattern, err)
			}
			// A value is quoted to 64 characters (escaped, up to 10 bytes
			// each), then its size: bounded however long the pattern.
			if n := utf8.RuneCountInString(err.Error()); n > 800 {
				t.Errorf("error of %d characters quotes too much: %.80s…", n, err)
			}
			return
		}
		want := keyword.Query(pattern)
		var expect []string
		for _, m := range mems {
			terms, _ := keyword.Document(m.Title, m.Content, m.Tags)
			if !slices.ContainsFunc(want, func(w string) bool {
				return !slices.ContainsFunc(terms, func(tf keyword.TermFreq) bool { return tf.Term == w })
			}) {
				expect = append(expect, m.Id)
			}
		}
		var got []string
		for _, r := range resp.Memories {
			got = append(got, r.Id)
		}
		slices.Sort(got)
		slices.Sort(expect)
		if int(resp.Matched) != len(expect) || !slices.Equal(got, expect) {
			t.Fatalf("Forget(%q) (terms %q) matched %v, want %v", pattern, want, got, expect)
		}
		if n := s.Count(); n != len(mems) {
			t.Fatalf("a dry run changed the count to %d", n)
		}
	})
}

package keyword

import (
	"slices"
	"testing"
)

func TestDropFunctionWords(t *testing.T) {
	tests := []struct{ query, want []string }{
		{Query("What did Alice name her puppy?"), Query("Alice name puppy")},
		{Query("Who is the owner of billing, and why?"), Query("owner billing")},
		{Query("what did it do"), Query("what did it do")}, // nothing else to match
		{Query("don't deploy"), Query("deploy")},
		{nil, nil},
	}
	for _, tc := range tests {
		if got := DropFunctionWords(tc.query); !slices.Equal(got, tc.want) {
			t.Errorf("DropFunctionWords(%q) = %q, want %q", tc.query, got, tc.want)
		}
	}
}

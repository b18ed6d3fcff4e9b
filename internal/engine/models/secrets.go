package models

import (
	"slices"
	"sync"

	"github.com/DefangLabs/secret-detector/pkg/scanner"
	"github.com/DefangLabs/secret-detector/pkg/secrets"
)

// The secret check runs before any text leaves the machine: a memory that
// looks like it holds an API key, token, password or private key is never
// sent to an endpoint. The detector is DefangLabs/secret-detector, a
// maintained Go port of Yelp's detect-secrets.
var detector = sync.OnceValue(func() secrets.Scanner { return scanner.NewDefaultScanner() })

// Secrets names the kinds of secret found in text (none: nil). A detector
// failure counts as a finding: when in doubt, nothing is sent.
func Secrets(text string) []string {
	found, err := detector().Scan(text)
	if err != nil {
		return []string{"unscannable"}
	}
	var kinds []string
	for _, f := range found {
		if !slices.Contains(kinds, f.Type) {
			kinds = append(kinds, f.Type)
		}
	}
	return kinds
}

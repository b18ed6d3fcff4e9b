// Package apitoken keeps the API keys of `ai-memory serve --auth token`:
// each maps to a principal (the session identity of whoever presents it),
// optionally to the families and namespace prefixes it grants. Only a
// SHA-256 of each secret is stored (a key is 32 random bytes, so a fast
// hash is enough; there is nothing to brute-force), in D/http-tokens.json,
// mode 0600. The file is the single source: a running server rereads it
// when it changes, so `ai-memory token revoke` takes effect at once.
package apitoken

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/ai-memory/ai-memory/sdk/record"
)

// File is the token file's name in the data dir.
const File = "http-tokens.json"

// prefix starts every key, so a leaked one is recognisable (secret scanners).
const prefix = "aim_"

// Token is one stored key (never the secret itself).
type Token struct {
	ID         string     `json:"id"`
	Principal  string     `json:"principal"`
	Families   []string   `json:"families,omitempty"`   // nil = what the allowlist allows
	Namespaces []string   `json:"namespaces,omitempty"` // nil = the principal's own; see ValidateNamespaces
	Hash       string     `json:"sha256"`
	Created    time.Time  `json:"created"`
	Revoked    *time.Time `json:"revoked,omitempty"`
}

// AllNamespaces is the grant of every namespace; it stands alone.
const AllNamespaces = "*"

// ExactMark before a granted namespace limits the grant to that namespace
// itself: "=team-a" covers team-a, not team-a/x (plain "team-a" covers both).
const ExactMark = "="

// ValidateNamespaces is the one rule for a grant's namespaces, wherever the
// grant comes from (token create --namespace, a stored token, an OAuth
// claim): "*" alone, or one or more namespaces, each valid as a namespace
// and optionally marked exact ("=ns"). field names the source in errors.
func ValidateNamespaces(field string, grant []string) error {
	if len(grant) == 0 {
		return &record.FieldError{Field: field, Rule: "must list at least one namespace (or \"*\" alone for every namespace)"}
	}
	for i, ns := range grant {
		if ns == AllNamespaces {
			if len(grant) > 1 {
				return &record.FieldError{Field: field, Rule: "\"*\" (every namespace) must stand alone"}
			}
			continue
		}
		if err := record.ValidateNamespace(fmt.Sprintf("%s[%d]", field, i), strings.TrimPrefix(ns, ExactMark)); err != nil {
			return err
		}
	}
	return nil
}

type file struct {
	Tokens []Token `json:"tokens"`
}

// Store reads and writes the token file of one data dir.
type Store struct {
	path string
	now  func() time.Time

	mu    sync.Mutex
	stamp stamp            // of the file last read
	byID  map[string]Token // live tokens by id
}

type stamp struct {
	mod  time.Time
	size int64
	ok   bool
}

// Open returns the store of dataDir (the file need not exist yet). now may
// be nil (the wall clock).
func Open(dataDir string, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{path: filepath.Join(dataDir, File), now: now}
}

// Path is the token file.
func (s *Store) Path() string { return s.path }

func (s *Store) read() (file, error) {
	var f file
	b, err := os.ReadFile(s.path)
	if errors.Is(err, os.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return f, err
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return f, fmt.Errorf("%s: %v", s.path, err)
	}
	return f, nil
}

// write replaces the file atomically (a server reading it never sees half).
func (s *Store) write(f file) error {
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	tmp := s.path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, s.path)
}

// Create adds a token and returns it with its secret, which is shown once.
func (s *Store) Create(principal string, families, namespaces []string) (Token, string, error) {
	f, err := s.read()
	if err != nil {
		return Token{}, "", err
	}
	var idb [6]byte
	var secret [32]byte
	if _, err := rand.Read(idb[:]); err != nil {
		return Token{}, "", err
	}
	if _, err := rand.Read(secret[:]); err != nil {
		return Token{}, "", err
	}
	id := hex.EncodeToString(idb[:])
	key := prefix + id + "_" + base64.RawURLEncoding.EncodeToString(secret[:])
	t := Token{ID: id, Principal: principal, Families: families, Namespaces: namespaces, Hash: hash(key), Created: s.now().UTC()}
	f.Tokens = append(f.Tokens, t)
	return t, key, s.write(f)
}

// List returns every token, revoked ones included.
func (s *Store) List() ([]Token, error) {
	f, err := s.read()
	return f.Tokens, err
}

// Revoke marks the token with id revoked.
func (s *Store) Revoke(id string) (Token, error) {
	f, err := s.read()
	if err != nil {
		return Token{}, err
	}
	for i := range f.Tokens {
		if f.Tokens[i].ID == id {
			if f.Tokens[i].Revoked == nil {
				at := s.now().UTC()
				f.Tokens[i].Revoked = &at
			}
			return f.Tokens[i], s.write(f)
		}
	}
	return Token{}, fmt.Errorf("no token with id %q (ai-memory token list shows them)", id)
}

// ErrUnknown is a key that is malformed, unknown or revoked.
var ErrUnknown = errors.New("the API key is not valid (unknown or revoked)")

// Lookup returns the live token a presented key belongs to. The file is
// reread whenever its size or modification time changed.
func (s *Store) Lookup(key string) (Token, error) {
	id, ok := keyID(key)
	if !ok {
		return Token{}, ErrUnknown
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.refresh(); err != nil {
		return Token{}, err
	}
	t, ok := s.byID[id]
	if !ok || subtle.ConstantTimeCompare([]byte(t.Hash), []byte(hash(key))) != 1 {
		return Token{}, ErrUnknown
	}
	return t, nil
}

func (s *Store) refresh() error {
	var now stamp
	if fi, err := os.Stat(s.path); err == nil {
		now = stamp{mod: fi.ModTime(), size: fi.Size(), ok: true}
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if s.byID != nil && now == s.stamp {
		return nil
	}
	f, err := s.read()
	if err != nil {
		return err
	}
	s.byID = map[string]Token{}
	for _, t := range f.Tokens {
		if t.Revoked == nil {
			s.byID[t.ID] = t
		}
	}
	s.stamp = now
	return nil
}

// keyID is the id part of a well-formed key.
func keyID(key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, prefix)
	if !ok {
		return "", false
	}
	id, secret, ok := strings.Cut(rest, "_")
	return id, ok && len(id) == 12 && len(secret) == 43
}

func hash(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

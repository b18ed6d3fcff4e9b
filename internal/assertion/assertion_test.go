package assertion

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/testwait"
)

func testSigner(t *testing.T, key byte, now *time.Time) *Signer {
	t.Helper()
	s, err := NewSigner(bytes.Repeat([]byte{key}, 32), func() time.Time { return *now })
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestMintVerify(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	s := testSigner(t, 1, &now)
	want := caller.Caller{Principal: "ai:claude-code", Session: "sess-1", Family: caller.HostFamily}
	tok := s.Mint(want)
	got, err := s.Verify(tok)
	if err != nil || got != (Verified{Caller: want, PID: os.Getpid()}) {
		t.Fatalf("Verify = %+v, %v; want %+v of this process", got, err, want)
	}

	now = now.Add(DefaultTTL - time.Nanosecond)
	if _, err := s.Verify(tok); err != nil {
		t.Fatalf("just before expiry: %v", err)
	}
	now = now.Add(time.Nanosecond)
	if _, err := s.Verify(tok); !errors.Is(err, ErrExpired) {
		t.Fatalf("at expiry: %v, want ErrExpired", err)
	}
}

func TestVerifyRefuses(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	s := testSigner(t, 1, &now)
	other := testSigner(t, 2, &now)
	tok := s.Mint(caller.Caller{Principal: "ai:a", Family: "core"})
	dot := bytes.IndexByte(tok, '.')

	// A plugin that rewrites the payload (say, to another principal) cannot re-sign it.
	forgedPayload := other.Mint(caller.Caller{Principal: "ai:b", Family: "core"})
	spliced := append(append([]byte{}, forgedPayload[:bytes.IndexByte(forgedPayload, '.')]...), tok[dot:]...)

	cases := map[string][]byte{
		"empty":          nil,
		"no dot":         []byte("abc"),
		"garbage":        []byte("!!!.???"),
		"other key":      other.Mint(caller.Caller{Principal: "ai:a", Family: "core"}),
		"spliced":        spliced,
		"truncated mac":  tok[:len(tok)-2],
		"oversized":      bytes.Repeat([]byte("a"), maxTokenBytes+1),
		"no principal":   s.Mint(caller.Caller{Family: "core"}),
		"no family":      s.Mint(caller.Caller{Principal: "ai:a"}),
		"flipped bit":    flip(tok, dot/2),
		"payload suffix": append(append([]byte{}, tok[:dot]...), append([]byte("AA"), tok[dot:]...)...),
	}
	for name, tok := range cases {
		if c, err := s.Verify(tok); err == nil {
			t.Errorf("%s: accepted as %+v", name, c)
		}
	}
	if _, err := s.Verify(nil); !errors.Is(err, ErrMissing) {
		t.Errorf("empty: %v, want ErrMissing", err)
	}
}

func flip(b []byte, i int) []byte {
	out := append([]byte{}, b...)
	out[i] ^= 0x01
	return out
}

func TestShortKeyRefused(t *testing.T) {
	if _, err := NewSigner(make([]byte, 16), nil); err == nil || !strings.Contains(err.Error(), "32 bytes") {
		t.Fatalf("err = %v", err)
	}
}

func TestLoadOrCreateKeyAgreesUnderRace(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	const n = 8
	keys := make([][]byte, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { keys[i], errs[i] = LoadOrCreateKey(dir) })
	}
	testwait.Wait(t, &wg, "every LoadOrCreateKey")
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("creator %d: %v", i, errs[i])
		}
		if !bytes.Equal(keys[i], keys[0]) {
			t.Fatalf("creator %d got another key", i)
		}
	}
	fi, err := os.Stat(filepath.Join(dir, KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("key mode %v, want 0600", fi.Mode().Perm())
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".engine.key-*"))
	if len(left) != 0 {
		t.Errorf("temp files left: %v", left)
	}
}

func TestBadKeyFileIsAnError(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, KeyFile), []byte("short"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreateKey(dir); err == nil || !strings.Contains(err.Error(), "must be 32 bytes") {
		t.Fatalf("err = %v", err)
	}
	if _, err := LoadKey(t.TempDir()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing key: %v", err)
	}
}

func BenchmarkMintVerify(b *testing.B) {
	now := time.Now()
	s, _ := NewSigner(bytes.Repeat([]byte{1}, 32), func() time.Time { return now })
	c := caller.Caller{Principal: "ai:claude-code", Session: "0f8fad5b-d9cb-469f-a165-70867728950e", Family: "core"}
	for b.Loop() {
		if _, err := s.Verify(s.Mint(c)); err != nil {
			b.Fatal(err)
		}
	}
}

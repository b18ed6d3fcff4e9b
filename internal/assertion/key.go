package assertion

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// KeyFile is the signing key's name in the data dir.
const KeyFile = "engine.key"

const keyBytes = 32

// LoadOrCreateKey returns the data dir's signing key, creating it on first
// use. Engine and hosts both call it; creation is race-free (the key is
// written to a private temp file and hard-linked into place, so two
// creators agree on whichever link won).
func LoadOrCreateKey(dataDir string) ([]byte, error) {
	path := filepath.Join(dataDir, KeyFile)
	if key, err := readKey(path); !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("assertion key: %w", err)
	}
	tmp, err := os.CreateTemp(dataDir, ".engine.key-*")
	if err != nil {
		return nil, fmt.Errorf("assertion key: %w", err)
	}
	defer os.Remove(tmp.Name())
	key := make([]byte, keyBytes)
	if _, err := rand.Read(key); err != nil {
		tmp.Close()
		return nil, fmt.Errorf("assertion key: %w", err)
	}
	_, werr := tmp.Write(key)
	serr := tmp.Sync()
	cerr := tmp.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		return nil, fmt.Errorf("assertion key: %w", err)
	}
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("assertion key: %w", err)
	}
	return readKey(path)
}

// LoadKey returns an existing key; a missing one is an error wrapping
// fs.ErrNotExist (tools that only read, such as doctor, must not create it).
func LoadKey(dataDir string) ([]byte, error) { return readKey(filepath.Join(dataDir, KeyFile)) }

func readKey(path string) ([]byte, error) {
	key, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("assertion key: %w", err)
	}
	if len(key) != keyBytes {
		return nil, fmt.Errorf("assertion key %s: must be %d bytes (got %d); remove it and restart the engine", path, keyBytes, len(key))
	}
	return key, nil
}

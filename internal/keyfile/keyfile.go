// Package keyfile keeps 32-byte secret keys in files of the data dir,
// created race-free by whichever process needs one first.
package keyfile

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Size is every key's length in bytes.
const Size = 32

// LoadOrCreate returns the key in dir/name, creating it on first use: the
// key is written to a private temp file and hard-linked into place, so two
// creators agree on whichever link won. what names the key in errors.
func LoadOrCreate(dir, name, what string) ([]byte, error) {
	path := filepath.Join(dir, name)
	if key, err := Load(path, what); !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	tmp, err := os.CreateTemp(dir, "."+name+"-*")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer os.Remove(tmp.Name())
	key := make([]byte, Size)
	if _, err := rand.Read(key); err != nil {
		tmp.Close()
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	_, werr := tmp.Write(key)
	serr := tmp.Sync()
	cerr := tmp.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return Load(path, what)
}

// Load reads an existing key; a missing one is an error wrapping fs.ErrNotExist.
func Load(path, what string) ([]byte, error) {
	key, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if len(key) != Size {
		return nil, fmt.Errorf("%s %s: must be %d bytes (got %d); remove it and restart the engine", what, path, Size, len(key))
	}
	return key, nil
}

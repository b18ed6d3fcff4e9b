package assertion

import (
	"path/filepath"

	"github.com/ai-memory/ai-memory/internal/keyfile"
)

// KeyFile is the signing key's name in the data dir.
const KeyFile = "engine.key"

// LoadOrCreateKey returns the data dir's signing key, creating it on first
// use. Engine and hosts both call it; creation is race-free (keyfile).
func LoadOrCreateKey(dataDir string) ([]byte, error) {
	return keyfile.LoadOrCreate(dataDir, KeyFile, "assertion key")
}

// LoadKey returns an existing key; a missing one is an error wrapping
// fs.ErrNotExist (tools that only read, such as doctor, must not create it).
func LoadKey(dataDir string) ([]byte, error) {
	return keyfile.Load(filepath.Join(dataDir, KeyFile), "assertion key")
}

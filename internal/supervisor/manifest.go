package supervisor

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/ai-memory/ai-memory/sdk"
)

// ManifestName is the file `make build` writes beside the plugin binaries,
// in sha256sum(1) format: "<hex>  <file name>" per line.
const ManifestName = "plugins.sha256"

// Binary is a plugin executable and the SHA-256 it must have to be launched.
type Binary struct {
	Name     string // file name, e.g. ai-memory-core
	Path     string
	Checksum string // lowercase hex
	// FirstParty is set for binaries of the build's manifest; only they may
	// serve the contract's families (a [plugins] pin is third-party).
	FirstParty bool
}

// Discover lists the trusted plugin binaries: those in dir's manifest, plus
// the ones pinned in config.toml [plugins] (path → hex). A manifest line for
// a missing file is skipped; nothing unlisted is ever launched.
func Discover(dir string, pinned map[string]string) ([]Binary, error) {
	var out []Binary
	f, err := os.Open(filepath.Join(dir, ManifestName))
	switch {
	case os.IsNotExist(err):
	case err != nil:
		return nil, err
	default:
		defer f.Close()
		sc := bufio.NewScanner(f)
		for line := 1; sc.Scan(); line++ {
			text := strings.TrimSpace(sc.Text())
			if text == "" || strings.HasPrefix(text, "#") {
				continue
			}
			sum, name, ok := strings.Cut(text, " ")
			name = strings.TrimLeft(strings.TrimSpace(name), "*")
			if !ok || len(sum) != 64 || name == "" || strings.ContainsRune(name, '/') {
				return nil, fmt.Errorf("%s line %d: want \"<sha256 hex>  <file name>\"", filepath.Join(dir, ManifestName), line)
			}
			path := filepath.Join(dir, name)
			if _, err := os.Stat(path); err != nil {
				continue
			}
			out = append(out, Binary{Name: name, Path: path, Checksum: strings.ToLower(sum), FirstParty: true})
		}
		if err := sc.Err(); err != nil {
			return nil, err
		}
	}
	for path, sum := range pinned {
		if len(sum) != 64 {
			return nil, fmt.Errorf("config [plugins] %s: value must be the binary's SHA-256 in hex", sdk.Quote(path))
		}
		if slices.ContainsFunc(out, func(b Binary) bool { return b.FirstParty && filepath.Clean(b.Path) == filepath.Clean(path) }) {
			continue // a manifest binary pinned again is still first-party, and listed once
		}
		out = append(out, Binary{Name: filepath.Base(path), Path: path, Checksum: strings.ToLower(sum)})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].Path < out[j].Path
	})
	return out, nil
}

// fileSHA256 hashes a file.
func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Checksum is the SHA-256 (lowercase hex) of the file at path: what a pin holds.
func Checksum(path string) (string, error) { return fileSHA256(path) }

// Verify checks a binary against its pinned checksum without running it.
func Verify(b Binary) error {
	actual, err := fileSHA256(b.Path)
	if err != nil {
		return err
	}
	if actual != b.Checksum {
		return fmt.Errorf("%w: %s has SHA-256 %s but %s was pinned", ErrChecksum, b.Path, actual, b.Checksum)
	}
	return nil
}

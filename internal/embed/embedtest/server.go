package embedtest

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/embed/modelfiles"
)

// ModelServer serves a model's files laid out like Hugging Face
// (/<repo>/resolve/<revision>/<path>), honouring Range, and records the
// Range header of each request: the loopback mirror of every test of a
// download (model pull, init).
type ModelServer struct {
	*httptest.Server
	files map[string][]byte
	cut   int

	mu     sync.Mutex
	ranges []string
	served map[string]int
}

// NewModelServer serves files for s. cut, when > 0, makes the first
// request of each file end after that many bytes (a dropped connection).
func NewModelServer(t testing.TB, s modelfiles.Spec, files map[string][]byte, cut int) *ModelServer {
	srv := &ModelServer{files: files, cut: cut, served: map[string]int{}}
	prefix := "/" + s.Repo + "/resolve/" + s.Revision + "/"
	srv.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path, ok := strings.CutPrefix(r.URL.Path, prefix)
		data, found := files[path]
		if !ok || !found {
			http.NotFound(w, r)
			return
		}
		srv.mu.Lock()
		srv.ranges = append(srv.ranges, path+" "+r.Header.Get("Range"))
		first := srv.served[path] == 0
		srv.served[path]++
		srv.mu.Unlock()
		if first && srv.cut > 0 && srv.cut < len(data) {
			// Promise the whole file, send a part, drop the connection.
			w.Header().Set("Content-Length", fmt.Sprint(len(data)))
			w.WriteHeader(http.StatusOK)
			w.Write(data[:srv.cut])
			w.(http.Flusher).Flush()
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
			return
		}
		http.ServeContent(w, r, path, time.Time{}, bytes.NewReader(data))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// RangesOf is the Range header of each request for path, in order.
func (s *ModelServer) RangesOf(path string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, r := range s.ranges {
		if p, rng, _ := strings.Cut(r, " "); p == path {
			out = append(out, rng)
		}
	}
	return out
}

// ModelFiles is the default model's spec and its real files, read from
// ModelDir (so it skips, or fails in CI, without them).
func ModelFiles(t testing.TB) (modelfiles.Spec, map[string][]byte) {
	t.Helper()
	dir := ModelDir(t)
	s, _ := modelfiles.Lookup(modelfiles.Default)
	files := map[string][]byte{}
	for _, f := range s.Files {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.Path)))
		if err != nil {
			t.Fatal(err)
		}
		files[f.Path] = data
	}
	return s, files
}

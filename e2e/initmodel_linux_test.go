package e2e

// Linux only: the pseudo-terminal init is answered on is opened with
// Linux's ioctls.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/ai-memory/ai-memory/internal/embed/embedtest"
	"github.com/ai-memory/ai-memory/internal/embed/modelfiles"
)

// TestInitOffersTheModel answers init on a terminal: yes downloads the
// model (from a loopback mirror serving the real files) and the summary
// says recall is by meaning; no leaves no model and says keywords and
// how; --yes never downloads.
func TestInitOffersTheModel(t *testing.T) {
	s, _ := modelfiles.Lookup(modelfiles.Default)
	for _, tc := range []struct {
		name    string
		args    []string
		answers string // harness, then model
		pulled  bool
		summary []string
	}{
		{"yes", []string{"init"}, "y\ny\n", true, []string{"for recall by meaning? [Y/n]", "recall: by meaning (all-MiniLM-L6-v2, local)"}},
		{"no", []string{"init"}, "y\nn\n", false, []string{"for recall by meaning? [Y/n]", "recall: by keywords\nnext: ai-memory model pull"}},
		{"--yes", []string{"init", "--yes"}, "", false, []string{"recall: by keywords\nnext: ai-memory model pull"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Where no download is wanted the mirror is a closed port: an
			// attempt fails init.
			mirror := "http://127.0.0.1:9"
			var srv *embedtest.ModelServer
			if tc.pulled {
				_, files := embedtest.ModelFiles(t)
				srv = embedtest.NewModelServer(t, s, files, 0)
				mirror = srv.URL
			}
			home, cache := t.TempDir(), t.TempDir()
			if err := os.MkdirAll(filepath.Join(home, ".codex"), 0o755); err != nil {
				t.Fatal(err)
			}
			cmd := commandWithin(t, toolDeadline, filepath.Join(bins, "ai-memory"), append(tc.args, "--model-from", mirror)...)
			cmd.Env = []string{"HOME=" + home, "XDG_CACHE_HOME=" + cache, "PATH=/nonexistent"}
			cmd.Stdin = terminal(t, tc.answers)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%v: %v\n%s", tc.args, err, out)
			}
			for _, want := range tc.summary {
				if !strings.Contains(string(out), want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
			if tc.answers == "" && strings.Contains(string(out), "for recall by meaning?") {
				t.Errorf("init --yes asked about the model:\n%s", out)
			}
			_, err = os.Stat(filepath.Join(cache, "ai-memory", "models", s.Name, "model.safetensors"))
			if pulled := err == nil; pulled != tc.pulled {
				t.Errorf("model pulled = %v, want %v (%v)\n%s", pulled, tc.pulled, err, out)
			}
			if tc.pulled && len(srv.RangesOf("model.safetensors")) == 0 {
				t.Error("the model came from somewhere other than the mirror")
			}
		})
	}
}

// terminal is a pseudo-terminal holding answers as typed, for a command's
// standard input: init asks only on a terminal.
func terminal(t *testing.T, answers string) *os.File {
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ptmx.Close() })
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	pts, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pts.Close() })
	if _, err := ptmx.WriteString(answers); err != nil {
		t.Fatal(err)
	}
	return pts
}

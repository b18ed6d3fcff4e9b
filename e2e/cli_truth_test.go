package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/testwait"
)

// TestTypoInConfigIsNamedByEveryCommand: a key this version does not know
// stops every command that reads config.toml, before it does anything,
// naming the file and the key, with the usage status 2.
func TestTypoInConfigIsNamedByEveryCommand(t *testing.T) {
	e := newEnv(t)
	if out, code := e.cli("store", "--title", "before", "--content", "the config was good"); code != 0 {
		t.Fatalf("store: exit %d\n%s", code, out)
	}
	e.writeConfig("[mcp]\nprofle = \"core\"\n")
	for _, args := range [][]string{
		{"store", "--title", "t", "--content", "c"},
		{"recall", "anything"},
		{"list"},
		{"stats"},
		{"export"},
		{"audit", "list"},
		{"archive", "list"},
		{"mcp"},
	} {
		out, code := e.cli(args...)
		want := "ai-memory " + strings.Join(args[:1], " ") + ": config " + e.config + ": unknown key mcp.profle"
		if args[0] == "audit" || args[0] == "archive" {
			want = "ai-memory " + args[0] + " list: config " + e.config + ": unknown key mcp.profle"
		}
		if code != 2 || strings.TrimSpace(out) != want {
			t.Errorf("%v: exit %d, output\n%s\nwant exit 2 and %q", args, code, out, want)
		}
	}
	if out, _ := e.cli("list", "--json"); strings.Contains(out, "before") {
		t.Errorf("list ran despite the bad config:\n%s", out)
	}
}

// TestUsageErrorsAreShort: a bad command line gets what was wrong, the
// usage line of the command it named, and exit status 2, not the help.
func TestUsageErrorsAreShort(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"store"}, []string{"ai-memory store: missing flags: --title=STRING", "usage: ai-memory store --title=STRING [flags]", `Run "ai-memory store --help" for more.`}},
		{[]string{"stor"}, []string{`ai-memory: unexpected argument stor, did you mean "store"?`, "usage: ai-memory <command> [flags]", `Run "ai-memory --help" for more.`}},
		{[]string{"audit"}, []string{`ai-memory audit: expected one of "list", "verify"`, "usage: ai-memory audit <command>"}},
		{[]string{"list", "--tier", "huge"}, []string{"ai-memory list: --tier must be one of", "usage: ai-memory list [flags]"}},
		{[]string{"archive", "restore"}, []string{"ai-memory archive restore: expected \"<id>\"", "usage: ai-memory archive restore <id> [flags]"}},
	} {
		out, code := e.cli(tc.args...)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if code != 2 || len(lines) != len(tc.want) && len(lines) != 3 {
			t.Errorf("%v: exit %d, %d lines:\n%s", tc.args, code, len(lines), out)
			continue
		}
		for i, w := range tc.want {
			if !strings.HasPrefix(lines[i], w) {
				t.Errorf("%v: line %d is %q, want %q", tc.args, i+1, lines[i], w)
			}
		}
	}
	// --help is a question: the whole help, exit 0.
	if out, code := e.cli("store", "--help"); code != 0 || !strings.Contains(out, "--namespace") {
		t.Errorf("store --help: exit %d\n%s", code, out)
	}
}

// TestMissingIDNamesTheCommand: an id that is not there is the command's
// error, exit 1, whatever tool it called to find it.
func TestMissingIDNamesTheCommand(t *testing.T) {
	e := newEnv(t)
	e.cli("store", "--title", "t", "--content", "c")
	for _, cmd := range []string{"delete", "get", "update"} {
		args := []string{cmd, "ffffffff-nope"}
		if cmd == "update" {
			args = append(args, "--title", "x")
		}
		out, code := e.cli(args...)
		if code != 1 || !strings.HasPrefix(out, "ai-memory "+cmd+": ") || !strings.Contains(out, "not found") || strings.Count(out, "ai-memory") != 1 {
			t.Errorf("%v: exit %d\n%s", args, code, out)
		}
	}
	out, code := e.cli("archive", "restore", "ffffffff-0000-0000-0000-000000000000")
	if code != 1 || !strings.HasPrefix(out, "ai-memory archive restore: ") {
		t.Errorf("archive restore of nothing: exit %d\n%s", code, out)
	}
}

// TestArchiveListRestoreRoundTrip: what delete --archive and forget keep,
// archive list shows and archive restore brings back.
func TestArchiveListRestoreRoundTrip(t *testing.T) {
	e := newEnv(t)
	stored := map[string]string{}
	for _, title := range []string{"alpha note", "beta note"} {
		out, code := e.cli("store", "--title", title, "--content", "body of "+title, "--json")
		var m map[string]any
		if code != 0 || json.Unmarshal([]byte(out), &m) != nil {
			t.Fatalf("store: exit %d\n%s", code, out)
		}
		stored[title] = m["id"].(string)
	}
	alpha, beta := stored["alpha note"], stored["beta note"]
	if out, _ := e.cli("archive", "list"); strings.TrimSpace(out) != "the archive is empty" {
		t.Fatalf("archive list before: %q", out)
	}
	out, code := e.cli("delete", alpha, "--archive", "--yes")
	if code != 0 || !strings.Contains(out, "ai-memory archive restore "+alpha) {
		t.Fatalf("delete --archive: exit %d\n%s", code, out)
	}
	if out, code := e.cli("forget", "beta", "--yes"); code != 0 || !strings.Contains(out, "archived 1 memory") || !strings.Contains(out, "ai-memory archive list") {
		t.Fatalf("forget: exit %d\n%s", code, out)
	}
	out, code = e.cli("archive", "list")
	if code != 0 || !strings.Contains(out, alpha) || !strings.Contains(out, beta) || !strings.Contains(out, "REASON") ||
		!strings.Contains(out, "delete") || !strings.Contains(out, "forget") || !strings.Contains(out, "archive restore ID") {
		t.Fatalf("archive list: exit %d\n%s", code, out)
	}
	if out, _ := e.cli("list", "--json"); strings.Contains(out, alpha) {
		t.Fatalf("an archived memory is still listed:\n%s", out)
	}
	out, code = e.cli("archive", "restore", alpha)
	if code != 0 || !strings.HasPrefix(out, "restored "+alpha+` "alpha note" in global (tier mid, expires `) {
		t.Fatalf("archive restore: exit %d\n%s", code, out)
	}
	if out, code := e.cli("get", alpha, "--json"); code != 0 || !strings.Contains(out, "body of alpha note") {
		t.Fatalf("get after restore: exit %d\n%s", code, out)
	}
	var listed struct {
		Archived []struct{ ID string } `json:"archived"`
	}
	out, _ = e.cli("archive", "list", "--json")
	if json.Unmarshal([]byte(out), &listed) != nil || len(listed.Archived) != 1 || listed.Archived[0].ID != beta {
		t.Fatalf("archive list after restoring one: %s", out)
	}
}

// TestStoreSaysHowLongAMemoryLives: the tier's lifetime, as the data dir's
// engine settings set it, is in store's answer and in its help.
func TestStoreSaysHowLongAMemoryLives(t *testing.T) {
	e := newEnv(t)
	if out, _ := e.cli("store", "--title", "a", "--content", "c"); !strings.Contains(out, "tier mid: it expires in 7 days, and a recall keeps it at least 1 day more (--tier long never expires)") {
		t.Errorf("store:\n%s", out)
	}
	if out, _ := e.cli("store", "--title", "b", "--content", "c", "--tier", "long"); !strings.Contains(out, "tier long: it never expires") {
		t.Errorf("store --tier long:\n%s", out)
	}
	help, _ := e.cli("store", "--help")
	for _, want := range []string{`--tier="mid"`, "mid (7 days)", "git project", "origin remote", "else global"} {
		if !strings.Contains(strings.Join(strings.Fields(help), " "), want) {
			t.Errorf("store --help lacks %q:\n%s", want, help)
		}
	}
	// A data dir made by a command that starts its engine itself records
	// config.toml's [ttl], as a host does.
	f := newEnv(t)
	f.writeConfig("[ttl]\nmid_ttl_secs = 7200\n")
	if out, code := f.cli("stats"); code == 0 {
		t.Fatalf("stats on a data dir that does not exist: exit 0\n%s", out)
	}
	if out, _ := f.cli("store", "--title", "a", "--content", "c"); !strings.Contains(out, "tier mid: it expires in 2 hours") {
		t.Errorf("store under [ttl] mid_ttl_secs = 7200:\n%s", out)
	}
}

// TestListsHaveHeadersAndColumns: audit list, token list and doctor print
// a header row, and their columns line up.
func TestListsHaveHeadersAndColumns(t *testing.T) {
	e := newEnv(t)
	e.writeConfig("[mcp.allowlist]\n\"nobody\" = [\"core\"]\n") // every CLI call is denied, and audited
	e.cli("store", "--title", "t", "--content", "c")
	e.cli("list")
	e.token("alice")
	e.token("a-much-longer-principal-name")
	for _, tc := range []struct {
		args   []string
		header string
	}{
		{[]string{"audit", "list"}, "SEQ  TIME"},
		{[]string{"token", "list"}, "ID  "},
		{[]string{"doctor"}, "STATUS  CHECK"},
	} {
		out, _ := e.cli(tc.args...)
		lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
		if len(lines) < 3 || !strings.HasPrefix(lines[0], tc.header) {
			t.Errorf("%v: no header row:\n%s", tc.args, out)
			continue
		}
		// Every column after the first starts where its header does.
		for _, col := range strings.Fields(lines[0])[1:] {
			at := strings.Index(lines[0], col)
			for _, l := range lines[1:] {
				if len(l) <= at || l[at-1] != ' ' || l[at] == ' ' {
					t.Errorf("%v: column %s (at %d) misaligned in %q\n%s", tc.args, col, at, l, out)
					break
				}
			}
		}
	}
}

// TestGroupSIGTERMLogsNoError: stopping serve as a service manager does,
// with SIGTERM to its whole process group, its plugins included, is a
// clean stop: exit 0 and no ERROR line.
func TestGroupSIGTERMLogsNoError(t *testing.T) {
	e := newEnv(t)
	key := e.token("alice", "--namespace", "*")
	cmd := exec.Command(filepath.Join(e.binDir, "ai-memory"), "serve", "--listen", "127.0.0.1:0")
	cmd.Env = e.environ()
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		testwait.Recv(t, done, "the killed server to exit")
	})
	s := &served{t: t, cmd: cmd, stderr: stderr, done: done}
	eventually(t, 30*time.Second, "serve ready", func() bool {
		m := readyURL.FindStringSubmatch(stderr.String())
		if m != nil {
			s.url = m[1]
		}
		return m != nil
	})
	c := s.connect(key, nil)
	c.ok("memory_store", map[string]any{"title": "t", "content": "c"}) // the core plugin runs
	if len(childrenOf(cmd.Process.Pid, "ai-memory-core")) == 0 {
		t.Fatal("no plugin process to signal")
	}
	c.c.Close()
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not stop:\n%s", stderr.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 || strings.Contains(stderr.String(), "ERROR") || !strings.Contains(stderr.String(), "stopped on signal") {
		t.Fatalf("exit %d:\n%s", code, stderr.String())
	}
	if _, err := os.Stat(e.dataDir); err != nil {
		t.Fatal(err)
	}
}

// Package install writes ai-memory's MCP server entry into a harness's own
// config file (and takes it out again), keeping every other byte of the
// file: a dry run shows the diff, Apply writes after a timestamped backup.
package install

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/aymanbagabas/go-udiff"
)

// DefaultName is the server's key in a harness config.
const DefaultName = "ai-memory"

// Options say what to install where. Home, Getenv, GOOS and LookPath come
// from the machine unless set (tests set them).
type Options struct {
	Harness    string
	Project    bool   // write the project-scoped config
	ProjectDir string // the project root for Project
	File       string // config path to use instead of the harness's own
	Name       string // server key, default DefaultName
	// Binary is the ai-memory the harness starts, as the user gave it: a
	// command name looked up on PATH, or a path ("" = Self, see command).
	Binary string
	// Self is this binary's resolved path, the default.
	Self      string
	Profile   string // "" is the harness's default
	DataDir   string // written as --data-dir when set
	Remote    *Remote
	Uninstall bool

	Home   string
	Getenv func(string) string
	GOOS   string
	// LookPath is the resolved path of an executable found on PATH, ""
	// when there is none (nil: none is).
	LookPath func(string) string
}

func (o *Options) getenv(k string) string {
	if o.Getenv == nil {
		return os.Getenv(k)
	}
	return o.Getenv(k)
}

func (o *Options) lookPath(bin string) string {
	if o.LookPath == nil {
		return ""
	}
	return o.LookPath(bin)
}

// command is the binary an entry starts, as written, and notes for the
// user on it. A project config travels with the project, so it names the
// command as the user types it (ai-memory) when that finds this very
// binary on PATH; otherwise, and in a user config (GUI harnesses do not
// start servers with the shell's PATH), it is an absolute path, and a
// project config says so. A binary that is not there is a warning.
func (o *Options) command() (cmd string, notes []string, err error) {
	bin := o.Binary
	if bin == "" {
		bin = o.Self
	}
	if bin == "" {
		return "", nil, fmt.Errorf("no ai-memory binary to write: pass --binary")
	}
	if !strings.ContainsRune(bin, '/') && !strings.ContainsRune(bin, filepath.Separator) {
		if o.lookPath(bin) == "" {
			notes = append(notes, fmt.Sprintf("warning: %s is not on PATH here: the harness will not find it unless its PATH has it", bin))
		}
		return bin, notes, nil
	}
	abs, err := filepath.Abs(bin)
	if err != nil {
		return "", nil, err
	}
	if _, err := os.Stat(abs); err != nil {
		notes = append(notes, fmt.Sprintf("warning: %s does not exist: the harness will fail to start it (build it, or pass --binary)", abs))
	}
	if !o.Project {
		return abs, notes, nil
	}
	onPath := o.lookPath(DefaultName)
	var why string
	switch {
	case o.Binary != "":
		why = "--binary gave a path; --binary " + DefaultName + " names the command instead"
	case onPath == "":
		why = DefaultName + " is not on PATH; put it there and install again for an entry that works on other machines"
	case sameFile(onPath, abs):
		return DefaultName, notes, nil
	default:
		why = "the " + DefaultName + " on PATH is another binary (" + onPath + "); pass --binary " + DefaultName + " to write that one"
	}
	notes = append(notes, fmt.Sprintf("note: this project config names %s, a path on this machine: %s", abs, why))
	return abs, notes, nil
}

func sameFile(a, b string) bool {
	sa, err := os.Stat(a)
	if err != nil {
		return false
	}
	sb, err := os.Stat(b)
	return err == nil && os.SameFile(sa, sb)
}

func (o *Options) goos() string {
	if o.GOOS == "" {
		return runtime.GOOS
	}
	return o.GOOS
}

// appConfigDir is where desktop apps keep their settings.
func (o *Options) appConfigDir() string {
	switch o.goos() {
	case "darwin":
		return filepath.Join(o.Home, "Library", "Application Support")
	case "windows":
		return o.getenv("APPDATA")
	}
	if d := o.getenv("XDG_CONFIG_HOME"); d != "" {
		return d
	}
	return filepath.Join(o.Home, ".config")
}

func (o *Options) vscodeUserDir() string { return filepath.Join(o.appConfigDir(), "Code", "User") }

func (o *Options) expand(p string) string {
	switch {
	case strings.HasPrefix(p, "~/"):
		return filepath.Join(o.Home, p[2:])
	case strings.HasPrefix(p, "@app/"):
		return filepath.Join(o.appConfigDir(), p[5:])
	case p == "@vscode":
		return o.vscodeUserDir()
	case strings.HasPrefix(p, "@vscode/"):
		return filepath.Join(o.vscodeUserDir(), p[8:])
	}
	return p
}

// Plan is one config file's change: Before as it is, After as it would be.
type Plan struct {
	Harness *Harness
	Path    string
	Existed bool
	Before  []byte
	After   []byte
	Delete  bool // uninstall leaves nothing of the file: remove it
	Found   bool // uninstall: our entry was there
	Profile string
	// Notes are warnings and remarks on the entry (see Options.command).
	Notes []string
}

// Changed reports whether applying the plan changes the file.
func (p *Plan) Changed() bool {
	if p.Delete {
		return p.Existed
	}
	return !p.Existed || !bytes.Equal(p.Before, p.After)
}

// Diff is a unified diff of the change.
func (p *Plan) Diff() string {
	after := string(p.After)
	if p.Delete {
		after = ""
	}
	from, to := p.Path, p.Path
	if !p.Existed {
		from = "/dev/null"
	}
	if p.Delete {
		to = "/dev/null"
	}
	return udiff.Unified(from, to, string(p.Before), after)
}

// Make plans the change Options ask for, without writing anything.
func Make(o Options) (*Plan, error) {
	h, err := Lookup(o.Harness)
	if err != nil {
		return nil, err
	}
	if o.Name == "" {
		o.Name = DefaultName
	}
	path := o.File
	switch {
	case path != "":
	case o.Project:
		if h.project == "" {
			return nil, fmt.Errorf("%s has no project-scoped config; install without --project", h.Title)
		}
		path = filepath.Join(o.ProjectDir, h.project)
	default:
		if path, err = h.user(&o); err != nil {
			return nil, err
		}
	}
	p := &Plan{Harness: h, Path: path, Profile: o.Profile}
	if p.Profile == "" {
		p.Profile = h.Profile
	}
	p.Before, err = os.ReadFile(path)
	switch {
	case err == nil:
		p.Existed = true
	case errors.Is(err, fs.ErrNotExist):
	default:
		return nil, err
	}
	var entry any
	if !o.Uninstall {
		if o.Remote != nil {
			if h.remote == nil {
				return nil, fmt.Errorf("%s has no remote form that reads a token from the environment: %s", h.Title, h.noRemote)
			}
			r := *o.Remote
			r.profile = p.Profile
			entry = h.remote(o.Name, r)
		} else {
			cmd, notes, err := o.command()
			if err != nil {
				return nil, err
			}
			p.Notes = notes
			args := []string{"mcp", "--profile", p.Profile}
			if o.DataDir != "" {
				args = append(args, "--data-dir", o.DataDir)
			}
			entry = Launch{Command: cmd, Args: args}
		}
	}
	switch h.format {
	case formatTOML:
		err = planTOML(p, h, o, entry)
	case formatYAMLFile:
		err = planYAML(p, h, o, entry)
	default:
		err = planJSON(p, h, o, entry)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

func planJSON(p *Plan, h *Harness, o Options, entry any) error {
	doc, err := parseJSON(p.Before)
	if err != nil {
		return err
	}
	cur, present, err := doc.get(h.container, o.Name)
	if err != nil {
		return err
	}
	if present && !owned(cur) {
		return foreign(o.Name, cur)
	}
	if o.Uninstall {
		p.Found = present
		if _, err := doc.remove(h.container, o.Name); err != nil {
			return err
		}
		p.After = doc.bytes()
		if !present {
			p.After = p.Before
		}
		p.Delete = present && doc.isEmpty()
		return nil
	}
	if l, ok := entry.(Launch); ok {
		entry = h.stdio(o.Name, l)
	}
	if present && sameJSON(cur, entry) {
		p.After = p.Before // already as we would write it: leave the bytes alone
		return nil
	}
	if err := doc.set(h.container, o.Name, entry); err != nil {
		return err
	}
	p.After = doc.bytes()
	if !p.Existed || len(bytes.TrimSpace(p.Before)) == 0 {
		p.After = append(bytes.TrimRight(p.After, "\n"), '\n')
	}
	return nil
}

func planTOML(p *Plan, h *Harness, o Options, entry any) error {
	rest, hadBlock, err := tomlWithout(p.Before, o.Name)
	if err != nil {
		return err
	}
	if cur, present, err := tomlServer(rest, o.Name); err != nil {
		return err
	} else if present {
		return foreign(o.Name, cur)
	}
	if o.Uninstall {
		p.Found = hadBlock
		p.After = rest
		p.Delete = hadBlock && len(rest) == 0
		if !hadBlock {
			p.After = p.Before
		}
		return nil
	}
	var fields ordered
	if l, ok := entry.(Launch); ok {
		fields = h.stdio(o.Name, l).(ordered)
	} else {
		fields = entry.(ordered)
	}
	p.After, err = tomlWith(p.Before, o.Name, tomlRender(o.Name, h.Name, fields))
	return err
}

const yamlMarker = "# Written by `ai-memory install continue`"

func planYAML(p *Plan, h *Harness, o Options, entry any) error {
	if p.Existed && !bytes.HasPrefix(p.Before, []byte(yamlMarker)) {
		return fmt.Errorf("this file was not written by ai-memory install; remove it or pass --file")
	}
	if o.Uninstall {
		p.Found = p.Existed
		p.Delete = p.Existed
		return nil
	}
	l := entry.(Launch)
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	args := make([]string, len(l.Args))
	for i, a := range l.Args {
		args[i] = q(a)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s; `ai-memory install continue --uninstall` removes this file.\n", yamlMarker)
	fmt.Fprintf(&b, "name: %s\nversion: 0.0.1\nschema: v1\nmcpServers:\n", q(o.Name))
	fmt.Fprintf(&b, "  - name: %s\n    type: stdio\n    command: %s\n    args: [%s]\n", q(o.Name), q(l.Command), strings.Join(args, ", "))
	p.After = []byte(b.String())
	return nil
}

// owned reports whether a config entry is one install writes: a stdio
// server that runs an ai-memory binary's mcp command, or a remote entry
// with only the keys the remote forms use.
func owned(e map[string]any) bool {
	if t, ok := e["transport"].(map[string]any); ok {
		e = t
	}
	if c, ok := e["command"].(string); ok {
		args, _ := e["args"].([]any)
		return strings.HasPrefix(filepath.Base(c), "ai-memory") && len(args) > 0 && args[0] == "mcp"
	}
	hasURL := false
	for k := range e {
		switch k {
		case "url", "httpUrl", "serverUrl":
			hasURL = true
		case "type", "headers", "bearer_token_env_var", "name", "alwaysLoad":
		default:
			return false
		}
	}
	return hasURL
}

func foreign(name string, e map[string]any) error {
	what, _ := json.Marshal(e)
	return fmt.Errorf("a server named %q is already configured and was not written by ai-memory install (%s, %d bytes); remove it or choose another --name", name, clip(string(what)), len(what))
}

func sameJSON(cur map[string]any, want any) bool {
	a, _ := json.Marshal(cur)
	b, _ := json.Marshal(want)
	var x, y any
	_ = json.Unmarshal(a, &x)
	_ = json.Unmarshal(b, &y)
	a, _ = json.Marshal(x)
	b, _ = json.Marshal(y)
	return bytes.Equal(a, b)
}

// backupTime is the UTC time in a backup's name (<file>.bak.<time>).
const backupTime = "20060102T150405.000Z"

// Apply writes the plan: a backup of the file as it was
// (<file>.bak.<UTC time>), then the new content by rename, so the file is
// never half written. One backup is kept per file: the ones earlier runs
// of install made of it are removed once the new one is written. It
// returns the backup's path ("" when there was no file). Parent
// directories are created as needed.
func (p *Plan) Apply(now time.Time) (backup string, err error) {
	if !p.Changed() {
		return "", nil
	}
	mode := fs.FileMode(0o644)
	if p.Existed {
		if st, err := os.Stat(p.Path); err == nil {
			mode = st.Mode().Perm()
		}
		backup = p.Path + ".bak." + now.UTC().Format(backupTime)
		if err := os.WriteFile(backup, p.Before, mode); err != nil {
			return "", fmt.Errorf("backup: %w", err)
		}
		pruneBackups(p.Path, backup)
	}
	if p.Delete {
		return backup, os.Remove(p.Path)
	}
	if err := os.MkdirAll(filepath.Dir(p.Path), 0o755); err != nil {
		return backup, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p.Path), "."+filepath.Base(p.Path)+".*")
	if err != nil {
		return backup, err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(p.After); err != nil {
		tmp.Close()
		return backup, err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return backup, err
	}
	if err := tmp.Close(); err != nil {
		return backup, err
	}
	return backup, os.Rename(tmp.Name(), p.Path)
}

// pruneBackups removes the backups of path that install made before keep:
// files named <path>.bak.<UTC time> exactly, nothing else.
func pruneBackups(path, keep string) {
	prefix := filepath.Base(path) + ".bak."
	entries, _ := os.ReadDir(filepath.Dir(path))
	for _, e := range entries {
		stamp, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || e.Name() == filepath.Base(keep) || !e.Type().IsRegular() {
			continue
		}
		if _, err := time.Parse(backupTime, stamp); err == nil {
			os.Remove(filepath.Join(filepath.Dir(path), e.Name()))
		}
	}
}

// ReadLaunch reads back the stdio command a harness config holds for name,
// as the harness would start it (tests and doctor use it).
func ReadLaunch(harness, path, name string) (Launch, error) {
	h, err := Lookup(harness)
	if err != nil {
		return Launch{}, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return Launch{}, err
	}
	var e map[string]any
	switch h.format {
	case formatTOML:
		var ok bool
		if e, ok, err = tomlServer(b, name); err == nil && !ok {
			err = fmt.Errorf("no [mcp_servers.%s]", name)
		}
	case formatYAMLFile:
		e, err = yamlLaunch(b)
	default:
		var doc *jsonDoc
		if doc, err = parseJSON(b); err == nil {
			var ok bool
			if e, ok, err = doc.get(h.container, name); err == nil && !ok {
				err = fmt.Errorf("no %s.%s", strings.Join(h.container, "."), name)
			}
		}
	}
	if err != nil {
		return Launch{}, err
	}
	if t, ok := e["transport"].(map[string]any); ok {
		e = t
	}
	l := Launch{}
	l.Command, _ = e["command"].(string)
	switch a := e["args"].(type) {
	case []any:
		for _, x := range a {
			s, _ := x.(string)
			l.Args = append(l.Args, s)
		}
	case []string:
		l.Args = a
	}
	if l.Command == "" {
		return l, fmt.Errorf("entry %q has no command", name)
	}
	return l, nil
}

// yamlLaunch reads the block file planYAML writes (its flow values are JSON).
func yamlLaunch(b []byte) (map[string]any, error) {
	e := map[string]any{}
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		for _, k := range []string{"command", "args"} {
			if v, ok := strings.CutPrefix(line, k+": "); ok {
				var x any
				if err := json.Unmarshal([]byte(v), &x); err != nil {
					return nil, fmt.Errorf("%s: %w", k, err)
				}
				e[k] = x
			}
		}
	}
	return e, nil
}

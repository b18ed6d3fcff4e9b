package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/testwait"
)

// The web console (internal/console), driven as people use it: `ai-memory
// ui` for the local operator and `ai-memory serve --ui` for a team, both on
// one data dir, with memories stored over MCP. The HTTP checks run
// everywhere; the browser checks run e2e/console/console.mjs in Debian's
// headless Chromium (playwright-core, axe-core), and fail in CI without it.

// consoleUI is a running `ai-memory ui`.
type consoleUI struct {
	cmd    *exec.Cmd
	stdout *syncBuffer
	stderr *syncBuffer
	link   string // the first login link
	base   string // http://127.0.0.1:port
	// stdoutFile has what it printed: the new links the sign-in page asks for.
	stdoutFile string
}

var loginLink = regexp.MustCompile(`open (http://(127\.0\.0\.1:\d+)/ui/login\?token=\S+)`)

// ui starts `ai-memory ui` on a free loopback port as the operator id and
// waits for the login link it prints.
func (e *env) ui(id string) *consoleUI {
	e.t.Helper()
	u := &consoleUI{stdout: &syncBuffer{}, stderr: &syncBuffer{}, stdoutFile: filepath.Join(filepath.Dir(e.dataDir), "ui.out")}
	f, err := os.Create(u.stdoutFile)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { f.Close() })
	u.cmd = exec.Command(filepath.Join(e.binDir, "ai-memory"), "ui", "--no-open", "--listen", "127.0.0.1:0", "--identity", id)
	u.cmd.Env = e.environ()
	u.cmd.Stdout, u.cmd.Stderr = io.MultiWriter(u.stdout, f), u.stderr
	if err := u.cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { u.cmd.Wait(); close(done) }()
	e.t.Cleanup(func() { u.cmd.Process.Kill(); testwait.Recv(e.t, done, "the killed console to exit") })
	deadline := time.After(30 * time.Second)
	for {
		if m := loginLink.FindStringSubmatch(u.stdout.String()); m != nil {
			u.link, u.base = m[1], "http://"+m[2]
			return u
		}
		select {
		case <-done:
			e.t.Fatalf("ai-memory ui exited before printing its link:\n%s\n%s", u.stdout.String(), u.stderr.String())
		case <-deadline:
			e.t.Fatalf("ai-memory ui printed no link in 30s:\n%s\n%s", u.stdout.String(), u.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// browser is an HTTP client with cookies that does not follow redirects.
func browser(t testing.TB) *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func get(t testing.TB, c *http.Client, u string) (int, string, http.Header) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func post(t testing.TB, c *http.Client, u string, form url.Values, header ...string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// formToken is the CSRF token a page's forms carry.
func formToken(t testing.TB, page string) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF field in the page:\n%.2000s", page)
	}
	return m[1]
}

// consoleWorld is what the console tests store before they look.
type consoleWorld struct {
	Deploy, Rollback, Markup, Wifi, Release, Secret string
	SecretTitle, SecretWord                         string
	Pending                                         string
}

// seedConsole stores, over MCP, the memories the console shows: a small
// team's notes with links, an entity, a near-duplicate, a contradiction,
// markup in a note, a governed namespace with a change queued, and a
// tenant's secret stored through serve with its own key.
func seedConsole(t *testing.T, e *env, s *served, keyA string) consoleWorld {
	t.Helper()
	alice := e.startHost([]string{"--profile", "full", "--agent-id", "ai:alice"})
	defer alice.close()
	store := func(title, content, ns string, extra ...any) string {
		args := map[string]any{"title": title, "content": content, "namespace": ns, "format": "json"}
		for i := 0; i+1 < len(extra); i += 2 {
			args[extra[i].(string)] = extra[i+1]
		}
		return alice.ok("memory_store", args)["id"].(string)
	}
	var w consoleWorld
	w.Deploy = store("Deploy day", "Deploys go out on Fridays after the 14:00 standup; the on-call engineer watches the dashboards for an hour.", "shop/api", "tags", []string{"ops", "deploy"})
	w.Rollback = store("Rollback plan", "Rollbacks revert the last migration first, then redeploy the previous image.", "shop/api", "tags", []string{"ops"})
	port := store("API port", "The API listens on port 8080 in production.", "shop/api")
	store("API port (staging notes)", "The API listens on port 9090 in production.", "shop/api/staging")
	freeze := store("Deploy freeze", "Never deploy the billing service on a Friday afternoon, the on-call team is thin and rollbacks take hours.", "shop/billing", "tags", []string{"policy"})
	store("Deploy freeze (copy)", "Never deploy the billing service on a Friday afternoon: the on-call team is thin and rollbacks take hours!", "shop/billing")
	w.Markup = store("Markup in a note", `<script>window.__xss = 1</script><img src=x onerror="window.__xss = 2"><b>bold</b> & <i>done</i>`, "shop/web")
	store("Staging token", "The staging token rotates tonight.", "shop/api", "tier", "short")
	store("Team conventions", "Commit messages say why, not what. Reviews within a day.", "team", "tier", "long", "tags", []string{"conventions"})
	w.Wifi = store("Office wifi", "The guest network is called shop-guest.", "team")
	alice.ok("memory_update", map[string]any{"id": w.Deploy, "content": "Deploys go out on Thursdays after the 14:00 standup; the on-call engineer watches the dashboards for an hour."})
	alice.ok("memory_link", map[string]any{"source_id": w.Deploy, "target_id": w.Rollback})
	alice.ok("memory_link", map[string]any{"source_id": w.Rollback, "target_id": freeze})
	alice.ok("memory_link", map[string]any{"source_id": w.Deploy, "target_id": freeze, "relation": "supersedes"})
	alice.ok("memory_kg_invalidate", map[string]any{"source_id": w.Deploy, "target_id": freeze, "relation": "supersedes"})
	ent := alice.ok("memory_entity_register", map[string]any{"canonical_name": "Postgres", "namespace": "shop/api", "aliases": []string{"pg", "psql"}})["entity_id"].(string)
	alice.ok("memory_link", map[string]any{"source_id": ent, "target_id": port})
	rules := store("Release rules", "Changes to the release checklist need a second pair of eyes.", "release")
	w.Release = store("Release checklist", "1. Tag. 2. Build. 3. Announce.", "release")
	alice.ok("memory_namespace_set_standard", map[string]any{"namespace": "release", "id": rules, "governance": map[string]any{"write": "approve"}})
	alice.ok("memory_subscribe", map[string]any{"url": "https://hooks.example.com/ai-memory", "events": "memory_store,memory_update", "namespace_filter": "shop/api"})

	// A change an agent asked for, which governance holds for approval.
	bob := e.startHost([]string{"--profile", "full", "--agent-id", "ai:bob"})
	defer bob.close()
	text, isErr := bob.call("memory_update", map[string]any{"id": w.Wifi, "content": "The guest network is shop-guest; its password is on the fridge."})
	if isErr {
		t.Fatalf("bob's update of an ungoverned memory: %s", text)
	}
	text, isErr = bob.call("memory_store", map[string]any{"title": "Release day", "content": "Releases go out on Tuesdays.", "namespace": "release", "format": "json"})
	if isErr || !strings.Contains(text, `"pending_id"`) {
		t.Fatalf("bob's store in a governed namespace was not queued: %s", text)
	}
	w.Pending = jsonOf(t, text)["pending_id"].(string)

	// Tenant A's secret, through serve with A's key.
	w.SecretWord = "zanzibar"
	w.SecretTitle = "Tenant A payroll " + w.SecretWord
	a := s.connect(keyA, nil)
	defer a.close()
	w.Secret = a.ok("memory_store", map[string]any{"title": w.SecretTitle, "content": "The payroll database password is hunter2 " + w.SecretWord + ".", "namespace": "team-a", "format": "json"})["id"].(string)
	return w
}

func TestConsole(t *testing.T) {
	e := newEnv(t)
	keyA := e.token("team-a", "--namespace", "team-a")
	keyB := e.token("team-b", "--namespace", "team-b")
	keyOps := e.token("ops", "--namespace", "*")
	s := e.serve("--ui")
	w := seedConsole(t, e, s, keyA)
	u := e.ui("cli:operator")
	serveBase := strings.TrimSuffix(s.url, "/mcp")

	t.Run("http", func(t *testing.T) { consoleHTTPChecks(t, e, u, serveBase, keyA, keyB, w) })
	t.Run("browser", func(t *testing.T) { consoleBrowserChecks(t, e, u, serveBase, keyA, keyB, keyOps, w) })
}

// consoleHTTPChecks: security headers on every answer, the login link
// works once, a change without the CSRF token is refused and changes
// nothing, markup is escaped, a tenant sees nothing of another's, and the
// front's Host and Origin checks hold for the console's paths too.
func consoleHTTPChecks(t *testing.T, e *env, u *consoleUI, serveBase, keyA, keyB string, w consoleWorld) {
	checkHeaders := func(what string, h http.Header) {
		t.Helper()
		if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") || strings.Contains(csp, "unsafe-inline") {
			t.Errorf("%s: Content-Security-Policy %q", what, csp)
		}
		if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("%s: headers %v", what, h)
		}
	}

	// The login link works once; the session it makes is HttpOnly and SameSite=Strict.
	op := browser(t)
	code, _, h := get(t, op, u.link)
	checkHeaders("login link", h)
	if cookie := h.Get("Set-Cookie"); code != http.StatusOK || !strings.Contains(cookie, "HttpOnly") || !strings.Contains(cookie, "SameSite=Strict") {
		t.Fatalf("login link: %d, cookie %q", code, cookie)
	}
	if code, body, _ := get(t, browser(t), u.link); code != http.StatusForbidden || !strings.Contains(body, "used already") {
		t.Errorf("the login link a second time: %d\n%.500s", code, body)
	}
	code, page, h := get(t, op, u.base+"/ui/memory/"+w.Markup)
	checkHeaders("memory page", h)
	if code != http.StatusOK || !strings.Contains(page, "&lt;script&gt;window.__xss = 1&lt;/script&gt;") || strings.Contains(page, "<script>window") || strings.Contains(page, "<img src=x") {
		t.Errorf("markup in a memory is not shown as text: %d\n%.3000s", code, page)
	}
	for _, path := range []string{"/ui/static/console.css", "/ui/static/console.js", "/ui/login", "/ui/nothing", "/"} {
		_, _, h := get(t, op, u.base+path)
		checkHeaders(path, h)
	}

	// A change without the session's CSRF token is refused, and audited.
	token := formToken(t, page)
	if code, body := post(t, op, u.base+"/ui/memory/"+w.Rollback+"/forget", url.Values{}); code != http.StatusForbidden || !strings.Contains(body, "form token") {
		t.Errorf("forget without the CSRF token: %d\n%.500s", code, body)
	}
	if code, _ := post(t, op, u.base+"/ui/memory/"+w.Rollback+"/forget", url.Values{"csrf": {"x" + token[1:]}}); code != http.StatusForbidden {
		t.Errorf("forget with another CSRF token: %d", code)
	}
	if code, _, _ := get(t, op, u.base+"/ui/memory/"+w.Rollback); code != http.StatusOK {
		t.Errorf("the memory after refused changes: %d", code)
	}
	// Another site's page cannot post, whatever it carries (the front's Origin check).
	if code, _ := post(t, op, u.base+"/ui/memory/"+w.Rollback+"/promote", url.Values{"csrf": {token}}, "Origin", "https://evil.example"); code != http.StatusForbidden {
		t.Errorf("a change from another origin: %d", code)
	}
	req, _ := http.NewRequest(http.MethodGet, u.base+"/ui/memories", nil)
	req.Host = "evil.example"
	if resp, err := op.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("a page for another Host: %v %v", resp, err)
	} else {
		checkHeaders("Host refusal", resp.Header)
		resp.Body.Close()
	}
	out, _ := e.cli("audit", "list", "--json", "--limit", "200")
	if !strings.Contains(out, "csrf") || !strings.Contains(out, "cli:operator") {
		t.Errorf("the refused change is not in the audit log:\n%.3000s", out)
	}

	// serve --ui: the sign-in needs its form's token; a key signs in; the
	// session sees its tenant only.
	b := browser(t)
	code, login, _ := get(t, b, serveBase+"/ui/login")
	if code != http.StatusOK || !strings.Contains(login, `name="key"`) {
		t.Fatalf("serve's sign-in page: %d\n%.1000s", code, login)
	}
	if code, _ := post(t, browser(t), serveBase+"/ui/login", url.Values{"key": {keyB}, "csrf": {formToken(t, login)}}); code != http.StatusForbidden {
		t.Errorf("a sign-in without the form's cookie: %d", code)
	}
	if code, _ := post(t, b, serveBase+"/ui/login", url.Values{"key": {"aim_wrong"}, "csrf": {formToken(t, login)}}); code != http.StatusUnauthorized {
		t.Errorf("a sign-in with a wrong key: %d", code)
	}
	if code, _ := post(t, b, serveBase+"/ui/login", url.Values{"key": {keyB}, "csrf": {formToken(t, login)}}); code != http.StatusSeeOther {
		t.Fatalf("team-b's sign-in: %d", code)
	}
	pages := []string{"/ui/memories", "/ui/memories?q=" + w.SecretWord, "/ui/memories?q=" + w.SecretWord + "&mode=meaning",
		"/ui/memory/" + w.Secret, "/ui/memory/" + w.Secret[:8], "/ui/graph?q=" + w.Secret, "/ui/review", "/ui/activity", "/ui/memories?ns=team-a"}
	for _, path := range pages {
		_, body, _ := get(t, b, serveBase+path)
		if strings.Contains(body, "Tenant A payroll") || strings.Contains(body, "hunter2") {
			t.Errorf("team-b's console shows team-a's memory at %s:\n%.3000s", path, body)
		}
	}
	// Its twin: team-a's console shows it, where it is.
	a := browser(t)
	_, login, _ = get(t, a, serveBase+"/ui/login")
	if code, _ := post(t, a, serveBase+"/ui/login", url.Values{"key": {keyA}, "csrf": {formToken(t, login)}}); code != http.StatusSeeOther {
		t.Fatalf("team-a's sign-in: %d", code)
	}
	for _, path := range pages[:4] {
		if _, body, _ := get(t, a, serveBase+path); !strings.Contains(body, "Tenant A payroll") {
			t.Errorf("team-a's console does not show its own memory at %s:\n%.3000s", path, body)
		}
	}
	for _, path := range []string{"/ui/health", "/ui/cost"} {
		if code, _, _ := get(t, b, serveBase+path); code != http.StatusForbidden {
			t.Errorf("team-b (no operator grant) at %s: %d", path, code)
		}
	}

	// A key for the core family alone: the graph and the edit are hidden,
	// their pages not found. Then, revoked, it ends its sessions at once.
	keyC := e.token("team-c", "--namespace", "team-c", "--families", "core")
	c := browser(t)
	_, login, _ = get(t, c, serveBase+"/ui/login")
	if code, _ := post(t, c, serveBase+"/ui/login", url.Values{"key": {keyC}, "csrf": {formToken(t, login)}}); code != http.StatusSeeOther {
		t.Fatalf("team-c's sign-in: %d", code)
	}
	if code, body, _ := get(t, c, serveBase+"/ui/memories"); code != http.StatusOK || strings.Contains(body, `href="/ui/graph"`) || !strings.Contains(body, `href="/ui/activity"`) {
		t.Errorf("team-c's (core only) memories: %d, the graph hidden %v\n%.3000s", code, !strings.Contains(body, `href="/ui/graph"`), body)
	}
	for _, path := range []string{"/ui/graph?q=" + w.Secret, "/ui/memory/" + w.Secret + "/edit"} {
		if code, _, _ := get(t, c, serveBase+path); code != http.StatusNotFound {
			t.Errorf("team-c (core only) at %s: %d", path, code)
		}
	}
	out, _ = e.cli("token", "list", "--json")
	var keys []struct{ ID, Principal string }
	if err := json.Unmarshal([]byte(out), &keys); err != nil {
		t.Fatalf("token list: %v\n%s", err, out)
	}
	for _, k := range keys {
		if k.Principal == "team-c" {
			if out, code := e.cli("token", "revoke", k.ID); code != 0 {
				t.Fatalf("revoke: %s", out)
			}
		}
	}
	if code, _, h := get(t, c, serveBase+"/ui/memories"); code != http.StatusSeeOther || !strings.HasSuffix(h.Get("Location"), "/ui/login") {
		t.Errorf("team-c's session after its key was revoked: %d to %q", code, h.Get("Location"))
	}
}

// consoleBrowserChecks runs e2e/console/console.mjs in headless Chromium,
// then checks over MCP what it changed.
func consoleBrowserChecks(t *testing.T, e *env, u *consoleUI, serveBase, keyA, keyB, keyOps string, w consoleWorld) {
	dir := filepath.Join(repoRoot(), "e2e", "console")
	node, nerr := exec.LookPath("node")
	chromium, cerr := exec.LookPath("chromium")
	_, merr := os.Stat(filepath.Join(dir, "node_modules", "playwright-core"))
	if nerr != nil || cerr != nil || merr != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("node, Debian's chromium and `npm ci --prefix e2e/console` are required in CI (node: %v, chromium: %v, playwright-core: %v)", nerr, cerr, merr)
		}
		t.Skip("needs node, chromium (apt-get install chromium) and `npm ci --prefix e2e/console`")
	}
	shots := os.Getenv("AI_MEMORY_CONSOLE_SHOTS")
	if shots == "" {
		shots = filepath.Join(dir, "artifacts")
	}
	cfg, _ := json.Marshal(map[string]any{
		"chromium": chromium, "local": u.base, "serve": serveBase, "shots": shots,
		"keys":  map[string]string{"a": keyA, "b": keyB, "ops": keyOps},
		"world": w,
	})
	cmd := commandWithin(t, toolDeadline, node, filepath.Join(dir, "console.mjs"))
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(cfg)
	// The link printed first was used above: the script asks the sign-in
	// page for a new one and reads it where ai-memory ui prints.
	cmd.Env = append(os.Environ(), "CONSOLE_UI_STDOUT="+u.stdoutFile)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	t.Logf("console.mjs:\n%s", stderr.String())
	if err != nil {
		t.Fatalf("console.mjs: %v\n%s", err, out)
	}
	var res struct {
		Edited     string `json:"edited"`
		Queued     string `json:"queued"`
		Restored   string `json:"restored"`
		Screenshot int    `json:"screenshots"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("console.mjs output: %v\n%s", err, out)
	}
	t.Logf("%d screenshots in %s", res.Screenshot, shots)

	h := e.startHost([]string{"--profile", "full", "--agent-id", "ai:checker"})
	defer h.close()
	if m := h.ok("memory_get", map[string]any{"id": w.Rollback, "format": "json"}); m["content"] != res.Edited || res.Edited == "" {
		t.Errorf("memory_get after the console's edit: %q, want %q", m["content"], res.Edited)
	}
	if m := h.ok("memory_get", map[string]any{"id": w.Wifi, "format": "json"}); m["id"] != w.Wifi || res.Restored != w.Wifi {
		t.Errorf("forget then restore in the console: memory_get %v, restored %q", m, res.Restored)
	}
	if m := h.ok("memory_get", map[string]any{"id": w.Release, "format": "json"}); m["content"] != res.Queued || res.Queued == "" {
		t.Errorf("the queued edit, approved in the console: memory_get %q, want %q", m["content"], res.Queued)
	}
	if list := h.ok("memory_pending_list", map[string]any{"status": "approved"}); list["count"] != float64(2) {
		t.Errorf("approved actions: %v, want bob's store and the console's edit", list)
	}
}

// TestMakeBuildWithoutNode: the console's assets are hand-written and
// embedded, so `make build` needs no Node toolchain. node and npm on PATH
// are stand-ins that fail and leave a mark: the build must not call them.
func TestMakeBuildWithoutNode(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("needs make")
	}
	tmp := t.TempDir()
	shims, mark := filepath.Join(tmp, "shims"), filepath.Join(tmp, "called")
	if err := os.Mkdir(shims, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"node", "npm", "npx"} {
		script := "#!/bin/sh\necho " + name + " >> " + mark + "\nexit 1\n"
		if err := os.WriteFile(filepath.Join(shims, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := commandWithin(t, toolDeadline, "make", "build", "BIN="+filepath.Join(tmp, "bin"))
	cmd.Dir = repoRoot()
	cmd.Env = append(shellEnv(func(k string) bool { return k == "PATH" }), "PATH="+shims+string(os.PathListSeparator)+os.Getenv("PATH"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make build with node off PATH: %v\n%s", err, out)
	}
	if called, err := os.ReadFile(mark); err == nil {
		t.Fatalf("make build called %s", called)
	}
	if _, err := os.Stat(filepath.Join(tmp, "bin", "ai-memory")); err != nil {
		t.Fatal(err)
	}
}

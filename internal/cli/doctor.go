package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"google.golang.org/grpc"

	"github.com/ai-memory/ai-memory/internal/assertion"
	"github.com/ai-memory/ai-memory/internal/config"
	"github.com/ai-memory/ai-memory/internal/supervisor"
	"github.com/ai-memory/ai-memory/internal/supervisor/sandbox"
	"github.com/ai-memory/ai-memory/sdk/wire"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

type doctorCmd struct {
	Tokens   bool   `help:"Report what each tool, family and profile costs in cl100k_base tokens."`
	Profile  string `help:"With --tokens: the profile to measure (default core)."`
	JSON     bool   `help:"Print the report as JSON."`
	RawTable bool   `help:"With --tokens: JSON including the per-tool table."`
	URL      string `help:"Check a running ai-memory serve at this URL (e.g. http://127.0.0.1:8420/mcp) instead of the local installation." name:"url"`
	TokenEnv string `help:"With --url: the environment variable holding the API key or access token." name:"token-env"`
}

// check is one line of the report. Status is ok, fail, or a state that is
// not a failure: none (nothing configured, defaults apply), missing (not
// created yet) or idle (the engine is started on demand).
type check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Status string `json:"status"`
	Detail string `json:"detail"`
}

// Run reports on the installation (doctorChecks), or on a running serve.
func (c *doctorCmd) Run(root *rootCmd) error {
	if c.Tokens || c.RawTable {
		r, err := tokensReport(root, c.Profile)
		if err != nil {
			return err
		}
		printTokens(r, c.JSON, c.RawTable)
		return nil
	}
	if c.URL != "" {
		var checks []check
		add, note := collect(&checks)
		remoteChecks(c.URL, c.TokenEnv, add, note)
		return report(checks, c.JSON)
	}
	return report(doctorChecks(root, true, supervisor.Verify), c.JSON)
}

// collect returns the two ways a report adds a check to checks: add (ok,
// or fail with err's words) and note (a status of its own).
func collect(checks *[]check) (add func(name string, err error, detail string), note func(name, status string, ok bool, detail string)) {
	add = func(name string, err error, detail string) {
		status := "ok"
		if err != nil {
			status, detail = "fail", err.Error()
		}
		*checks = append(*checks, check{Name: name, OK: err == nil, Status: status, Detail: detail})
	}
	note = func(name, status string, ok bool, detail string) {
		*checks = append(*checks, check{Name: name, OK: ok, Status: status, Detail: detail})
	}
	return add, note
}

// doctorChecks is doctor's report on the local installation, without
// changing anything: it does not start an engine, only looks for a
// running one. records reads every record (one export stream, the
// report's slowest check): the console's health page leaves it out.
// verify checks a plugin binary against its pin.
func doctorChecks(root *rootCmd, records bool, verify func(supervisor.Binary) error) []check {
	var checks []check
	add, note := collect(&checks)
	cfgPath := config.Path(root.Config)
	cfg, err := config.Load(cfgPath)
	if _, serr := os.Stat(cfgPath); err == nil && errors.Is(serr, fs.ErrNotExist) {
		note("config", "none", true, "(defaults) no file at "+cfgPath)
	} else {
		add("config", err, cfgPath)
	}
	profile, source, err := config.ResolveProfile("", cfg)
	add("profile", err, fmt.Sprintf("%s (from %s)", profile, source))
	ns, nsSource, err := defaultNamespace("", cfg)
	add("namespace", err, fmt.Sprintf("%s (from %s; a host started here stores there by default)", ns, nsSource))

	dataDir := config.DataDir(root.DataDir)
	if _, err := os.Stat(dataDir); errors.Is(err, fs.ErrNotExist) {
		note("data dir", "missing", false, dataDir+" does not exist yet; the first host to start creates it")
	} else {
		add("data dir", err, dataDir)
	}
	if detail, h, err := engineHealth(filepath.Join(dataDir, "engine.sock")); err != nil {
		note("engine", "idle", false, err.Error()) // normal: a host starts it on demand
	} else {
		add("engine", nil, detail)
		if h.GetBackend() != "" {
			add("storage", nil, fmt.Sprintf("%s at %s, schema %d", h.GetBackend(), h.GetLocation(), h.GetSchemaVersion()))
		}
		for _, c := range h.GetCapabilities() {
			status := "off"
			if c.GetOn() {
				status = "on"
			}
			note("capability "+c.GetName(), status, true, c.GetDetail())
		}
		st, detail := embedderHealth(filepath.Join(dataDir, "engine.sock"))
		note("embedder", st, st != "fail", detail)
		if st, err := runningStats(dataDir); err != nil {
			add("stats", err, "")
		} else {
			checks = append(checks, healthChecks(st)...)
		}
		if records {
			checks = append(checks, recordsCheck(dataDir))
		}
	}

	dir := pluginDir()
	bins, err := supervisor.Discover(dir, cfg.Plugins)
	if err == nil && len(bins) == 0 {
		err = fmt.Errorf("no plugins listed in %s (run make build)", filepath.Join(dir, supervisor.ManifestName))
	}
	add("plugins", err, fmt.Sprintf("%d found in %s", len(bins), dir))
	for _, b := range bins {
		add("plugin "+b.Name, verify(b), "SHA-256 matches "+b.Checksum[:12]+"…")
	}
	if active, detail := sandbox.Status(); active {
		note("confinement", "active", true, detail)
	} else {
		note("confinement", "off", false, detail)
	}

	return checks
}

// report prints the checks; an error if any failed.
func report(checks []check, asJSON bool) error {
	healthy := true
	for _, ch := range checks {
		healthy = healthy && ch.Status != "fail"
	}
	if asJSON {
		out, _ := json.MarshalIndent(map[string]any{"healthy": healthy, "checks": checks}, "", "  ")
		fmt.Println(string(out))
	} else {
		w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "STATUS\tCHECK\tDETAIL")
		for _, ch := range checks {
			mark := ch.Status
			if mark == "fail" {
				mark = "FAIL"
			}
			fmt.Fprintf(w, "%s\t%s\t%s\n", mark, ch.Name, ch.Detail)
		}
		w.Flush()
	}
	if !healthy {
		return &exitError{code: 1, msg: "ai-memory doctor: problems found"}
	}
	return nil
}

// embedderHealth reports the running engine's embedding endpoint: none
// configured, answering (with vector coverage), or failing (the reason).
func embedderHealth(socket string) (status, detail string) {
	creds, err := assertion.HostDial(filepath.Dir(socket), "cli:doctor", "")
	if err != nil {
		return "fail", err.Error()
	}
	conn, err := wire.DialEngineAt(socket, creds)
	if err != nil {
		return "fail", err.Error()
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	st, err := conn.VectorStatus(ctx, &aimemoryv1.VectorStatusRequest{}, grpc.WaitForReady(false))
	switch {
	case err != nil:
		return "fail", err.Error()
	}
	return vectorHealth(st)
}

func engineHealth(socket string) (string, *aimemoryv1.HealthResponse, error) {
	if _, err := os.Stat(socket); err != nil {
		return "", nil, fmt.Errorf("not running (no socket at %s); a host starts it on demand", socket)
	}
	creds, err := assertion.HostDial(filepath.Dir(socket), "cli:doctor", "")
	if err != nil {
		return "", nil, err
	}
	conn, err := wire.DialEngineAt(socket, creds)
	if err != nil {
		return "", nil, err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	h, err := conn.Health(ctx, &aimemoryv1.HealthRequest{}, grpc.WaitForReady(false))
	if err != nil {
		return "", nil, fmt.Errorf("not answering: %v", err)
	}
	return fmt.Sprintf("running (pid %d, schema %d, %d memories), socket %s", h.GetPid(), h.GetSchemaVersion(), h.GetMemoryCount(), socket), h, nil
}

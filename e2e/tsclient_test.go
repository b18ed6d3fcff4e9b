package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// TestOfficialTypeScriptClient drives the host with the MCP TypeScript SDK's
// own client (e2e/tsclient), the library most harnesses are built on.
func TestOfficialTypeScriptClient(t *testing.T) {
	dir := filepath.Join(repoRoot(), "e2e", "tsclient")
	node, err := exec.LookPath("node")
	if _, serr := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil || serr != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("node and `npm ci --prefix e2e/tsclient` are required in CI (node: %v, sdk: %v)", err, serr)
		}
		t.Skip("needs node and `npm ci --prefix e2e/tsclient`")
	}
	e := newEnv(t)
	cmd := commandWithin(t, toolDeadline, node, filepath.Join(dir, "client.mjs"), filepath.Join(e.binDir, "ai-memory"))
	cmd.Env = e.environ()
	cmd.Dir = filepath.Dir(e.dataDir) // outside any git work tree
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("ts client: %v\n%s\n%s", err, out, stderr)
	}
	var r struct {
		Capabilities struct {
			Tools struct {
				ListChanged bool `json:"listChanged"`
			} `json:"tools"`
		} `json:"capabilities"`
		Tools    []string       `json:"tools"`
		Store    map[string]any `json:"store"`
		Recall   map[string]any `json:"recall"`
		BadStore struct {
			IsError bool   `json:"isError"`
			Text    string `json:"text"`
		} `json:"badStore"`
		ListChanged int            `json:"listChanged"`
		ToolsAfter  []string       `json:"toolsAfter"`
		Echo        map[string]any `json:"echo"`
		Unknown     map[string]any `json:"unknown"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("ts client output: %v\n%s", err, out)
	}
	if !r.Capabilities.Tools.ListChanged || !slices.Equal(r.Tools, coreSurface) {
		t.Errorf("capabilities %+v, tools %v", r.Capabilities, r.Tools)
	}
	if r.Store["agent_id"] != "ai:ts-sdk-e2e" || r.Recall["count"] != float64(1) {
		t.Errorf("store %v, recall %v", r.Store, r.Recall)
	}
	if !r.BadStore.IsError || !contains(r.BadStore.Text, "content") {
		t.Errorf("bad store %+v", r.BadStore)
	}
	if r.ListChanged < 1 || !slices.Contains(r.ToolsAfter, "test_echo") || r.Echo["agent_id"] != "ai:ts-sdk-e2e" {
		t.Errorf("expansion: %d notifications, tools %v, echo %v", r.ListChanged, r.ToolsAfter, r.Echo)
	}
	if r.Unknown["code"] != float64(-32602) {
		t.Errorf("unknown tool: %v", r.Unknown)
	}
}

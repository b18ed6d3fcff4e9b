package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

var coreSurface = []string{"memory_capabilities", "memory_get", "memory_list", "memory_recall", "memory_search", "memory_store"}

func sorted(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }

func TestToolsListUnderCoreIsExactlySix(t *testing.T) {
	h := newEnv(t).startHost(nil)
	if got := sorted(h.toolNames()); !slices.Equal(got, coreSurface) {
		t.Fatalf("tools/list under core = %v, want %v", got, coreSurface)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := h.c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		raw, _ := json.Marshal(tool)
		var wire map[string]any
		json.Unmarshal(raw, &wire)
		meta, _ := wire["_meta"].(map[string]any)
		if meta["anthropic/alwaysLoad"] != true {
			t.Errorf("%s lacks _meta anthropic/alwaysLoad", tool.Name)
		}
		if tool.Description == "" {
			t.Errorf("%s has no description", tool.Name)
		}
		switch tool.Name {
		case "memory_get", "memory_list", "memory_search":
			if tool.Annotations.ReadOnlyHint == nil || !*tool.Annotations.ReadOnlyHint {
				t.Errorf("%s is not marked read-only", tool.Name)
			}
			if tool.Annotations.DestructiveHint != nil && *tool.Annotations.DestructiveHint {
				t.Errorf("%s is marked destructive", tool.Name)
			}
		case "memory_store", "memory_recall":
			if tool.Annotations.DestructiveHint != nil && *tool.Annotations.DestructiveHint {
				t.Errorf("%s is marked destructive", tool.Name)
			}
		}
	}
}

func TestToolsListUnderFullHasEveryInstalledTool(t *testing.T) {
	h := newEnv(t).startHost([]string{"--profile", "full"})
	want := sorted(append(slices.Concat(coreSurface, graphTools, lifecycleTools, governanceSurface, hooksTools, powerTools, archiveTools, metaTools), "test_echo"))
	if got := sorted(h.toolNames()); !slices.Equal(got, want) {
		t.Fatalf("tools/list under full = %v, want %v", got, want)
	}
}

func TestProfilePrecedence(t *testing.T) {
	e := newEnv(t)
	e.writeConfig("[mcp]\nprofile = \"echo\"\n")
	has := func(h *host) bool { return slices.Contains(h.toolNames(), "test_echo") }
	if !has(e.startHost(nil)) {
		t.Error("config [mcp].profile = echo did not load the echo family")
	}
	if has(e.startHost(nil, "AI_MEMORY_PROFILE=core")) {
		t.Error("AI_MEMORY_PROFILE=core did not override the config")
	}
	if !has(e.startHost([]string{"--profile", "core,echo"}, "AI_MEMORY_PROFILE=core")) {
		t.Error("--profile did not override AI_MEMORY_PROFILE")
	}
	if !has(e.startHost(nil, "AI_MEMORY_PROFILE=")) {
		t.Error("an empty AI_MEMORY_PROFILE must count as unset")
	}
}

func TestBadProfileExitsTwoListingValidNames(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"--profile", "nope"}, "", "families are core, lifecycle, graph"},
		{nil, "AI_MEMORY_PROFILE=Core", "lowercase"},
		{[]string{"--profile", "core,xyz"}, "", `"xyz"`},
	} {
		cmd := command(t, filepath.Join(e.binDir, "ai-memory"), append([]string{"mcp"}, tc.args...)...)
		cmd.Env = e.environ(tc.env)
		out, err := cmd.CombinedOutput()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 2 {
			t.Errorf("%v %s: exit %v, want 2", tc.args, tc.env, err)
		}
		s := string(out)
		if !strings.Contains(s, "invalid profile") || !strings.Contains(s, tc.want) || !strings.Contains(s, "core, graph, admin, power, full") && tc.want != "lowercase" {
			t.Errorf("%v %s: message %q lacks %q and the valid names", tc.args, tc.env, s, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(e.dataDir, "engine.sock")); err == nil {
		t.Error("a host with a bad profile started an engine")
	}
}

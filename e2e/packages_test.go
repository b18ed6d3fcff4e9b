package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ai-memory/ai-memory/internal/version"
)

// The SDKs as a user gets them: packed as a registry would serve them,
// installed into a fresh project outside the tree, and run against the
// built binary (store, recall, requireProfile).

// TestTypeScriptSDKPackage: `npm pack` holds the built code and the
// licence; installed into a new project, its types compile under
// --strict in a consumer's code, and the consumer stores, recalls and
// checks profiles over stdio and over HTTP (ProfileNotLoaded's hint names
// `serve --profile` there).
func TestTypeScriptSDKPackage(t *testing.T) {
	t.Parallel() // mostly waiting on the go, npm and pip tools: beside the other slow ones
	npm, err := exec.LookPath("npm")
	if err != nil {
		needInCI(t, "npm")
	}
	sdkDir := filepath.Join(repoRoot(), "sdk", "typescript")
	tsc := filepath.Join(sdkDir, "node_modules", "typescript", "bin", "tsc")
	if _, err := os.Stat(tsc); err != nil {
		needInCI(t, "`npm ci --prefix sdk/typescript` (make test runs it)")
	}
	tmp := t.TempDir()
	run := func(dir string, env []string, name string, args ...string) string {
		t.Helper()
		cmd := commandWithin(t, toolDeadline, name, args...)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
		out, err := cmd.Output()
		if err != nil {
			var stderr []byte
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			t.Fatalf("%s %s: %v\n%s\n%s", name, strings.Join(args, " "), err, out, stderr)
		}
		return string(out)
	}

	var packed []struct {
		Filename string
		Version  string
		Files    []struct{ Path string }
	}
	if err := json.Unmarshal([]byte(run(sdkDir, nil, npm, "pack", "--json", "--pack-destination", tmp)), &packed); err != nil || len(packed) != 1 {
		t.Fatalf("npm pack --json: %v %+v", err, packed)
	}
	var files []string
	for _, f := range packed[0].Files {
		files = append(files, f.Path)
	}
	for _, want := range []string{"dist/index.js", "dist/index.d.ts", "dist/memory.js", "LICENSE", "README.md", "package.json"} {
		if !slices.Contains(files, want) {
			t.Errorf("the package lacks %s: %v", want, files)
		}
	}
	if packed[0].Version != version.Number {
		t.Errorf("package version %s, want %s", packed[0].Version, version.Number)
	}

	app := filepath.Join(tmp, "app")
	writeFiles(t, app, map[string]string{
		"package.json":  `{"name": "consumer", "private": true, "type": "module"}`,
		"tsconfig.json": `{"compilerOptions": {"strict": true, "target": "ES2022", "module": "NodeNext", "moduleResolution": "NodeNext", "skipLibCheck": true, "types": []}, "files": ["check.ts"]}`,
		"check.ts":      tsConsumer,
	})
	// The MCP SDK, its peer dependency, comes from the registry (or npm's
	// cache, which make test's npm ci filled).
	run(app, nil, npm, "install", "--prefer-offline", "--no-audit", "--no-fund", "--silent", filepath.Join(tmp, packed[0].Filename))
	run(app, nil, "node", tsc, "-p", "tsconfig.json")

	e := newEnv(t)
	s := e.serve("--auth", "none")
	out := run(app, e.environ("AI_MEMORY_BIN="+filepath.Join(bins, "ai-memory"), "AI_MEMORY_URL="+s.url), "node", "check.js")
	expectJSON(t, "check.js", out, map[string]any{
		"version":     version.Number,
		"recalled":    true,
		"empty":       float64(0),
		"core":        "core",
		"stdioHint":   "restart the MCP server with --profile graph or set AI_MEMORY_PROFILE=graph",
		"httpMissing": "graph",
		"httpHint":    "restart ai-memory serve with --profile graph or set AI_MEMORY_PROFILE=graph where it runs",
		"profile":     "core",
	})
}

// tsConsumer is a user's program: strict TypeScript against the installed
// package, no casts. It prints what the Go test checks.
const tsConsumer = `import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { AiMemory, ProfileNotLoaded, VERSION, requireProfile, type Memory, type RecallResult } from "@ai-memory/sdk";

declare const process: { env: Record<string, string | undefined> };

async function hintOf(p: Promise<unknown>): Promise<ProfileNotLoaded> {
  try {
    await p;
  } catch (e) {
    if (e instanceof ProfileNotLoaded) return e;
    throw e;
  }
  throw new Error("no ProfileNotLoaded");
}

const env = Object.fromEntries(Object.entries(process.env).filter((kv): kv is [string, string] => kv[1] !== undefined));
const mem = await AiMemory.spawn({ binary: process.env.AI_MEMORY_BIN, profile: "core", env });
const stored = await mem.store({ title: "Deploy day", content: "deploys go out on fridays", tags: ["ops"] });
const hits: RecallResult = await mem.recall({ context: "when do we deploy" });
const ids: string[] = hits.memories.map((m: Memory) => m.id);
const none = await mem.recall({ context: "zebra quantum" });
const caps = await mem.capabilities();
const core = await requireProfile(mem.client, "core");
const stdio = await hintOf(requireProfile(mem.client, "graph"));
await mem.close();

const http = new Client({ name: "consumer", version: "1" });
await http.connect(new StreamableHTTPClientTransport(new URL(process.env.AI_MEMORY_URL ?? "")));
const overHTTP = await hintOf(requireProfile(http, "graph"));
await http.close();

console.log(JSON.stringify({
  version: VERSION,
  recalled: ids[0] === stored.id,
  empty: none.memories.length,
  core: core.families.join(","),
  stdioHint: stdio.hint,
  httpMissing: overHTTP.missing.join(","),
  httpHint: overHTTP.hint,
  profile: caps.profile,
}));
`

// TestPythonSDKPackage: a wheel built by pip in a fresh venv (its build
// requirement, setuptools, is all it fetches), installed offline into
// another fresh venv, and a script there, outside the tree, stores,
// recalls and checks profiles against the built binary.
func TestPythonSDKPackage(t *testing.T) {
	t.Parallel() // mostly waiting on the go, npm and pip tools: beside the other slow ones
	py, err := exec.LookPath("python3")
	if err != nil {
		needInCI(t, "python3")
	}
	if out, err := commandWithin(t, toolDeadline, py, "-c", "import ensurepip, venv").CombinedOutput(); err != nil {
		needInCI(t, "python3's venv and ensurepip (Debian: python3-venv): "+strings.TrimSpace(string(out)))
	}
	tmp := t.TempDir()
	run := func(env []string, name string, args ...string) string {
		t.Helper()
		cmd := commandWithin(t, toolDeadline, name, args...)
		cmd.Dir, cmd.Env = tmp, append(os.Environ(), append([]string{"PIP_DISABLE_PIP_VERSION_CHECK=1", "PYTHONDONTWRITEBYTECODE=1"}, env...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	// A copy: pip builds in the source directory (build/, *.egg-info).
	src := filepath.Join(tmp, "src")
	if err := os.CopyFS(src, os.DirFS(filepath.Join(repoRoot(), "sdk", "python"))); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"tests", "src/ai_memory/__pycache__"} {
		os.RemoveAll(filepath.Join(src, d))
	}
	run(nil, py, "-m", "venv", filepath.Join(tmp, "build"))
	run(nil, filepath.Join(tmp, "build", "bin", "pip"), "wheel", "--quiet", "--no-deps", "--wheel-dir", filepath.Join(tmp, "dist"), src)
	wheel := filepath.Join(tmp, "dist", "ai_memory_sdk-"+version.Number+"-py3-none-any.whl")
	if _, err := os.Stat(wheel); err != nil {
		t.Fatalf("no wheel %s: %v", filepath.Base(wheel), err)
	}

	// The user's venv gets it from the wheel alone (the first venv's pip
	// installs into it: one pip install of pip less).
	app := filepath.Join(tmp, "app")
	run(nil, py, "-m", "venv", "--without-pip", app)
	run(nil, filepath.Join(tmp, "build", "bin", "pip"), "--python", filepath.Join(app, "bin", "python"), "install", "--quiet", "--no-index", wheel)
	writeFiles(t, app, map[string]string{"check.py": pyConsumer})
	e := newEnv(t)
	out := run(e.environ("AI_MEMORY_BIN="+filepath.Join(bins, "ai-memory")), filepath.Join(app, "bin", "python"), filepath.Join(app, "check.py"))
	expectJSON(t, "check.py", out, map[string]any{
		"version":   version.Number,
		"dist":      version.Number,
		"installed": true,
		"recalled":  true,
		"empty":     float64(0),
		"core":      "core",
		"hint":      "restart the MCP server with --profile graph or set AI_MEMORY_PROFILE=graph",
		"licence":   "License :: OSI Approved :: Apache Software License",
	})
}

// pyConsumer is a user's script against the installed wheel.
const pyConsumer = `import importlib.metadata, json, os, sys
import ai_memory
from ai_memory import AiMemory, ProfileNotLoaded, require_profile

meta = importlib.metadata.metadata("ai-memory-sdk")
with AiMemory.spawn(os.environ["AI_MEMORY_BIN"], profile="core") as mem:
    stored = mem.store("Deploy day", "deploys go out on fridays", tags=["ops"])
    hits = mem.recall("when do we deploy")
    none = mem.recall("zebra quantum")
    core = require_profile(mem, "core")
    try:
        require_profile(mem, "graph")
        hint = None
    except ProfileNotLoaded as e:
        hint = e.hint
print(json.dumps({
    "version": ai_memory.__version__,
    "dist": importlib.metadata.version("ai-memory-sdk"),
    "installed": ai_memory.__file__.startswith(sys.prefix),
    "recalled": hits["memories"][0]["id"] == stored["id"],
    "empty": len(none["memories"]),
    "core": ",".join(core["families"]),
    "hint": hint,
    "licence": next((c for c in meta.get_all("Classifier") or [] if c.startswith("License ::")), None),
}))
`

// expectJSON checks the fields of the JSON object a consumer script printed.
func expectJSON(t *testing.T, script, out string, want map[string]any) {
	t.Helper()
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%s printed %q: %v", script, out, err)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s = %v, want %v (all: %v)", script, k, got[k], v, got)
		}
	}
}

// writeFiles creates dir and writes each name → content into it.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

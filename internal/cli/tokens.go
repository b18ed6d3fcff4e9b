package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ai-memory/ai-memory/internal/catalog"
	"github.com/ai-memory/ai-memory/internal/config"
	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/mcphost"
	"github.com/ai-memory/ai-memory/internal/supervisor"
	"github.com/ai-memory/ai-memory/internal/tokencost"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// describeOnly serves tool definitions without ever starting a plugin:
// doctor measures a surface, it does not serve it.
type describeOnly struct{ *supervisor.Supervisor }

func (describeOnly) Start(string) error { return nil }

func (describeOnly) Call(context.Context, caller.Caller, string, []byte, *aimemoryv1.CallContext) (*aimemoryv1.CallResponse, error) {
	return nil, fmt.Errorf("doctor does not run tools")
}

type toolCost struct {
	Name   string `json:"name"`
	Tokens int    `json:"tokens"`
	Family string `json:"family"`
	Loaded bool   `json:"loaded_under_active_profile"`
}

type familyCost struct {
	Name      string `json:"name"`
	ToolCount int    `json:"tool_count"`
	Tokens    int    `json:"tokens"`
	Loaded    bool   `json:"loaded"`
}

type tokenReport struct {
	SchemaVersion  string       `json:"schema_version"`
	Tokenizer      string       `json:"tokenizer"`
	ActiveProfile  []string     `json:"active_profile"`
	ActiveTools    int          `json:"active_tool_count"`
	ActiveTotal    int          `json:"active_total_tokens"`
	FullTools      int          `json:"full_profile_tool_count"`
	FullTotal      int          `json:"full_profile_total_tokens"`
	SavingsTokens  int          `json:"savings_tokens"`
	SavingsPercent string       `json:"savings_pct"`
	Families       []familyCost `json:"families"`
	Tools          []toolCost   `json:"tools"`
}

// surfaceCost counts the tools/list `tools` array a host sends under a
// profile, byte for byte as mcp-go encodes it.
func surfaceCost(plugins mcphost.Plugins, p catalog.Profile) (total int, tools map[string]int, err error) {
	h := mcphost.New(mcphost.Options{Version: Version, Profile: p, Plugins: plugins, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	wire, err := h.WireTools(context.Background())
	if err != nil {
		return 0, nil, err
	}
	tools = map[string]int{}
	for _, raw := range wire {
		var t struct {
			Name string `json:"name"`
		}
		json.Unmarshal(raw, &t)
		tools[t.Name] = tokencost.Count(string(raw))
	}
	array, _ := json.Marshal(wire)
	return tokencost.Count(string(array)), tools, nil
}

func tokensReport(root *rootCmd, profileFlag string) (*tokenReport, error) {
	cfg, err := config.Load(config.Path(root.Config))
	if err != nil {
		return nil, err
	}
	request, err := catalog.ParseRequest(profileFlag) // defaults to core, not the configured profile
	if err != nil {
		return nil, &exitError{code: 2, msg: "ai-memory doctor --tokens: " + err.Error()}
	}
	bins, err := supervisor.Discover(pluginDir(), cfg.Plugins)
	if err != nil {
		return nil, err
	}
	dataDir := config.DataDir(root.DataDir)
	sup := supervisor.New(supervisor.Options{Binaries: bins, CacheDir: filepath.Join(dataDir, "plugin-cache"),
		EngineSocket: filepath.Join(dataDir, "engine.sock"), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	plugins := describeOnly{sup}
	active, err := request.Resolve(sup.Catalog())
	if err != nil {
		return nil, &exitError{code: 2, msg: "ai-memory doctor --tokens: " + err.Error()}
	}
	full, _ := catalog.ParseProfile("full", sup.Catalog())
	activeTotal, activeTools, err := surfaceCost(plugins, active)
	if err != nil {
		return nil, err
	}
	fullTotal, fullTools, err := surfaceCost(plugins, full)
	if err != nil {
		return nil, err
	}
	r := &tokenReport{SchemaVersion: "v0.6.4-tokens-1", Tokenizer: "cl100k_base", ActiveProfile: active.Families(),
		ActiveTools: len(activeTools), ActiveTotal: activeTotal, FullTools: len(fullTools), FullTotal: fullTotal,
		SavingsTokens: fullTotal - activeTotal}
	if fullTotal > 0 {
		r.SavingsPercent = fmt.Sprintf("%.1f", float64(fullTotal-activeTotal)*100/float64(fullTotal))
	}
	byFamily := map[string]*familyCost{}
	for name, n := range fullTools {
		fam := familyOf(sup, name)
		_, loaded := activeTools[name]
		r.Tools = append(r.Tools, toolCost{Name: name, Tokens: n, Family: fam, Loaded: loaded})
		fc := byFamily[fam]
		if fc == nil {
			fc = &familyCost{Name: fam, Loaded: active.Has(fam)}
			byFamily[fam] = fc
		}
		fc.ToolCount++
		fc.Tokens += n
	}
	for _, fc := range byFamily {
		r.Families = append(r.Families, *fc)
	}
	slices.SortFunc(r.Families, func(a, b familyCost) int { return b.Tokens - a.Tokens })
	slices.SortFunc(r.Tools, func(a, b toolCost) int { return strings.Compare(a.Name, b.Name) })
	return r, nil
}

// familyOf names a tool's family: "always-on" for memory_capabilities,
// else the family whose plugin declares it.
func familyOf(sup *supervisor.Supervisor, tool string) string {
	if catalog.IsAlwaysOn(tool) {
		return "always-on"
	}
	if f := sup.Catalog().FamilyOf(tool); f != "" {
		return f
	}
	return "unknown"
}

func printTokens(r *tokenReport, asJSON, raw bool) {
	if !raw {
		r.Tools = nil
	}
	if asJSON || raw {
		out, _ := json.MarshalIndent(r, "", "  ")
		fmt.Println(string(out))
		return
	}
	fmt.Println("ai-memory tool surface cost")
	fmt.Printf("tokenizer: %s (exact tools/list bytes)\n", r.Tokenizer)
	fmt.Printf("active profile: %s\n\n", strings.Join(r.ActiveProfile, ","))
	fmt.Printf("  Active  (%2d tools, incl. always-on)  %6d tokens\n", r.ActiveTools, r.ActiveTotal)
	fmt.Printf("  Full    (%2d tools)                   %6d tokens\n", r.FullTools, r.FullTotal)
	fmt.Printf("  Savings                               %6d tokens (%s%%)\n\n", r.SavingsTokens, r.SavingsPercent)
	for _, f := range r.Families {
		mark := " "
		if f.Loaded || f.Name == "always-on" {
			mark = "*"
		}
		fmt.Printf("  %s %-11s %2d tools %6d tokens\n", mark, f.Name, f.ToolCount, f.Tokens)
	}
}

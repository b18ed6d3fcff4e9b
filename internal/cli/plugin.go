package cli

import (
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/ai-memory/ai-memory/internal/catalog"
	"github.com/ai-memory/ai-memory/internal/config"
	"github.com/ai-memory/ai-memory/internal/supervisor"
	"github.com/ai-memory/ai-memory/sdk"
)

type pluginCmd struct {
	Add    pluginAddCmd    `cmd:"" help:"Check a family plugin binary, show its families, tools and token cost, and pin its SHA-256 in config.toml [plugins]."`
	List   pluginListCmd   `cmd:"" help:"List the plugin binaries this host would launch, and whether each still matches its pin."`
	Remove pluginRemoveCmd `cmd:"" help:"Remove a plugin's pin from config.toml [plugins] (the binary is left alone)."`
}

type pluginAddCmd struct {
	Path string `arg:"" type:"existingfile" help:"The plugin binary."`
}

type pluginListCmd struct{}

type pluginRemoveCmd struct {
	Path string `arg:"" help:"The pinned binary's path, as plugin list shows it."`
}

// pluginSupervisor describes bins (from the data dir's cache, or by
// launching each once, confined as when served) without serving anything.
func pluginSupervisor(root *rootCmd, bins []supervisor.Binary) *supervisor.Supervisor {
	dataDir := config.DataDir(root.DataDir)
	cfgPath := config.Path(root.Config)
	cfg, _ := config.Load(cfgPath) // its errors are the caller's to report; the defaults confine as much
	return supervisor.New(supervisor.Options{Binaries: bins, CacheDir: filepath.Join(dataDir, "plugin-cache"),
		EngineSocket: filepath.Join(dataDir, "engine.sock"), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Launcher: selfPath(), Sandbox: pluginSandbox(cfg, cfgPath, dataDir)})
}

// pluginSandbox is what plugin processes may have beyond the defaults
// (config [plugin_sandbox]), and what they never may: the data dir, the
// config and its directory, libpq's password file, and the command's own
// key files.
func pluginSandbox(cfg config.Config, cfgPath, dataDir string, keyFiles ...string) supervisor.Sandbox {
	protected := []string{dataDir, cfgPath, filepath.Dir(cfgPath)}
	if p := os.Getenv("PGPASSFILE"); p != "" {
		protected = append(protected, p)
	} else if home, err := os.UserHomeDir(); err == nil {
		protected = append(protected, filepath.Join(home, ".pgpass"))
	}
	for _, f := range keyFiles {
		if f != "" {
			protected = append(protected, f)
		}
	}
	return supervisor.Sandbox{Env: cfg.PluginSandbox.Env, Read: cfg.PluginSandbox.Read, Protected: protected}
}

func (c *pluginAddCmd) Run(root *rootCmd) error {
	path, err := filepath.Abs(c.Path)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(path); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("plugin add: %s is not an executable file", sdk.Quote(path))
	}
	sum, err := supervisor.Checksum(path)
	if err != nil {
		return err
	}
	cfgPath := root.cfgPath
	pins := maps.Clone(root.cfg.Plugins)
	if pins == nil {
		pins = map[string]string{}
	}
	pins[path] = sum
	bins, err := supervisor.Discover(pluginDir(), pins)
	if err != nil {
		return err
	}
	sup := pluginSupervisor(root, bins)
	defer sup.Close()
	if err := sup.LeftOut(path); err != nil {
		return fmt.Errorf("plugin add: nothing pinned: %w", err)
	}
	for _, r := range sup.Refused() {
		if r.Plugin == filepath.Base(path) {
			return fmt.Errorf("plugin add: nothing pinned: %s", r.Error())
		}
	}
	desc := sup.Description(path)
	if desc == nil {
		return fmt.Errorf("plugin add: nothing pinned: %s serves no family", filepath.Base(path))
	}
	full, _ := catalog.ParseProfile("full", sup.Catalog())
	_, cost, err := surfaceCost(describeOnly{sup}, full)
	if err != nil {
		return err
	}
	if err := config.SetPin(cfgPath, path, sum); err != nil {
		return err
	}
	w := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintf(w, "%s %s (plugin protocol %d.%d)\nSHA-256 %s\n", desc.GetPluginName(), desc.GetPluginVersion(),
		desc.GetProtocolVersion(), desc.GetProtocolMinor(), sum)
	var families []string
	for _, f := range desc.GetFamilies() {
		total := 0
		for _, t := range f.GetTools() {
			total += cost[t.GetName()]
		}
		fmt.Fprintf(w, "family %s\t%d tools\t%d tokens\n", f.GetName(), len(f.GetTools()), total)
		for _, t := range f.GetTools() {
			fmt.Fprintf(w, "  %s\t\t%d tokens\n", t.GetName(), cost[t.GetName()])
		}
		families = append(families, f.GetName())
	}
	w.Flush()
	fmt.Printf("pinned in %s [plugins]\nload it: ai-memory mcp --profile core,%s (or memory_capabilities {family: %q, include_schema: true})\n",
		cfgPath, strings.Join(families, ","), families[0])
	return nil
}

func (c *pluginListCmd) Run(root *rootCmd) error {
	bins, err := supervisor.Discover(pluginDir(), root.cfg.Plugins)
	if err != nil {
		return err
	}
	sup := pluginSupervisor(root, bins)
	defer sup.Close()
	w := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "PLUGIN\tSOURCE\tSTATE\tFAMILIES\tPATH")
	for _, b := range bins {
		source := "pinned"
		if b.FirstParty {
			source = "first-party"
		}
		state := "ok"
		if err := supervisor.Verify(b); err != nil {
			state = "changed: re-pin with ai-memory plugin add " + b.Path
			if os.IsNotExist(err) {
				state = "missing"
			}
		}
		var families []string
		for _, f := range sup.Catalog().Families() {
			if sup.Catalog().Plugin(f) == b.Name {
				families = append(families, f)
			}
		}
		for _, r := range sup.Refused() {
			if r.Plugin == b.Name && state == "ok" {
				state = "refused: " + r.Reason
			}
		}
		slices.Sort(families)
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", b.Name, source, state, strings.Join(families, ","), b.Path)
	}
	return w.Flush()
}

func (c *pluginRemoveCmd) Run(root *rootCmd) error {
	cfg, cfgPath := root.cfg, root.cfgPath
	path := c.Path
	if _, ok := cfg.Plugins[path]; !ok {
		if abs, err := filepath.Abs(path); err == nil {
			path = abs
		}
	}
	found, err := config.RemovePin(cfgPath, path)
	if err != nil {
		return err
	}
	if !found {
		pinned := slices.Sorted(maps.Keys(cfg.Plugins))
		return fmt.Errorf("plugin remove: no pin for %s in %s (pinned: %s)", sdk.Quote(c.Path), cfgPath, strings.Join(append(pinned, "none")[:max(len(pinned), 1)], ", "))
	}
	fmt.Printf("removed the pin of %s from %s\n", path, cfgPath)
	return nil
}

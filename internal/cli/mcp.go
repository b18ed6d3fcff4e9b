package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/google/uuid"

	"github.com/ai-memory/ai-memory/internal/assertion"
	"github.com/ai-memory/ai-memory/internal/auditlog"
	"github.com/ai-memory/ai-memory/internal/catalog"
	"github.com/ai-memory/ai-memory/internal/config"
	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/engine/settings"
	"github.com/ai-memory/ai-memory/internal/guard"
	"github.com/ai-memory/ai-memory/internal/identity"
	"github.com/ai-memory/ai-memory/internal/keeper"
	"github.com/ai-memory/ai-memory/internal/mcphost"
	"github.com/ai-memory/ai-memory/internal/proctune"
	"github.com/ai-memory/ai-memory/internal/supervisor"
	"github.com/ai-memory/ai-memory/sdk/record"
	"github.com/ai-memory/ai-memory/sdk/wire"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

type mcpCmd struct {
	Profile     string        `help:"Tool profile: core, graph, admin, power, full, or a comma list of families (default: $$AI_MEMORY_PROFILE, else config [mcp].profile, else core)."`
	AgentID     string        `help:"Session identity (default: $$AI_MEMORY_AGENT_ID, else ai:<client name>)." env:"AI_MEMORY_AGENT_ID"`
	EngineIdle  time.Duration `help:"How long a spawned engine waits without clients before it exits." default:"30s" env:"AI_MEMORY_ENGINE_IDLE_TIMEOUT"`
	AutoProfile bool          `help:"Log profile suggestions from observed calls (observe only)."`
	Namespace   string        `help:"Default namespace of memories a call does not place (default: $$AI_MEMORY_NAMESPACE, else config [mcp].namespace, else the git project's name, else global)."`
}

func (c *mcpCmd) Run(root *rootCmd) error {
	proctune.OneProcessor() // not for serve: an HTTP host runs many calls at once
	proctune.StartProfiling("host")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rt, err := startRuntime(ctx, root, "mcp", c.Profile, c.AgentID, c.Namespace, c.EngineIdle, nil)
	if err != nil {
		return err
	}
	defer rt.close()
	host := mcphost.New(rt.hostOptions(c.AgentID, rt.sessionID, c.AutoProfile))
	loaded := host.LoadedFamilies()
	rt.log.Info("ai-memory mcp ready", "profile", rt.profile.Label(), "profile_source", rt.source,
		"families", fmt.Sprintf("%d families (%s)", len(loaded), strings.Join(loaded, ", ")),
		"expected_tool_count", host.ExpectedTools(), "data_dir", rt.dataDir,
		"namespace", rt.namespace, "namespace_source", rt.nsSource)
	err = host.ServeStdio(ctx, os.Stdin, os.Stdout)
	if ctx.Err() != nil {
		rt.log.Info("ai-memory mcp stopping on signal")
	}
	return err
}

// runtime is what a host process needs whatever its transport: config,
// plugins, the engine and the key that signs per-call assertions.
type runtime struct {
	log        *slog.Logger
	cfg        config.Config
	cfgPath    string
	dataDir    string
	profile    catalog.Profile
	source     string
	allow      guard.Allowlist
	rate       *guard.RateLimit
	maxMessage int
	sessionID  string
	namespace  string // the default namespace of memories a call does not place
	nsSource   string // where it came from
	sup        *supervisor.Supervisor
	engine     *keeper.Keeper
	engineConn *wire.EngineConn
}

func (rt *runtime) close() {
	if rt.engineConn != nil {
		rt.engineConn.Close()
	}
	rt.sup.Close()
}

// hostOptions are the options of a host serving agentID ("" = derive).
func (rt *runtime) hostOptions(agentID, sessionID string, autoProfile bool) mcphost.Options {
	return mcphost.Options{
		Version:          Version,
		Profile:          rt.profile,
		AgentID:          agentID,
		SessionID:        sessionID,
		DefaultNamespace: rt.namespace,
		Plugins:          rt.sup,
		EngineReady:      rt.engine.Ready(),
		EngineErr:        rt.engine.Err,
		Logger:           rt.log,
		MaxMessageBytes:  rt.maxMessage,

		Allowlist:         rt.allow,
		RateLimit:         rt.rate,
		RedactedDiscovery: rt.cfg.MCP.RedactedDiscovery,
		AutoProfile:       autoProfile,
		Audit:             auditlog.Recorder{Engine: rt.engineConn},
		Vectors: func(ctx context.Context) (*aimemoryv1.VectorStatusResponse, error) {
			return rt.engineConn.VectorStatus(ctx, &aimemoryv1.VectorStatusRequest{})
		},
		// The local user's own session: every namespace, granted
		// explicitly (serve replaces it with the credential's).
		Scope: []string{caller.AllNamespaces},
	}
}

// startRuntime starts what every host needs; keepFromPlugins names files
// of the command's own (a TLS key) that no plugin may read.
func startRuntime(ctx context.Context, root *rootCmd, cmd, profileFlag, agentID, namespaceFlag string, engineIdle time.Duration, keepFromPlugins []string) (*runtime, error) {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	cfg, cfgPath := root.cfg, root.cfgPath
	request, source, err := config.ResolveProfile(profileFlag, cfg)
	if err != nil {
		return nil, &exitError{code: 2, msg: "ai-memory " + cmd + ": invalid profile: " + err.Error()}
	}
	badConfig := func(err error) error {
		return &exitError{code: 2, msg: "ai-memory " + cmd + ": config " + cfgPath + ": " + err.Error()}
	}
	interval, err := cfg.ExpansionInterval()
	if err != nil {
		return nil, badConfig(err)
	}
	maxMessage, err := cfg.MaxMessageBytes()
	if err != nil {
		return nil, badConfig(err)
	}
	callTimeout, err := cfg.CallTimeout()
	if err != nil {
		return nil, badConfig(err)
	}
	if agentID != "" {
		if err := record.ValidateAgentID("--agent-id", agentID); err != nil {
			return nil, &exitError{code: 2, msg: "ai-memory " + cmd + ": " + err.Error()}
		}
	}
	namespace, nsSource, err := defaultNamespace(namespaceFlag, cfg)
	if err != nil {
		return nil, &exitError{code: 2, msg: "ai-memory " + cmd + ": default namespace: " + err.Error()}
	}
	dataDir := config.DataDir(root.DataDir)
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	if err := root.reconcile(dataDir, log); err != nil {
		return nil, err
	}

	// The data dir's key signs every engine call this host makes or hands a
	// plugin: its own (family "host") and one assertion per tool call,
	// bound to the call's session with the engine (the keeper holds it).
	key, err := assertion.LoadOrCreateKey(dataDir)
	if err != nil {
		return nil, err
	}
	signer, err := assertion.NewSigner(key, nil)
	if err != nil {
		return nil, err
	}
	calls := assertion.NewTracker(signer)
	sessionID := uuid.NewString()
	hostCreds := signer.HostCredentials(identity.Resolve(agentID, ""), sessionID)

	// The family set is known once the plugins have described themselves
	// (from the cache, or by a first launch); only then can the profile and
	// the allowlist name a third-party family.
	binaries, err := supervisor.Discover(pluginDir(), cfg.Plugins)
	if err != nil {
		return nil, err
	}
	sup := supervisor.New(supervisor.Options{
		Binaries:     binaries,
		CacheDir:     filepath.Join(dataDir, "plugin-cache"),
		EngineSocket: filepath.Join(dataDir, "engine.sock"),
		Logger:       log,
		Keep:         request.Mentions,
		CallTimeout:  callTimeout,
		Calls:        calls,
		Launcher:     selfPath(),
		Sandbox:      pluginSandbox(cfg, cfgPath, dataDir, keepFromPlugins...),
	})
	rt := &runtime{log: log, cfg: cfg, cfgPath: cfgPath, dataDir: dataDir, source: source, maxMessage: maxMessage,
		namespace: namespace, nsSource: nsSource,
		sessionID: sessionID, sup: sup, rate: guard.NewRateLimit(interval, nil)}
	fail := func(err error) (*runtime, error) {
		rt.close()
		return nil, err
	}
	if rt.profile, err = request.Resolve(sup.Catalog()); err != nil {
		return fail(&exitError{code: 2, msg: "ai-memory " + cmd + ": invalid profile: " + source + ": " + err.Error()})
	}
	if rt.allow, err = guard.NewAllowlist(cfg.MCP.Allowlist, sup.Catalog()); err != nil {
		return fail(badConfig(err))
	}
	rt.engine = keeper.Start(ctx, selfPath(), dataDir, engineIdle, log, calls, hostCreds)
	if rt.engineConn, err = wire.DialEngineAt(filepath.Join(dataDir, "engine.sock"), hostCreds); err != nil {
		return fail(err)
	}
	return rt, nil
}

// reconcile records config.toml's engine sections ([storage], [ttl], ...)
// in a data dir that has none yet, as every host does before its engine
// starts, and warns when they differ from those in force there.
func (r *rootCmd) reconcile(dataDir string, log *slog.Logger) error {
	_, differ, err := settings.Reconcile(dataDir, engineSettings(r.cfg, r.cfgPath, log))
	if err != nil {
		return &exitError{code: 2, msg: "ai-memory " + r.command + ": engine settings: " + err.Error()}
	}
	if len(differ) > 0 {
		log.Warn("config.toml disagrees with this data dir's engine settings; the data dir's stay in force",
			"keys", strings.Join(differ, ", "), "config", r.cfgPath, "engine_settings", filepath.Join(dataDir, settings.File))
	}
	return nil
}

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
	"github.com/ai-memory/ai-memory/internal/config"
	"github.com/ai-memory/ai-memory/internal/engine/settings"
	"github.com/ai-memory/ai-memory/internal/guard"
	"github.com/ai-memory/ai-memory/internal/identity"
	"github.com/ai-memory/ai-memory/internal/keeper"
	"github.com/ai-memory/ai-memory/internal/mcphost"
	"github.com/ai-memory/ai-memory/internal/supervisor"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
	"github.com/ai-memory/ai-memory/sdk"
	"github.com/ai-memory/ai-memory/sdk/record"
)

type mcpCmd struct {
	Profile     string        `help:"Tool profile: core, graph, admin, power, full, or a comma list of families (default: $$AI_MEMORY_PROFILE, else config [mcp].profile, else core)."`
	AgentID     string        `help:"Session identity (default: $$AI_MEMORY_AGENT_ID, else ai:<client name>)." env:"AI_MEMORY_AGENT_ID"`
	EngineIdle  time.Duration `help:"How long a spawned engine waits without clients before it exits." default:"30s" env:"AI_MEMORY_ENGINE_IDLE_TIMEOUT"`
	AutoProfile bool          `help:"Log profile suggestions from observed calls (observe only)."`
}

func (c *mcpCmd) Run(root *rootCmd) error {
	sdk.StartProfiling("host")
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	cfgPath := config.Path(root.Config)
	cfg, err := config.Load(cfgPath)
	if err != nil {
		return &exitError{code: 2, msg: "ai-memory mcp: " + err.Error()}
	}
	request, source, err := config.ResolveProfile(c.Profile, cfg)
	if err != nil {
		return &exitError{code: 2, msg: "ai-memory mcp: invalid profile: " + err.Error()}
	}
	badConfig := func(err error) error {
		return &exitError{code: 2, msg: "ai-memory mcp: config " + cfgPath + ": " + err.Error()}
	}
	interval, err := cfg.ExpansionInterval()
	if err != nil {
		return badConfig(err)
	}
	maxMessage, err := cfg.MaxMessageBytes()
	if err != nil {
		return badConfig(err)
	}
	callTimeout, err := cfg.CallTimeout()
	if err != nil {
		return badConfig(err)
	}
	if c.AgentID != "" {
		if err := record.ValidateAgentID("--agent-id", c.AgentID); err != nil {
			return &exitError{code: 2, msg: "ai-memory mcp: " + err.Error()}
		}
	}
	dataDir := config.DataDir(root.DataDir)
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	if _, differ, err := settings.Reconcile(dataDir, cfg.Settings); err != nil {
		return &exitError{code: 2, msg: "ai-memory mcp: engine settings: " + err.Error()}
	} else if len(differ) > 0 {
		log.Warn("config.toml disagrees with this data dir's engine settings; the data dir's stay in force",
			"keys", strings.Join(differ, ", "), "config", cfgPath, "engine_settings", filepath.Join(dataDir, settings.File))
	}

	// The data dir's key signs every engine call this host makes or hands a
	// plugin: its own (family "host") and one assertion per tool call.
	key, err := assertion.LoadOrCreateKey(dataDir)
	if err != nil {
		return err
	}
	signer, err := assertion.NewSigner(key, nil)
	if err != nil {
		return err
	}
	sessionID := uuid.NewString()
	hostCreds := signer.HostCredentials(identity.Resolve(c.AgentID, ""), sessionID)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	// The family set is known once the plugins have described themselves
	// (from the cache, or by a first launch); only then can the profile and
	// the allowlist name a third-party family.
	binaries, err := supervisor.Discover(pluginDir(), cfg.Plugins)
	if err != nil {
		return err
	}
	sup := supervisor.New(supervisor.Options{
		Binaries:     binaries,
		CacheDir:     filepath.Join(dataDir, "plugin-cache"),
		EngineSocket: filepath.Join(dataDir, "engine.sock"),
		Logger:       log,
		Keep:         request.Mentions,
		CallTimeout:  callTimeout,
	})
	defer sup.Close()
	profile, err := request.Resolve(sup.Catalog())
	if err != nil {
		return &exitError{code: 2, msg: "ai-memory mcp: invalid profile: " + source + ": " + err.Error()}
	}
	allow, err := guard.NewAllowlist(cfg.MCP.Allowlist, sup.Catalog())
	if err != nil {
		return badConfig(err)
	}

	engine := keeper.Start(ctx, selfPath(), dataDir, c.EngineIdle, log, hostCreds)
	engineConn, err := sdk.DialEngineAt(filepath.Join(dataDir, "engine.sock"), hostCreds)
	if err != nil {
		return err
	}
	defer engineConn.Close()

	host := mcphost.New(mcphost.Options{
		Version:         Version,
		Profile:         profile,
		AgentID:         c.AgentID,
		SessionID:       sessionID,
		Assertions:      signer,
		Plugins:         sup,
		EngineReady:     engine.Ready(),
		EngineErr:       engine.Err,
		Logger:          log,
		MaxMessageBytes: maxMessage,

		Allowlist:         allow,
		RateLimit:         guard.NewRateLimit(interval, nil),
		RedactedDiscovery: cfg.MCP.RedactedDiscovery,
		AutoProfile:       c.AutoProfile,
		Audit:             auditlog.Recorder{Engine: engineConn},
		Vectors: func(ctx context.Context) (*aimemoryv1.VectorStatusResponse, error) {
			return engineConn.VectorStatus(ctx, &aimemoryv1.VectorStatusRequest{})
		},
	})
	loaded := host.LoadedFamilies()
	log.Info("ai-memory mcp ready", "profile", profile.Label(), "profile_source", source,
		"families", fmt.Sprintf("%d families (%s)", len(loaded), strings.Join(loaded, ", ")),
		"expected_tool_count", host.ExpectedTools(), "data_dir", dataDir)
	err = host.ServeStdio(ctx, os.Stdin, os.Stdout)
	if ctx.Err() != nil {
		log.Info("ai-memory mcp stopping on signal")
	}
	return err
}

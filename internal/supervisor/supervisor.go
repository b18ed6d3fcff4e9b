// Package supervisor starts, describes, calls and restarts family plugins
// (hashicorp/go-plugin over gRPC). Only binaries whose SHA-256 matches the
// manifest (or a config pin) are launched. go-plugin does not restart a dead
// plugin; the supervisor starts a fresh one on the next call.
package supervisor

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
	"github.com/ai-memory/ai-memory/sdk"
)

// Options configure a Supervisor.
type Options struct {
	Binaries     []Binary
	CacheDir     string // Describe answers, one file per checksum
	EngineSocket string // handed to every plugin
	Logger       *slog.Logger
	// Keep names the families about to be used: a plugin launched only to
	// describe itself (first run, cold cache) stays running if it serves one
	// of them, instead of being stopped and started again at once.
	Keep []string
	// AutoMTLS turns on go-plugin's mutual TLS between host and plugin. Off
	// by default: see docs/ARCHITECTURE.md for the measured cost and why.
	AutoMTLS bool
}

// Supervisor owns the plugin processes of one host.
type Supervisor struct {
	opts     Options
	log      *slog.Logger
	mu       sync.Mutex
	plugins  []*managed
	byFamily map[string]*managed
}

// managed is one plugin binary and, while it runs, its process.
type managed struct {
	bin    Binary
	desc   *aimemoryv1.DescribeResponse
	mu     sync.Mutex // guards client/family
	client *plugin.Client
	family aimemoryv1.FamilyClient
}

// New describes every trusted binary (from the cache when it knows the
// checksum, else by launching it once) and maps families to plugins. A
// binary that cannot be described is logged and left out.
func New(opts Options) *Supervisor {
	s := &Supervisor{opts: opts, log: opts.Logger, byFamily: map[string]*managed{}}
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	for _, b := range opts.Binaries {
		m := &managed{bin: b}
		desc, err := s.describe(m)
		if err != nil {
			s.log.Error("plugin left out", "plugin", b.Name, "err", err)
			continue
		}
		m.desc = desc
		s.plugins = append(s.plugins, m)
		for _, f := range desc.GetFamilies() {
			if prev, dup := s.byFamily[f.GetName()]; dup {
				s.log.Warn("family served twice; keeping the first", "family", f.GetName(), "kept", prev.bin.Name, "ignored", b.Name)
				continue
			}
			s.byFamily[f.GetName()] = m
		}
	}
	return s
}

// Tools returns the definitions of a family's tools, or nil if no plugin serves it.
func (s *Supervisor) Tools(family string) []*aimemoryv1.ToolDefinition {
	m := s.byFamily[family]
	if m == nil {
		return nil
	}
	for _, f := range m.desc.GetFamilies() {
		if f.GetName() == family {
			return f.GetTools()
		}
	}
	return nil
}

// Families lists the families some plugin serves.
func (s *Supervisor) Families() []string {
	var out []string
	for f := range s.byFamily {
		out = append(out, f)
	}
	return out
}

// PluginOf names the binary serving a family ("" if none).
func (s *Supervisor) PluginOf(family string) string {
	if m := s.byFamily[family]; m != nil {
		return m.bin.Name
	}
	return ""
}

// Start makes sure the plugin serving family is running.
func (s *Supervisor) Start(family string) error {
	m := s.byFamily[family]
	if m == nil {
		return fmt.Errorf("no installed plugin serves the %s family", family)
	}
	_, err := s.running(m)
	return err
}

// Call runs a tool of a family. If the plugin died, this call gets a clear
// error and the next call starts a fresh plugin.
func (s *Supervisor) Call(ctx context.Context, family string, req *aimemoryv1.CallRequest) (*aimemoryv1.CallResponse, error) {
	m := s.byFamily[family]
	if m == nil {
		return nil, fmt.Errorf("no installed plugin serves the %s family", family)
	}
	fc, err := s.running(m)
	if err != nil {
		return nil, err
	}
	resp, err := fc.Call(ctx, req)
	if err == nil {
		return resp, nil
	}
	if status.Code(err) == codes.Unavailable || m.exited() {
		m.stop()
		return nil, fmt.Errorf("plugin %s stopped while running %s; it will be restarted on the next call (if the call was a write, check whether it took effect before retrying): %w",
			m.bin.Name, req.GetTool(), err)
	}
	return nil, fmt.Errorf("plugin %s: %w", m.bin.Name, err)
}

// Close stops every plugin process.
func (s *Supervisor) Close() {
	for _, m := range s.plugins {
		m.stop()
	}
}

// running returns a live FamilyClient, launching the plugin if needed.
func (s *Supervisor) running(m *managed) (aimemoryv1.FamilyClient, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.client != nil && !m.client.Exited() {
		return m.family, nil
	}
	client, fc, err := s.launch(m.bin)
	if err != nil {
		return nil, err
	}
	m.client, m.family = client, fc
	return fc, nil
}

func (m *managed) exited() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.client == nil || m.client.Exited()
}

func (m *managed) stop() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.client != nil {
		m.client.Kill()
		m.client, m.family = nil, nil
	}
}

// ErrChecksum marks a plugin binary that no longer matches what was pinned.
var ErrChecksum = errors.New("plugin binary does not match its pinned SHA-256")

// launch starts a verified plugin process. go-plugin hashes the binary
// against the pinned checksum right before exec.
func (s *Supervisor) launch(b Binary) (*plugin.Client, aimemoryv1.FamilyClient, error) {
	sum, err := hexDecode(b.Checksum)
	if err != nil {
		return nil, nil, fmt.Errorf("plugin %s: pinned checksum: %w", b.Name, err)
	}
	cmd := exec.Command(b.Path)
	cmd.Env = append(os.Environ(), sdk.EngineSocketEnv+"="+s.opts.EngineSocket)
	dieWithParent(cmd)
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  sdk.Handshake,
		Plugins:          sdk.PluginSet(nil),
		Cmd:              cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		GRPCDialOptions:  sdk.GRPCDialOptions(),
		SecureConfig:     &plugin.SecureConfig{Checksum: sum, Hash: sha256.New()},
		AutoMTLS:         s.opts.AutoMTLS,
		Logger:           hclog.New(&hclog.LoggerOptions{Name: b.Name, Output: os.Stderr, Level: hclog.Warn}),
	})
	rpc, err := client.Client()
	if err != nil {
		client.Kill()
		if errors.Is(err, plugin.ErrChecksumsDoNotMatch) {
			actual, _ := fileSHA256(b.Path)
			return nil, nil, fmt.Errorf("%w: %s has SHA-256 %s but %s was pinned; it changed after `make build` — rebuild with `make build`, or pin a third-party plugin in config.toml [plugins]",
				ErrChecksum, b.Path, actual, b.Checksum)
		}
		return nil, nil, fmt.Errorf("start plugin %s: %w", b.Name, err)
	}
	raw, err := rpc.Dispense(sdk.PluginKey)
	if err != nil {
		client.Kill()
		return nil, nil, fmt.Errorf("plugin %s: %w", b.Name, err)
	}
	fc, ok := raw.(aimemoryv1.FamilyClient)
	if !ok {
		client.Kill()
		return nil, nil, fmt.Errorf("plugin %s does not serve the Family service", b.Name)
	}
	return client, fc, nil
}

// describe returns a binary's Describe answer, cached per checksum in the
// data dir so that knowing a family costs nothing once it was seen. A
// plugin launched only to describe itself is stopped again.
func (s *Supervisor) describe(m *managed) (*aimemoryv1.DescribeResponse, error) {
	path := filepath.Join(s.opts.CacheDir, m.bin.Checksum+".describe")
	if raw, err := os.ReadFile(path); err == nil {
		var d aimemoryv1.DescribeResponse
		if proto.Unmarshal(raw, &d) == nil {
			return &d, nil
		}
	}
	client, fc, err := s.launch(m.bin)
	if err != nil {
		return nil, err
	}
	keep := false
	defer func() {
		if keep {
			m.client, m.family = client, fc
		} else {
			client.Kill()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), describeTimeout)
	defer cancel()
	d, err := fc.Describe(ctx, &aimemoryv1.DescribeRequest{})
	if err != nil {
		return nil, fmt.Errorf("describe plugin %s: %w", m.bin.Name, err)
	}
	if d.GetProtocolVersion() != sdk.ProtocolVersion {
		return nil, fmt.Errorf("plugin %s speaks protocol %d, this host %d", m.bin.Name, d.GetProtocolVersion(), sdk.ProtocolVersion)
	}
	if raw, err := proto.Marshal(d); err == nil {
		if err := writeFileAtomic(path, raw); err != nil {
			s.log.Warn("could not cache plugin description", "plugin", m.bin.Name, "err", err)
		}
	}
	for _, f := range d.GetFamilies() {
		keep = keep || slices.Contains(s.opts.Keep, f.GetName())
	}
	return d, nil
}

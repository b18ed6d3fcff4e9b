// Package supervisor starts, describes, calls and restarts family plugins
// (hashicorp/go-plugin over gRPC). Only binaries whose SHA-256 matches the
// manifest (or a config pin) are launched, and only those whose declared
// families and tools pass the catalog's checks are served. go-plugin does
// not restart a dead plugin; the supervisor starts a fresh one on the next
// call, and stops one that does not answer within the call timeout.
//
// A plugin process gets an allow-listed environment (env.go), runs
// confined where the OS allows it (package sandbox, through the launcher),
// and each call hands it an assertion bound to that call and that process.
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
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/catalog"
	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/supervisor/sandbox"
	"github.com/ai-memory/ai-memory/sdk/wire"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// DefaultCallTimeout is how long a plugin may take to answer one call
// before it counts as hung and is replaced.
const DefaultCallTimeout = 60 * time.Second

// Options configure a Supervisor.
type Options struct {
	Binaries     []Binary
	CacheDir     string // Describe answers, one file per checksum
	EngineSocket string // handed to every plugin
	Logger       *slog.Logger
	// Keep says which families are about to be used: a plugin launched only
	// to describe itself (first run, cold cache) stays running if it serves
	// one of them, instead of being stopped and started again at once.
	Keep func(family string) bool
	// CallTimeout bounds one tool call (DefaultCallTimeout if zero). A
	// plugin that does not answer in time is stopped, so that the next call
	// gets a fresh one.
	CallTimeout time.Duration
	// AutoMTLS turns on go-plugin's mutual TLS between host and plugin. Off
	// by default: docs/ARCHITECTURE.md (Decisions) says why, docs/performance.md the cost.
	AutoMTLS bool
	// Calls signs each call's assertion for the instance that serves it
	// (assertion.Tracker); nil hands plugins none, and the engine then
	// refuses their engine calls.
	Calls CallSigner
	// Launcher is the ai-memory binary, whose `plugin-exec` starts each
	// plugin confined (package sandbox); "" (or an OS without a launcher)
	// starts plugins directly.
	Launcher string
	// Sandbox widens what plugins get (environment, readable paths).
	Sandbox Sandbox
}

// CallSigner signs the assertion of one call of c, served by the plugin
// process pid until deadline at the latest; end reports the call ended.
type CallSigner interface {
	Begin(ctx context.Context, c caller.Caller, pid int, deadline time.Time) (token []byte, end func(), err error)
}

// Supervisor owns the plugin processes of one host.
type Supervisor struct {
	opts     Options
	log      *slog.Logger
	start    func(Binary) (*instance, error) // launch; tests replace it
	plugins  []*managed
	byFamily map[string]*managed
	set      *catalog.Set
	refused  []catalog.Refusal
	leftOut  map[string]error // binary path → why it could not describe itself
	readable []string         // what a confined plugin may read
}

// managed is one plugin binary and, while it runs, its current instance.
type managed struct {
	bin  Binary
	desc *aimemoryv1.DescribeResponse
	mu   sync.Mutex // guards cur
	cur  *instance
}

// instance is one process of a plugin binary. A failure is pinned to the
// instance that had it, so it never stops a replacement started since.
type instance struct {
	proc   process
	pid    int // the process the engine will see presenting its calls' assertions
	family aimemoryv1.FamilyClient

	streamsOnce sync.Once
	streams     *callStreams // for a plugin that serves CallStream
}

// callStreams is inst's pool of call streams, opened lazily.
func (inst *instance) callStreams() *callStreams {
	inst.streamsOnce.Do(func() { inst.streams = &callStreams{family: inst.family} })
	return inst.streams
}

// process is the part of *plugin.Client the supervisor uses.
type process interface {
	Kill()
	Exited() bool
}

// New describes every trusted binary (from the cache when it knows the
// checksum, else by launching it once), checks what each declares against
// the catalog and the others (a refused plugin is logged with the names it
// clashes on and left out; the rest are served) and maps families to
// plugins.
func New(opts Options) *Supervisor {
	s := newSupervisor(opts, nil)
	s.describeAll()
	return s
}

func newSupervisor(opts Options, start func(Binary) (*instance, error)) *Supervisor {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = DefaultCallTimeout
	}
	if opts.Keep == nil {
		opts.Keep = func(string) bool { return false }
	}
	s := &Supervisor{opts: opts, log: opts.Logger, start: start, byFamily: map[string]*managed{}}
	if s.start == nil {
		s.start = s.launch
	}
	if s.opts.Launcher != "" && sandbox.Supported {
		s.readable = sandbox.Readable(append(sandbox.SystemReadable(), opts.Sandbox.Read...), opts.Sandbox.Protected)
		if sandbox.ABI() == 0 {
			s.log.Warn("plugins run unconfined: this kernel offers no Landlock (see docs/plugins.md)")
		}
	}
	return s
}

func (s *Supervisor) describeAll() {
	var described []*managed
	var decls []catalog.Declaration
	for _, b := range s.opts.Binaries {
		m := &managed{bin: b}
		desc, err := s.describe(m)
		if err != nil {
			s.log.Error("plugin left out", "plugin", b.Name, "err", err)
			if s.leftOut == nil {
				s.leftOut = map[string]error{}
			}
			s.leftOut[b.Path] = err
			continue
		}
		m.desc = desc
		described = append(described, m)
		d := catalog.Declaration{Plugin: b.Name, FirstParty: b.FirstParty}
		for _, f := range desc.GetFamilies() {
			df := catalog.DeclaredFamily{Name: f.GetName()}
			for _, t := range f.GetTools() {
				df.Tools = append(df.Tools, t.GetName())
			}
			d.Families = append(d.Families, df)
		}
		decls = append(decls, d)
	}
	s.set, s.refused = catalog.NewSet(decls)
	for _, r := range s.refused {
		s.log.Error("plugin refused", "plugin", r.Plugin, "err", r.Error())
	}
	for _, m := range described {
		served := false
		for _, f := range m.desc.GetFamilies() {
			if s.set.Plugin(f.GetName()) == m.bin.Name {
				s.byFamily[f.GetName()] = m
				served = true
			}
		}
		if served {
			s.plugins = append(s.plugins, m)
		} else {
			m.stop() // launched to describe itself, then refused
		}
	}
}

// Catalog is the host's family set: the contract plus the accepted plugins' families.
func (s *Supervisor) Catalog() *catalog.Set { return s.set }

// LeftOut is why the binary at path could not describe itself (nil if it did).
func (s *Supervisor) LeftOut(path string) error { return s.leftOut[path] }

// Description is what a served binary's Describe answered (nil if none).
func (s *Supervisor) Description(path string) *aimemoryv1.DescribeResponse {
	for _, m := range s.plugins {
		if m.bin.Path == path {
			return m.desc
		}
	}
	return nil
}

// Refused lists the plugins left out because of what they declare.
func (s *Supervisor) Refused() []catalog.Refusal { return s.refused }

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
		return s.unserved(family)
	}
	_, err := s.running(m)
	return err
}

func (s *Supervisor) unserved(family string) error {
	if why := s.set.RefusedFamily(family); why != "" {
		return fmt.Errorf("no plugin serves the %s family: %s", family, why)
	}
	return fmt.Errorf("no installed plugin serves the %s family", family)
}

// Call runs a tool of who's family for who, with the call context the host
// resolved; cc.Assertion is set to the call's assertion. If the plugin
// died, or did not answer within the call timeout, this call gets a clear
// error, that instance is stopped, and the next call starts a fresh one; a
// late failure of an old instance never stops its replacement.
func (s *Supervisor) Call(ctx context.Context, who caller.Caller, tool string, args []byte, cc *aimemoryv1.CallContext) (*aimemoryv1.CallResponse, error) {
	m := s.byFamily[who.Family]
	if m == nil {
		return nil, s.unserved(who.Family)
	}
	inst, err := s.running(m)
	if err != nil {
		return nil, err
	}
	// A cancel of ctx does not tear the call down: its answer must say
	// what happened, a write that committed included (sdk/wire/cancel.go). A
	// streaming plugin is told of the cancel; a unary one runs to its end.
	deadline := time.Now().Add(s.opts.CallTimeout)
	callCtx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
	defer cancel()
	if cc == nil {
		cc = &aimemoryv1.CallContext{}
	}
	if s.opts.Calls != nil {
		token, end, err := s.opts.Calls.Begin(callCtx, who, inst.pid, deadline)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", tool, err)
		}
		defer end()
		cc.Assertion = token
	}
	req := &aimemoryv1.CallRequest{Tool: tool, ArgumentsJson: args, Context: cc}
	var resp *aimemoryv1.CallResponse
	if m.desc.GetCallStream() {
		resp, err = inst.callStreams().call(callCtx, ctx, req)
	} else {
		resp, err = inst.family.Call(callCtx, req)
	}
	if err == nil {
		return resp, nil
	}
	const retry = "it will be restarted on the next call (if the call was a write, check whether it took effect before retrying)"
	switch {
	// The plugin's server enforces the propagated deadline too, and its
	// answer (DeadlineExceeded) may arrive before callCtx's own timer
	// has fired: the clock decides, not which side noticed first.
	case errors.Is(callCtx.Err(), context.DeadlineExceeded) || (status.Code(err) == codes.DeadlineExceeded && !time.Now().Before(deadline)):
		m.retire(inst)
		s.log.Error("plugin did not answer; stopped", "plugin", m.bin.Name, "tool", tool, "timeout", s.opts.CallTimeout)
		return nil, fmt.Errorf("plugin %s did not answer %s within %s, so it was stopped; %s", m.bin.Name, tool, s.opts.CallTimeout, retry)
	case status.Code(err) == codes.Unavailable || inst.proc.Exited():
		m.retire(inst)
		return nil, fmt.Errorf("plugin %s stopped while running %s; %s: %w", m.bin.Name, tool, retry, err)
	}
	return nil, fmt.Errorf("plugin %s: %w", m.bin.Name, err)
}

// Close stops every plugin process.
func (s *Supervisor) Close() {
	for _, m := range s.plugins {
		m.stop()
	}
}

// running returns the live instance, launching one if needed.
func (s *Supervisor) running(m *managed) (*instance, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cur != nil && !m.cur.proc.Exited() {
		return m.cur, nil
	}
	if m.cur != nil {
		m.cur.proc.Kill() // reap what is left of a dead one
		m.cur = nil
	}
	inst, err := s.start(m.bin)
	if err != nil {
		return nil, err
	}
	m.cur = inst
	return inst, nil
}

// retire stops inst and, if it is still the current instance, forgets it.
func (m *managed) retire(inst *instance) {
	m.mu.Lock()
	if m.cur == inst {
		m.cur = nil
	}
	m.mu.Unlock()
	inst.proc.Kill()
}

func (m *managed) stop() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cur != nil {
		m.cur.proc.Kill()
		m.cur = nil
	}
}

// ErrChecksum marks a plugin binary that no longer matches what was pinned.
var ErrChecksum = errors.New("plugin binary does not match its pinned SHA-256")

// launch starts a verified plugin process, with its own temporary
// directory and the allow-listed environment. Through the launcher (Linux)
// the launcher hashes the binary against the pinned checksum on the
// descriptor it executes, confined; otherwise go-plugin hashes it right
// before exec.
func (s *Supervisor) launch(b Binary) (*instance, error) {
	sum, err := hexDecode(b.Checksum)
	if err != nil {
		return nil, fmt.Errorf("plugin %s: pinned checksum: %w", b.Name, err)
	}
	tmp, err := os.MkdirTemp("", "ai-memory-plugin-")
	if err != nil {
		return nil, fmt.Errorf("plugin %s: %w", b.Name, err)
	}
	cmd := exec.Command(b.Path)
	secure := &plugin.SecureConfig{Checksum: sum, Hash: sha256.New()}
	if s.opts.Launcher != "" && sandbox.Supported {
		write := append(sandbox.SystemWritable(), tmp)
		if dir := profileDir(); dir != "" {
			write = append(write, dir)
		}
		cmd = exec.Command(s.opts.Launcher, sandbox.Policy{Binary: b.Path, SHA256: b.Checksum, Read: s.readable, Write: write}.Args()...)
		secure = nil // the launcher checks what it executes
	}
	cmd.Env = pluginEnv(os.Environ(), s.opts.EngineSocket, tmp, s.opts.Sandbox.Env)
	dieWithParent(cmd)
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  wire.Handshake,
		Plugins:          wire.PluginSet(nil),
		Cmd:              cmd,
		SkipHostEnv:      true,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		GRPCDialOptions:  wire.GRPCDialOptions(),
		SecureConfig:     secure,
		AutoMTLS:         s.opts.AutoMTLS,
		Logger:           hclog.New(&hclog.LoggerOptions{Name: b.Name, Output: os.Stderr, Level: hclog.Warn}),
	})
	proc := &pluginProcess{Client: client, tmp: tmp}
	rpc, err := client.Client()
	if err != nil {
		proc.Kill()
		// go-plugin's check, or the launcher's (which only says it exited).
		if actual, _ := fileSHA256(b.Path); errors.Is(err, plugin.ErrChecksumsDoNotMatch) || actual != b.Checksum {
			if !b.FirstParty {
				return nil, fmt.Errorf("%w: %s has SHA-256 %s but %s was pinned; it changed after it was pinned — if you trust the new binary, re-pin it: ai-memory plugin add %s",
					ErrChecksum, b.Path, actual, b.Checksum, b.Path)
			}
			return nil, fmt.Errorf("%w: %s has SHA-256 %s but %s was pinned; it changed after `make build` — rebuild with `make build`, or pin a third-party plugin with `ai-memory plugin add PATH`",
				ErrChecksum, b.Path, actual, b.Checksum)
		}
		if major, ok := otherMajor(err); ok {
			return nil, fmt.Errorf("plugin %s was built for plugin protocol %s; this host speaks protocol %d: rebuild it against an SDK of major version %d (github.com/ai-memory/ai-memory/sdk)",
				b.Name, major, wire.ProtocolVersion, wire.ProtocolVersion)
		}
		return nil, fmt.Errorf("start plugin %s: %w", b.Name, err)
	}
	raw, err := rpc.Dispense(wire.PluginKey)
	if err != nil {
		proc.Kill()
		return nil, fmt.Errorf("plugin %s: %w", b.Name, err)
	}
	fc, ok := raw.(aimemoryv1.FamilyClient)
	if !ok {
		proc.Kill()
		return nil, fmt.Errorf("plugin %s does not serve the Family service", b.Name)
	}
	return &instance{proc: proc, pid: cmd.Process.Pid, family: fc}, nil
}

// pluginProcess is a plugin's go-plugin client; killing it also removes
// the plugin's temporary directory.
type pluginProcess struct {
	*plugin.Client
	tmp string
}

func (p *pluginProcess) Kill() {
	p.Client.Kill()
	os.RemoveAll(p.tmp)
}

// describe returns a binary's Describe answer, cached per checksum in the
// data dir so that knowing a family costs nothing once it was seen. A
// plugin launched only to describe itself is stopped again unless Keep
// wants one of its families.
func (s *Supervisor) describe(m *managed) (*aimemoryv1.DescribeResponse, error) {
	path := filepath.Join(s.opts.CacheDir, m.bin.Checksum+".describe")
	if raw, err := os.ReadFile(path); err == nil {
		var d aimemoryv1.DescribeResponse
		if proto.Unmarshal(raw, &d) == nil {
			return &d, nil
		}
	}
	inst, err := s.start(m.bin)
	if err != nil {
		return nil, err
	}
	keep := false
	defer func() {
		if keep {
			m.cur = inst
		} else {
			inst.proc.Kill()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), describeTimeout)
	defer cancel()
	d, err := inst.family.Describe(ctx, &aimemoryv1.DescribeRequest{})
	if err != nil {
		return nil, fmt.Errorf("describe plugin %s: %w", m.bin.Name, err)
	}
	// The major version must match (go-plugin's handshake already checked
	// it); a newer minor only adds what this host ignores.
	if d.GetProtocolVersion() != wire.ProtocolVersion {
		return nil, fmt.Errorf("plugin %s was built for plugin protocol %d; this host speaks protocol %d: rebuild it against an SDK of major version %d",
			m.bin.Name, d.GetProtocolVersion(), wire.ProtocolVersion, wire.ProtocolVersion)
	}
	if raw, err := proto.Marshal(d); err == nil {
		if err := writeFileAtomic(path, raw); err != nil {
			s.log.Warn("could not cache plugin description", "plugin", m.bin.Name, "err", err)
		}
	}
	for _, f := range d.GetFamilies() {
		keep = keep || s.opts.Keep(f.GetName())
	}
	return d, nil
}

// Package engine runs the engine process of a data dir: the one owner of
// its bbolt file, serving the Engine gRPC API on a unix socket to every
// host and plugin using that data dir (DESIGN "Processes").
//
// The CLI runs it as `ai-memory engine --data-dir D --idle-timeout 30s`
// (flags map to Options.DataDir and Options.IdleTimeout) and exits 0 on
// ErrAlreadyRunning. Hosts start it through package launcher.
package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"

	"github.com/ai-memory/ai-memory/internal/assertion"
	"github.com/ai-memory/ai-memory/internal/embed"
	"github.com/ai-memory/ai-memory/internal/embed/modelfiles"
	"github.com/ai-memory/ai-memory/internal/engine/audit"
	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/embedder"
	"github.com/ai-memory/ai-memory/internal/engine/events"
	"github.com/ai-memory/ai-memory/internal/engine/governance"
	"github.com/ai-memory/ai-memory/internal/engine/models"
	"github.com/ai-memory/ai-memory/internal/engine/server"
	"github.com/ai-memory/ai-memory/internal/engine/settings"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/pgstore"
	"github.com/ai-memory/ai-memory/internal/engine/webhook"
	"github.com/ai-memory/ai-memory/internal/metrics"
	"github.com/ai-memory/ai-memory/sdk/record"
	"github.com/ai-memory/ai-memory/sdk/wire"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Files in the data dir.
const (
	LockFile   = "engine.lock" // flock held by the running engine
	SocketFile = "engine.sock" // its gRPC unix socket
	DBFile     = "memory.db"   // the bbolt file
	LogFile    = "engine.log"  // stderr of a launcher-started engine
)

// changePruneInterval is how often the leader prunes a shared database's change log.
const changePruneInterval = 10 * time.Minute

// DefaultIdleTimeout is how long an engine without clients stays up.
const DefaultIdleTimeout = 30 * time.Second

// maxSocketPath is the room in sockaddr_un.sun_path (108 on Linux, with NUL).
const maxSocketPath = 107

// ErrAlreadyRunning: another engine holds the data dir's lock and serves it.
var ErrAlreadyRunning = errors.New("an engine is already running for this data dir")

// SocketPath is where the engine of dataDir listens.
func SocketPath(dataDir string) string { return filepath.Join(dataDir, SocketFile) }

// Options configure an engine.
type Options struct {
	// DataDir holds the lock, socket and database; created 0700 if missing.
	DataDir string
	// IdleTimeout: exit after this long with no client connection.
	// 0 means DefaultIdleTimeout; negative means never exit for idleness.
	IdleTimeout time.Duration
	// Logger receives the engine's logs; nil means text on stderr.
	Logger *slog.Logger
	// TTL per tier; the zero value means storage.DefaultTTL().
	TTL storage.TTL
	// Policy is consulted by every governed write after the namespace
	// policy; nil adds nothing.
	Policy storage.WritePolicy
	// Governance settings; nil means the data dir's engine.toml [governance].
	Governance *governance.Config
	// Version is reported by Health; "" means "dev".
	Version string
	// OpenTimeout bounds the wait for the database file's lock; 0 means 5 s.
	OpenTimeout time.Duration
	// ArchiveMaxAge > 0 purges archive rows older than it on the engine's
	// schedule; 0 means the data dir's archive_max_days (none if unset).
	ArchiveMaxAge time.Duration
	// PurgeInterval between scheduled purges; 0 means DefaultPurgeInterval.
	PurgeInterval time.Duration
	// Now is the clock of storage and the purge schedule; nil means time.Now.
	Now func() time.Time
	// WebhookResolver and WebhookDial replace the webhook dispatcher's DNS
	// and dialer (tests); nil means the system's.
	WebhookResolver webhook.Resolver
	WebhookDial     webhook.DialFunc
	// Model is a local embedding model the engine runs when engine.toml
	// configures no embedding endpoint; nil means none (keyword methods).
	Model *modelfiles.Found
}

// Run is the engine process: Serve, also stopping on SIGTERM or SIGINT.
func Run(ctx context.Context, opts Options) error {
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, os.Interrupt)
	defer stop()
	return Serve(ctx, opts)
}

// Serve takes the data dir's lock (ErrAlreadyRunning if another engine has
// it), opens the database, and serves gRPC on the socket until ctx ends or
// no client has been connected for IdleTimeout. It then stops, closes the
// database, removes the socket and releases the lock, in that order, so a
// successor that takes the lock never has its fresh socket removed.
func Serve(ctx context.Context, opts Options) error {
	if opts.DataDir == "" {
		return errors.New("engine: no data dir")
	}
	dir, err := filepath.Abs(opts.DataDir)
	if err != nil {
		return fmt.Errorf("engine: data dir: %w", err)
	}
	if opts.IdleTimeout == 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	sock := SocketPath(dir)
	if len(sock) > maxSocketPath {
		return fmt.Errorf("engine: socket path %s is %d bytes, over the %d a unix socket allows: use a shorter data dir", sock, len(sock), maxSocketPath)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("engine: %w", err)
	}

	unlock, err := lockDataDir(filepath.Join(dir, LockFile))
	if err != nil {
		return err
	}
	defer unlock()

	key, err := assertion.LoadOrCreateKey(dir)
	if err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	signer, err := assertion.NewSigner(key, nil)
	if err != nil {
		return fmt.Errorf("engine: %w", err)
	}

	set, _, err := settings.Load(dir)
	if err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	if opts.TTL == (storage.TTL{}) {
		opts.TTL = TiersFromSettings(set)
	}
	if opts.ArchiveMaxAge == 0 {
		opts.ArchiveMaxAge = set.ArchiveMaxAge()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}

	if opts.Governance == nil {
		if opts.Governance, err = set.Governance.Config(); err != nil {
			return fmt.Errorf("engine: %w", err)
		}
	}
	sealer, err := webhook.OpenSealer(dir)
	if err != nil {
		return fmt.Errorf("engine: %w", err)
	}

	chain, err := audit.OpenChain(dir)
	if err != nil {
		return fmt.Errorf("engine: %w", err)
	}

	ev := &events.Broadcaster{}
	m := metrics.NewEngine()
	opened, err := openBackend(ctx, dir, set, storage.Options{
		TTL: opts.TTL, Policy: opts.Policy, Governance: opts.Governance, Events: ev, OpenTimeout: opts.OpenTimeout, Logger: log, Now: opts.Now, Audit: chain,
		Committed: m.Committed,
	})
	if err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	st := opened.Backend
	defer st.Close()
	// An engine whose webhook key is not the database's still serves
	// memory; it only cannot open the other engines' sealed secrets, so it
	// never dispatches and refuses subscriptions with a secret (doctor
	// shows the flag). Any other failure to bind is the database's.
	dispatches := true
	if err := webhook.BindKey(ctx, st, sealer); err != nil {
		var mismatch *storage.SealKeyMismatchError
		if !errors.As(err, &mismatch) {
			return fmt.Errorf("engine: %w", err)
		}
		dispatches = false
		log.Warn("webhook key differs from the database's: this engine serves memory but dispatches no webhook", "err", err)
	}

	auditLog, err := audit.Open(ctx, st, chain, dir, log)
	if err != nil {
		return fmt.Errorf("engine: %w", err)
	}

	// Only the lock holder touches the socket: one left by a crashed engine
	// is stale by now.
	if err := os.Remove(sock); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("engine: remove stale socket: %w", err)
	}
	lis, removeSocket, err := listenOwnSocket(sock)
	if err != nil {
		return err
	}
	defer removeSocket()
	lis = restrictToOwnUser(lis, log)

	conns := newConnTracker(opts.IdleTimeout)
	// Recover is outermost, so a panic anywhere, the caller check included,
	// is an error. Refusals are audited around the caller check, so its own
	// count too, with the caller it verified when it did, and so do the
	// authorizer's.
	grants := webhook.NewGrants(st, log.With("component", "webhook"))
	if err := grants.Load(ctx); err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	refusals := server.NewRefusals(auditLog, log)
	gate := assertion.NewGate(signer)
	serverOpts := append(server.Recover(log), refusals.Record()...)
	serverOpts = append(serverOpts, gate.ServerOptions()...)
	serverOpts = append(serverOpts, refusals.NoteCaller()...)
	serverOpts = append(serverOpts, gate.HostOnly()...)
	// Every verified call narrows its principal's webhooks to its grant,
	// refused or not; then authorization, before any service.
	serverOpts = append(serverOpts, noteGrants(grants))
	serverOpts = append(serverOpts, server.Authorize()...)
	serverOpts = append(serverOpts, peerCredentials())
	serverOpts = append(serverOpts, wire.FastServerOptions()...)
	seen, recordsSeen := storage.As[seenRecorder](st)
	if recordsSeen {
		serverOpts = append(serverOpts, noteSeen(seen))
	}
	g := grpc.NewServer(append(serverOpts, grpc.StatsHandler(conns),
		// Above the record limits, so an oversized value gets its field's error.
		grpc.MaxRecvMsgSize(record.MaxMessageBytes), grpc.MaxSendMsgSize(record.MaxMessageBytes),
		grpc.WaitForHandlers(true))...) // stopGracefully's Stop returns after the handlers
	emb, err := embedderFromSettings(dir, opts.Model, st, log, conns.Hold)
	if err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	// Background work (the embedder, the last-seen flusher, the led tasks)
	// ends and is waited for before the store closes (deferred earlier),
	// and after the server has stopped (below), so no handler outlives it.
	bg, stopBg := context.WithCancel(ctx)
	var background sync.WaitGroup
	if recordsSeen {
		defer seen.FlushSeen(context.Background()) // the last flush, after the flusher's
	}
	defer background.Wait()
	defer stopBg()
	background.Go(func() { emb.Run(authz.System(bg), ev) }) // it embeds every namespace's memories
	chat, err := chatFromSettings(dir, log)
	if err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	guard, backoff, timeout := webhookConfig(set.Webhooks)
	guard.Resolver = opts.WebhookResolver
	addGauges(m, st, emb)
	server.Register(g, server.Config{Backend: st, BackendName: opened.name, Location: opened.location, Events: ev, Version: opts.Version, DataDir: dir, Log: log, Embedder: emb, Chat: chat,
		Webhooks: server.Webhooks{Guard: guard, Sealer: sealer, Grants: grants}, Audit: auditLog, Metrics: m})
	aimemoryv1.RegisterCallsServer(g, gate) // the hosts' call sessions
	served := make(chan error, 1)
	go func() { served <- g.Serve(lis) }()
	if recordsSeen {
		background.Go(func() { flushSeenEvery(bg, seen, seenFlushInterval, log) })
	}
	// Background tasks a shared database must see run once, on whichever
	// engine leads each (runLed; bbolt's engine always leads). Expiry
	// collection has no task of its own: it runs in recall's call, in a
	// transaction, correct on any number of engines at once.
	background.Go(func() {
		every(bg, grantsReload, func() {
			if err := grants.Load(bg); err != nil && bg.Err() == nil {
				log.Warn("webhook grants: reload", "err", err)
			}
		})
	})
	if opts.ArchiveMaxAge > 0 {
		interval := cmp.Or(opts.PurgeInterval, DefaultPurgeInterval)
		p := &archivePurger{st: st, maxAge: opts.ArchiveMaxAge, now: opts.Now, hold: conns.Hold, log: log}
		background.Go(func() {
			runLed(bg, st, storage.TaskArchivePurge, log, func(ctx context.Context) {
				ticker := time.NewTicker(interval)
				defer ticker.Stop()
				p.run(ctx, ticker.C, nil)
			})
		})
	}
	if pg, ok := storage.As[*pgstore.Store](st); ok {
		background.Go(func() {
			runLed(bg, st, storage.TaskPruneChanges, log, func(ctx context.Context) {
				pg.RunPruner(ctx, changePruneInterval, pgstore.DefaultChangeRetention)
			})
		})
	}

	// The dispatcher stops before the store closes (deferred earlier).
	dctx, stopDispatch := context.WithCancel(context.WithoutCancel(ctx))
	dispatched := make(chan struct{})
	go func() {
		defer close(dispatched)
		if !dispatches {
			return
		}
		runLed(dctx, st, storage.TaskWebhooks, log, func(ctx context.Context) {
			if ct, ok := storage.As[storage.ClaimTaker](st); ok {
				if n, err := ct.TakeOverClaims(ctx); err != nil {
					log.Warn("webhook dispatch: releasing the previous leader's claims", "err", err)
				} else if n > 0 {
					log.Info("webhook dispatch: took over the previous leader's claims", "deliveries", n)
				}
			}
			d := webhook.New(webhook.Config{Store: st, Events: ev, Guard: guard, Dial: opts.WebhookDial, Sealer: sealer,
				Backoff: backoff, Timeout: timeout, Hold: conns.Hold, Log: log.With("component", "webhook"),
				Settled: func(o storage.Outcome) { m.Settled(outcomeName(o)) }})
			if err := d.Run(ctx); err != nil {
				log.Error("webhook dispatcher stopped", "err", err)
			}
		})
	}()
	defer func() { stopDispatch(); <-dispatched }()
	log.Info("engine serving", "socket", sock, "backend", opened.name, "at", opened.location, "memories", st.Count(), "idle_timeout", opts.IdleTimeout)

	var serveErr error
	select {
	case <-ctx.Done():
		log.Info("engine stopping", "reason", context.Cause(ctx))
	case <-conns.idle():
		log.Info("engine stopping", "reason", "idle", "after", opts.IdleTimeout)
	case serveErr = <-served:
		serveErr = fmt.Errorf("engine: serve: %w", serveErr)
	}
	// Connections Serve accepted outlive its error: they stop here too,
	// before anything deferred above stops the work they use.
	stopGracefully(g, handlerGrace)
	if serveErr == nil {
		<-served
	}
	return serveErr
}

// listenOwnSocket listens on the unix socket sock (0600). remove deletes the
// socket only while the path is still this listener's: a data dir deleted
// and recreated under a running engine gets a successor engine with a
// socket of the same name, which the first engine, on its way out, must
// not take away (every new host then timed out). net's own unlink on
// Close is turned off for the same reason.
func listenOwnSocket(sock string) (lis net.Listener, remove func(), err error) {
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		return nil, nil, fmt.Errorf("engine: listen: %w", err)
	}
	l.SetUnlinkOnClose(false)
	own, err := os.Lstat(sock)
	if err == nil {
		err = os.Chmod(sock, 0o600)
	}
	if err != nil {
		l.Close()
		os.Remove(sock)
		return nil, nil, fmt.Errorf("engine: %w", err)
	}
	return l, func() {
		if now, err := os.Lstat(sock); err == nil && os.SameFile(own, now) {
			os.Remove(sock)
		}
	}, nil
}

// embedderFromSettings is the data dir's embedding endpoint, else the
// local model, else nil. A local model that fails to load is logged and
// the engine serves keyword methods, as without one.
func embedderFromSettings(dir string, local *modelfiles.Found, st embedder.Store, log *slog.Logger, hold func() func()) (*embedder.Embedder, error) {
	set, _, err := settings.Load(dir)
	if err != nil {
		return nil, err
	}
	if emb := embedder.New(set.Models.Embeddings, st, log, hold); emb != nil {
		log.Info("embedding endpoint configured", "base_url", set.Models.Embeddings.BaseURL, "model", emb.Model())
		return emb, nil
	}
	if local == nil {
		return nil, nil
	}
	m, err := embed.Load(local.Dir)
	if err != nil {
		log.Warn("local embedding model not loaded: recall uses keyword methods", "err", err)
		return nil, nil
	}
	log.Info("local embedding model loaded", "model", local.Name, "dir", local.Dir, "from", local.Source)
	return embedder.NewLocal(embedder.Local{Name: local.Name, Model: m, Bytes: local.Bytes}, st, log, hold), nil
}

// chatFromSettings is the data dir's chat endpoint, nil when none.
func chatFromSettings(dir string, log *slog.Logger) (*server.Chat, error) {
	set, _, err := settings.Load(dir)
	if err != nil || set.Models.Chat == nil {
		return nil, err
	}
	log.Info("chat endpoint configured", "base_url", set.Models.Chat.BaseURL, "model", set.Models.Chat.Model)
	return &server.Chat{Client: models.New(*set.Models.Chat)}, nil
}

// TiersFromSettings applies the data dir's engine.toml over the default
// expiry (the CLI says with it how long a stored memory lives).
func TiersFromSettings(set settings.Settings) storage.TTL {
	d := storage.DefaultTTL()
	t := set.Apply(settings.Tiers{Short: d.Short, Mid: d.Mid, Long: d.Long, ShortExtend: d.ShortExtend, MidExtend: d.MidExtend})
	return storage.TTL{Short: t.Short, Mid: t.Mid, Long: t.Long, ShortExtend: t.ShortExtend, MidExtend: t.MidExtend}
}

// webhookConfig is the dispatcher's configuration from engine.toml.
func webhookConfig(w settings.Webhooks) (webhook.Guard, webhook.Backoff, time.Duration) {
	g := webhook.Guard{AllowLoopback: w.AllowLoopback != nil && *w.AllowLoopback, AllowPrivate: w.AllowPrivate != nil && *w.AllowPrivate}
	b := webhook.DefaultBackoff
	if w.MaxAttempts != nil {
		b.Attempts = int(*w.MaxAttempts)
	}
	if w.RetryBaseMs != nil {
		b.Base = time.Duration(*w.RetryBaseMs) * time.Millisecond
	}
	timeout := 5 * time.Second
	if w.TimeoutMs != nil {
		timeout = time.Duration(*w.TimeoutMs) * time.Millisecond
	}
	return g, b, timeout
}

// handlerGrace is how long running calls may take to finish on shutdown
// before their contexts are cancelled.
const handlerGrace = 2 * time.Second

// stopGracefully lets running calls finish for up to grace (watch streams
// would never end by themselves), then cancels the rest, and returns once
// every handler has returned (GracefulStop waits for them, and the server
// is built with WaitForHandlers): a write in flight is committed and
// acknowledged, or refused by its cancelled context, before the store
// closes.
func stopGracefully(g *grpc.Server, grace time.Duration) {
	cut := make(chan struct{})
	timer := time.AfterFunc(grace, func() { g.Stop(); close(cut) })
	g.GracefulStop()
	if !timer.Stop() {
		<-cut // the cut began: it returns too
	}
}

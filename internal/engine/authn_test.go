package engine

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ai-memory/ai-memory/internal/assertion"
	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	"github.com/ai-memory/ai-memory/internal/testwait"
	"github.com/ai-memory/ai-memory/sdk/wire"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// staticCreds sends a fixed token, as a plugin replaying or forging one would.
type staticCreds string

func (s staticCreds) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{assertion.MetadataKey: string(s)}, nil
}
func (staticCreds) RequireTransportSecurity() bool { return false }

// openCalls opens a host's call session with dir's engine, as the keeper
// does, and returns its tracker.
func openCalls(t *testing.T, dir string) *assertion.Tracker {
	t.Helper()
	key, err := assertion.LoadKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	signer, _ := assertion.NewSigner(key, nil)
	tracker := assertion.NewTracker(signer)
	conn, err := wire.DialEngineAt(SocketPath(dir), signer.HostCredentials("test-host", ""))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stream, err := conn.Track(ctx)
	if err != nil {
		t.Fatal(err)
	}
	opened, served := make(chan struct{}), make(chan error, 1)
	go func() { served <- tracker.Serve(stream, func() { close(opened) }) }()
	t.Cleanup(func() { cancel(); testwait.Recv(t, served, "the call session to end"); conn.Close() })
	select {
	case <-opened:
	case err := <-served:
		t.Fatalf("call session: %v", err)
	case <-time.After(testwait.Deadline):
		t.Fatal("the call session did not open")
	}
	return tracker
}

// begin is the assertion of one tool call of c, served by process pid.
func begin(t *testing.T, calls *assertion.Tracker, c caller.Caller, pid int) ([]byte, func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	token, end, err := calls.Begin(ctx, c, pid, time.Now().Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	return token, end
}

func TestEngineRefusesCallsWithoutValidAssertion(t *testing.T) {
	dir := shortDir(t)
	ctx0, stop := context.WithCancel(storagetest.Operator())
	done := serveAsync(ctx0, Options{DataDir: dir, IdleTimeout: -1, Logger: quiet(t)})
	t.Cleanup(func() { stop(); wait(t, done, testwait.Deadline) })
	dial(t, dir) // waits until it serves

	key, err := assertion.LoadKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	signer, _ := assertion.NewSigner(key, nil)
	past := time.Now().Add(-time.Hour)
	stale, _ := assertion.NewSigner(key, func() time.Time { return past })
	otherKey, _ := assertion.NewSigner(make([]byte, 32), nil)
	calls := openCalls(t, dir)
	c := caller.Caller{Principal: "ai:a", Session: "s", Family: "core", Scope: caller.AllNamespaces}
	host := caller.Caller{Principal: "ai:a", Session: "s", Family: caller.HostFamily, Scope: caller.AllNamespaces}
	ended, end := begin(t, calls, c, os.Getpid())
	end()
	// A call for someone else on the same process waits until the engine
	// has applied that end.
	_, endSync := begin(t, calls, caller.Caller{Principal: "ai:b", Session: "s", Family: "core", Scope: caller.AllNamespaces}, os.Getpid())
	endSync()
	otherPID, endOther := begin(t, calls, c, os.Getppid())
	defer endOther()

	refused := map[string]struct {
		opts []grpc.DialOption
		want string
	}{
		"none":                   {nil, "no caller assertion"},
		"garbage":                {[]grpc.DialOption{grpc.WithPerRPCCredentials(staticCreds("not-a-token"))}, "not valid"},
		"other key":              {[]grpc.DialOption{grpc.WithPerRPCCredentials(staticCreds(otherKey.Mint(host)))}, "not valid"},
		"expired":                {[]grpc.DialOption{grpc.WithPerRPCCredentials(staticCreds(stale.Mint(host)))}, "expired"},
		"a plugin's, of no call": {[]grpc.DialOption{grpc.WithPerRPCCredentials(staticCreds(signer.Mint(c)))}, "names no tool call"},
		"of a call that ended":   {[]grpc.DialOption{grpc.WithPerRPCCredentials(staticCreds(ended))}, "has ended"},
		"issued to another pid":  {[]grpc.DialOption{grpc.WithPerRPCCredentials(staticCreds(otherPID))}, "another process"},
	}
	for name, tc := range refused {
		conn, err := wire.DialEngineAt(SocketPath(dir), tc.opts...)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(storagetest.Operator(), 5*time.Second)
		_, err = conn.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: "t", Content: "c", Tier: "long"}})
		cancel()
		conn.Close()
		if status.Code(err) != codes.Unauthenticated || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want Unauthenticated: %s", name, err, tc.want)
		}
	}

	// A plugin's assertion of a call in flight works for memory calls, but
	// what only hosts do (the audit log, export, backup) is refused.
	live, endLive := begin(t, calls, c, os.Getpid())
	defer endLive()
	conn, err := wire.DialEngineAt(SocketPath(dir), grpc.WithPerRPCCredentials(staticCreds(live)))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := storagetest.Operator()
	if _, err := conn.Health(ctx, &aimemoryv1.HealthRequest{}); err != nil {
		t.Fatalf("valid plugin assertion refused: %v", err)
	}
	_, appendErr := conn.AppendAudit(ctx, &aimemoryv1.AppendAuditRequest{Record: &aimemoryv1.AuditRecord{AgentId: "ai:a", Event: "forged"}})
	_, listErr := conn.ListAudit(ctx, &aimemoryv1.ListAuditRequest{Limit: 1})
	export, err := conn.Export(ctx, &aimemoryv1.ExportRequest{})
	if err == nil {
		_, err = export.Recv()
	}
	for name, err := range map[string]error{"AppendAudit": appendErr, "ListAudit": listErr, "Export": err} {
		if status.Code(err) != codes.PermissionDenied {
			t.Errorf("plugin %s: %v, want PermissionDenied", name, err)
		}
	}
	// The assertion also travels on a tool call's context, as the sdk forwards it.
	plain, err := wire.DialEngineAt(SocketPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	resp, err := plain.ListAudit(ctx, &aimemoryv1.ListAuditRequest{Limit: 1})
	if status.Code(err) != codes.Unauthenticated {
		t.Fatalf("plain client: %v %v, want Unauthenticated", resp, err)
	}
}

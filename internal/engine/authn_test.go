package engine

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ai-memory/ai-memory/internal/assertion"
	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
	"github.com/ai-memory/ai-memory/sdk"
)

// staticCreds sends a fixed token, as a plugin replaying or forging one would.
type staticCreds string

func (s staticCreds) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{assertion.MetadataKey: string(s)}, nil
}
func (staticCreds) RequireTransportSecurity() bool { return false }

func TestEngineRefusesCallsWithoutValidAssertion(t *testing.T) {
	dir := shortDir(t)
	ctx0, stop := context.WithCancel(storagetest.Operator())
	done := serveAsync(ctx0, Options{DataDir: dir, IdleTimeout: -1, Logger: quiet(t)})
	t.Cleanup(func() { stop(); <-done })
	dial(t, dir) // waits until it serves

	key, err := assertion.LoadKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	signer, _ := assertion.NewSigner(key, nil)
	past := time.Now().Add(-time.Hour)
	stale, _ := assertion.NewSigner(key, func() time.Time { return past })
	otherKey, _ := assertion.NewSigner(make([]byte, 32), nil)
	c := caller.Caller{Principal: "ai:a", Session: "s", Family: "core", Scope: caller.AllNamespaces}

	refused := map[string][]grpc.DialOption{
		"none":      nil,
		"garbage":   {grpc.WithPerRPCCredentials(staticCreds("not-a-token"))},
		"other key": {grpc.WithPerRPCCredentials(staticCreds(otherKey.Mint(c)))},
		"expired":   {grpc.WithPerRPCCredentials(staticCreds(stale.Mint(c)))},
	}
	for name, opts := range refused {
		conn, err := sdk.DialEngineAt(SocketPath(dir), opts...)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(storagetest.Operator(), 5*time.Second)
		_, err = conn.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: "t", Content: "c", Tier: "long"}})
		cancel()
		conn.Close()
		if status.Code(err) != codes.Unauthenticated {
			t.Errorf("%s: err = %v, want Unauthenticated", name, err)
		}
	}

	// A plugin's valid assertion works for memory calls, but the audit log
	// is the hosts' alone.
	conn, err := sdk.DialEngineAt(SocketPath(dir), grpc.WithPerRPCCredentials(staticCreds(signer.Mint(c))))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := storagetest.Operator()
	if _, err := conn.Health(ctx, &aimemoryv1.HealthRequest{}); err != nil {
		t.Fatalf("valid plugin assertion refused: %v", err)
	}
	_, err = conn.AppendAudit(ctx, &aimemoryv1.AppendAuditRequest{Record: &aimemoryv1.AuditRecord{AgentId: "ai:a", Event: "forged"}})
	if status.Code(err) != codes.PermissionDenied {
		t.Fatalf("plugin AppendAudit: %v, want PermissionDenied", err)
	}
	// The assertion also travels on a tool call's context, as the sdk forwards it.
	plain, err := sdk.DialEngineAt(SocketPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	resp, err := plain.ListAudit(ctx, &aimemoryv1.ListAuditRequest{Limit: 1})
	if status.Code(err) != codes.Unauthenticated {
		t.Fatalf("plain client: %v %v, want Unauthenticated", resp, err)
	}
}

func TestPeerUIDIsOwnUser(t *testing.T) {
	sock := filepath.Join(shortDir(t)+"x", "p.sock")
	if err := os.MkdirAll(filepath.Dir(sock), 0o700); err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	go func() {
		if c, err := net.Dial("unix", sock); err == nil {
			defer c.Close()
			c.Read(make([]byte, 1))
		}
	}()
	c, err := restrictToOwnUser(lis, quiet(t)).Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	uid, err := peerUID(c)
	if err != nil || uid != os.Getuid() {
		t.Fatalf("peerUID = %d, %v; want %d", uid, err, os.Getuid())
	}
}

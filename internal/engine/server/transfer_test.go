package server

import (
	"context"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/ai-memory/ai-memory/internal/assertion"
	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/boltstore"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	"github.com/ai-memory/ai-memory/internal/testwait"
	"github.com/ai-memory/ai-memory/sdk/wire"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// serveAs runs the services behind the engine's host-only check and
// authorizer, with every call (unary and streaming) made by family.
func serveAs(t *testing.T, family string) *wire.EngineConn {
	t.Helper()
	bst, err := boltstore.Open(storagetest.Operator(), filepath.Join(t.TempDir(), "memory.db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st := records.New(bst) // served as the engine serves it
	t.Cleanup(func() { st.Close() })
	as := caller.Caller{Principal: "ai:test", Family: family, Scope: caller.AllNamespaces}
	g := grpc.NewServer(append([]grpc.ServerOption{
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			return h(caller.NewContext(ctx, as), req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			return h(srv, &ctxStream{ServerStream: ss, ctx: caller.NewContext(ss.Context(), as)})
		})}, append(assertion.NewGate(nil).HostOnly(), Authorize()...)...)...)
	Register(g, Config{Backend: st})
	aimemoryv1.RegisterCallsServer(g, aimemoryv1.UnimplementedCallsServer{}) // the engine registers its gate
	lis := bufconn.Listen(1 << 20)
	go g.Serve(lis)
	t.Cleanup(g.Stop)
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return wire.NewEngineConn(conn)
}

type ctxStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *ctxStream) Context() context.Context { return s.ctx }

// Every host-only method refuses a plugin's call (the gate's HostOnly
// list; the handlers check nothing themselves); a host's backup and
// import go through.
func TestHostOnlyMethodsRefusePlugins(t *testing.T) {
	// A stream let through by mistake (Track sends nothing) ends at the deadline, failing the test.
	ctx, cancel := context.WithTimeout(storagetest.Operator(), testwait.Deadline)
	defer cancel()
	plugin := serveAs(t, "core")
	b, _ := plugin.Backup(ctx, &aimemoryv1.BackupRequest{})
	e, _ := plugin.Export(ctx, &aimemoryv1.ExportRequest{})
	track, _ := plugin.Track(ctx)
	_, importErr := plugin.Import(ctx, &aimemoryv1.ImportRequest{})
	_, appendErr := plugin.AppendAudit(ctx, &aimemoryv1.AppendAuditRequest{Record: &aimemoryv1.AuditRecord{AgentId: "ai:x", Event: "forged"}})
	_, listErr := plugin.ListAudit(ctx, &aimemoryv1.ListAuditRequest{Limit: 1})
	_, verifyErr := plugin.VerifyAudit(ctx, &aimemoryv1.VerifyAuditRequest{})
	_, metricsErr := plugin.Metrics(ctx, &aimemoryv1.MetricsRequest{})
	_, backfillErr := plugin.Backfill(ctx, &aimemoryv1.BackfillRequest{})
	refused := map[string]error{
		"Engine/Backup": recvErr(b.Recv), "Transfer/Export": recvErr(e.Recv), "Transfer/Import": importErr,
		"Audit/AppendAudit": appendErr, "Audit/ListAudit": listErr, "Audit/VerifyAudit": verifyErr,
		"Engine/Metrics": metricsErr, "Vectors/Backfill": backfillErr, "Calls/Track": recvErr(track.Recv),
	}
	for name, err := range refused {
		if status.Code(err) != codes.PermissionDenied || !strings.Contains(err.Error(), name+": only an ai-memory host") {
			t.Errorf("%s by a plugin: %v, want PermissionDenied", name, err)
		}
	}

	host := serveAs(t, caller.HostFamily)
	stream, err := host.Backup(ctx, &aimemoryv1.BackupRequest{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		c, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n += len(c.GetData())
	}
	if n == 0 {
		t.Error("backup by a host: no bytes")
	}
	if _, err := host.Import(ctx, &aimemoryv1.ImportRequest{Records: make([]*aimemoryv1.ExportRecord, maxImportBatch+1)}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("oversized import: %v", err)
	}
}

func recvErr[T any](recv func() (T, error)) error {
	_, err := recv()
	return err
}

package server

import (
	"context"
	"io"
	"net"
	"path/filepath"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/boltstore"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
	"github.com/ai-memory/ai-memory/sdk"
)

// serveAs runs the services with every call (unary and streaming) made
// by family.
func serveAs(t *testing.T, family string) *sdk.EngineConn {
	t.Helper()
	st, err := boltstore.Open(storagetest.Operator(), filepath.Join(t.TempDir(), "memory.db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	as := caller.Caller{Principal: "ai:test", Family: family, Scope: caller.AllNamespaces}
	g := grpc.NewServer(
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			return h(caller.NewContext(ctx, as), req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			return h(srv, &ctxStream{ServerStream: ss, ctx: caller.NewContext(ss.Context(), as)})
		}))
	Register(g, Config{Backend: st})
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
	return sdk.NewEngineConn(conn)
}

type ctxStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *ctxStream) Context() context.Context { return s.ctx }

func TestBackupExportImportAreForHostsOnly(t *testing.T) {
	ctx := storagetest.Operator()
	plugin := serveAs(t, "core")
	b, _ := plugin.Backup(ctx, &aimemoryv1.BackupRequest{})
	e, _ := plugin.Export(ctx, &aimemoryv1.ExportRequest{})
	_, ierr := plugin.Import(ctx, &aimemoryv1.ImportRequest{})
	for name, err := range map[string]error{
		"backup": recvErr(b.Recv),
		"export": recvErr(e.Recv),
		"import": ierr,
	} {
		if status.Code(err) != codes.PermissionDenied {
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

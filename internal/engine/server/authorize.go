package server

import (
	"context"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/governance"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
	"github.com/ai-memory/ai-memory/sdk/record"
)

// Authorize is the engine's authorization, run after the caller's
// assertion is verified and before any service touches the backend: a
// call without a verified caller is refused (Unauthenticated), and every
// namespace a request names is checked against the caller's grant
// (authz): one it would write must be writable (PermissionDenied, so a
// write outside the scope never reaches a lookup whose answer could name
// another tenant's memory), one it would read by name must be readable.
// Filters and prefixes of list-like reads are not refused: the backend's
// read rule (the same authz) leaves the answer empty. The host-only
// methods refuse every caller but a host. It runs after the refusals'
// caller note, so what it refuses is audited with the caller.
func Authorize() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			if err := authorize(ctx, info.FullMethod, req); err != nil {
				return nil, err
			}
			return h(ctx, req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			if err := authorize(ss.Context(), info.FullMethod, nil); err != nil {
				return err
			}
			return h(srv, ss)
		}),
	}
}

// hostOnly are the methods only a host's own calls may make: what the
// operator's commands use, and the hosts' call sessions. A plugin reaches
// memory through the record APIs and their checks.
var hostOnly = map[string]bool{
	aimemoryv1.Audit_AppendAudit_FullMethodName: true, // a forged audit record
	aimemoryv1.Audit_ListAudit_FullMethodName:   true, // every principal's decisions
	aimemoryv1.Audit_VerifyAudit_FullMethodName: true,
	aimemoryv1.Transfer_Export_FullMethodName:   true, // the whole store
	aimemoryv1.Transfer_Import_FullMethodName:   true,
	aimemoryv1.Engine_Backup_FullMethodName:     true,
	aimemoryv1.Engine_Metrics_FullMethodName:    true, // the data dir's, not a principal's
	aimemoryv1.Vectors_Backfill_FullMethodName:  true, // `ai-memory reindex`: paid model calls
	aimemoryv1.Calls_Track_FullMethodName:       true,
}

// authorize checks one call of method (req nil for a stream, whose
// request the handler reads and checks itself).
func authorize(ctx context.Context, method string, req any) error {
	g := authz.Of(ctx)
	c, ok := g.Caller()
	if !ok {
		return status.Error(codes.Unauthenticated, "engine call refused: no verified caller")
	}
	if hostOnly[method] && !c.IsHost() {
		return status.Errorf(codes.PermissionDenied, "%s: only an ai-memory host may call it; a plugin reaches memory through the record APIs", strings.TrimPrefix(method, "/aimemory.v1."))
	}
	op, writes, reads := requestNamespaces(req)
	if err := g.CheckWrite(op, writes...); err != nil {
		return status.Error(codes.PermissionDenied, err.Error())
	}
	for _, r := range reads {
		if r.ns != "" && !g.Reads(r.ns) {
			c, _ := g.Caller()
			return status.Errorf(codes.PermissionDenied, "%s: %s is not a namespace %s may read", r.field, authz.Quote(r.ns), c.Principal)
		}
	}
	return nil
}

type namedRead struct{ field, ns string }

// requestNamespaces is the table of what each request names: the
// namespaces it would write (with the verb for the error), and those it
// would read by name. A request type not listed names none.
func requestNamespaces(req any) (op string, writes []string, reads []namedRead) {
	switch r := req.(type) {
	case *aimemoryv1.StoreMemoryRequest:
		ns := r.GetMemory().GetNamespace()
		if ns == "" {
			ns = record.DefaultNamespace // what the backend stores into
		}
		return "store", []string{ns}, nil
	case *aimemoryv1.UpdateMemoryRequest:
		return "update", []string{r.GetNamespace()}, nil
	case *aimemoryv1.RegisterEntityRequest:
		return "entity registration", []string{strings.TrimSpace(r.GetNamespace())}, nil
	case *aimemoryv1.ForgetRequest:
		return "forget", []string{r.GetNamespace()}, nil
	case *aimemoryv1.PromoteMemoryRequest:
		return "promote", []string{r.GetToNamespace()}, nil
	case *aimemoryv1.ConsolidateRequest:
		ns := r.GetNamespace()
		if ns == "" {
			ns = record.DefaultNamespace
		}
		return "consolidate", []string{ns}, nil
	case *aimemoryv1.SetStandardRequest:
		return "set_standard", []string{r.GetNamespace(), r.GetParent()}, nil
	case *aimemoryv1.ClearStandardRequest:
		return "clear_standard", []string{r.GetNamespace()}, nil
	case *aimemoryv1.GetStandardRequest:
		if r.GetNamespace() == governance.Global {
			return "", nil, nil // the standard every namespace inherits: everyone's to read
		}
		return "", nil, []namedRead{{"namespace", r.GetNamespace()}}
	case *aimemoryv1.SubscribeRequest:
		return "", nil, []namedRead{{"namespace_filter", r.GetNamespaceFilter()}}
	}
	return "", nil, nil
}

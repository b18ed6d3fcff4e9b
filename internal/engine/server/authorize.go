package server

import (
	"context"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/governance"
	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Authorize is the engine's authorization, run after the caller's
// assertion is verified and before any service touches the backend: a
// call without a verified caller is refused (Unauthenticated), and every
// namespace a request names is checked against the caller's grant
// (authz): one it would write must be writable (PermissionDenied, so a
// write outside the scope never reaches a lookup whose answer could name
// another tenant's memory), one it would read by name must be readable.
// Filters and prefixes of list-like reads are not refused: the backend's
// read rule (the same authz) leaves the answer empty. It runs after the
// refusals' caller note, so what it refuses is audited with the caller;
// the host-only methods are refused before it (assertion.Gate.HostOnly).
func Authorize() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			if err := authorize(ctx, req); err != nil {
				return nil, err
			}
			return h(ctx, req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			if err := authorize(ss.Context(), nil); err != nil {
				return err
			}
			return h(srv, ss)
		}),
	}
}

// authorize checks one request (nil for a stream, whose request the
// handler reads and checks itself).
func authorize(ctx context.Context, req any) error {
	g := authz.Of(ctx)
	if _, ok := g.Caller(); !ok {
		return status.Error(codes.Unauthenticated, "engine call refused: no verified caller")
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

package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ai-memory/ai-memory/internal/engine/audit"
	"github.com/ai-memory/ai-memory/internal/engine/server"
	"github.com/ai-memory/ai-memory/internal/testwait"
	"github.com/ai-memory/ai-memory/sdk/wire"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// TestEngineAuditsItsRefusals: a write the engine refuses is audited with
// the caller it refused, calls without a valid assertion are audited as
// unauthenticated, a flood of them leaves at most the rate limit's records,
// and the next record counts what was held back, so no refusal goes
// uncounted. The chain stays intact throughout.
func TestEngineAuditsItsRefusals(t *testing.T) {
	dir := shortDir(t)
	ctx0, stop := context.WithCancel(context.Background())
	done := serveAsync(ctx0, Options{DataDir: dir, IdleTimeout: -1, Logger: quiet(t)})
	t.Cleanup(func() { stop(); wait(t, done, testwait.Deadline) })
	host := dial(t, dir)
	ctx := context.Background()

	_, err := host.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: "t", Content: "c", Namespace: "_reserved", Tier: "long"}})
	if status.Code(err) != codes.PermissionDenied {
		t.Fatalf("store into a guarded namespace: %v", err)
	}
	// The seal of an unkeyed log is the engine's own record, even for a host.
	_, err = host.AppendAudit(ctx, &aimemoryv1.AppendAuditRequest{Record: &aimemoryv1.AuditRecord{AgentId: "engine", Event: audit.EventKeyed}})
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("a host appending %s: %v", audit.EventKeyed, err)
	}

	plain, err := wire.DialEngineAt(SocketPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	const flood = 300
	started := time.Now()
	for range flood {
		if _, err := plain.Health(ctx, &aimemoryv1.HealthRequest{}); status.Code(err) != codes.Unauthenticated {
			t.Fatalf("health without an assertion: %v", err)
		}
	}
	took := time.Since(started)

	list := func() []*aimemoryv1.AuditRecord {
		t.Helper()
		resp, err := host.ListAudit(ctx, &aimemoryv1.ListAuditRequest{Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetRecords()
	}
	var denied, unauthenticated []*aimemoryv1.AuditRecord
	for _, r := range list() {
		switch r.GetEvent() {
		case server.EventDenied:
			denied = append(denied, r)
		case server.EventUnauthenticated:
			unauthenticated = append(unauthenticated, r)
		}
	}
	if len(denied) != 1 || denied[0].GetAgentId() != "test" || denied[0].GetFamily() != "host" || denied[0].GetTool() != "Memories/StoreMemory" ||
		denied[0].GetGranted() || !strings.Contains(denied[0].GetReason(), "_reserved") {
		t.Errorf("denied store: %v", denied)
	}
	bound := server.RefusalBurst + int(took.Seconds()*server.RefusalRate) + 1
	if len(unauthenticated) < server.RefusalBurst || len(unauthenticated) > bound {
		t.Errorf("a flood of %d unauthenticated calls in %v left %d records; want %d to %d", flood, took, len(unauthenticated), server.RefusalBurst, bound)
	}
	for _, r := range unauthenticated {
		if r.GetAgentId() != "" || r.GetTool() != "Engine/Health" || !strings.Contains(r.GetReason(), "assertion") {
			t.Errorf("unauthenticated record = %v", r)
		}
	}

	// Refused calls go on until one is recorded again: it carries the
	// count of every one held back before it.
	attempts := flood
	deadline := time.Now().Add(5 * time.Second / server.RefusalRate)
	var next *aimemoryv1.AuditRecord
	for next == nil && time.Now().Before(deadline) {
		plain.Health(ctx, &aimemoryv1.HealthRequest{})
		attempts++
		if r := list()[0]; r.GetEvent() == server.EventUnauthenticated && r.GetSeq() > unauthenticated[0].GetSeq() {
			next = r
		}
	}
	if next == nil {
		t.Fatal("no refusal was recorded again after the limit refilled")
	}
	recorded := uint64(0)
	var held uint64
	for _, r := range list() {
		if r.GetEvent() == server.EventUnauthenticated {
			recorded++
			held += r.GetSuppressed()
		}
	}
	if recorded+held != uint64(attempts) {
		t.Errorf("%d refusals: %d recorded + %d counted as held back", attempts, recorded, held)
	}
	v, err := host.VerifyAudit(ctx, &aimemoryv1.VerifyAuditRequest{})
	if err != nil || !v.GetOk() {
		t.Fatalf("chain after the flood: %v, %v", v, err)
	}
}

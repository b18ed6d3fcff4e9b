// Package auditlog writes the host's guarded decisions to the engine's
// hash-chained audit log.
package auditlog

import (
	"context"
	"time"

	"github.com/ai-memory/ai-memory/internal/mcphost"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Recorder appends audit records through an engine client.
type Recorder struct {
	Engine aimemoryv1.AuditClient
}

// Record implements mcphost.Auditor.
func (r Recorder) Record(ctx context.Context, e mcphost.AuditEntry) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	_, err := r.Engine.AppendAudit(ctx, &aimemoryv1.AppendAuditRequest{Record: &aimemoryv1.AuditRecord{
		AgentId: e.AgentID, Event: e.Event, Family: e.Family, Tool: e.Tool, Granted: e.Granted, Reason: e.Reason, Attestation: e.Attestation,
	}})
	return err
}

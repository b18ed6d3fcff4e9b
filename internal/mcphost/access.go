package mcphost

import (
	"context"
	"fmt"
	"slices"

	"github.com/mark3labs/mcp-go/server"

	"github.com/ai-memory/ai-memory/internal/catalog"
	"github.com/ai-memory/ai-memory/internal/guard"
	"github.com/ai-memory/ai-memory/internal/identity"
	"github.com/ai-memory/ai-memory/sdk"
)

// AuditEntry is one guarded decision: an expansion attempt or a denied call.
type AuditEntry struct {
	AgentID string
	Event   string // capability_expansion | call_denied
	Family  string
	Tool    string
	Granted bool
	Reason  string // allowlist rule, rate_limited, …
	// Attestation is how the identity was established: "" (stdio, claimed),
	// token, oauth or mtls.
	Attestation string
}

// Auditor records guarded decisions (the engine's hash-chained audit log).
type Auditor interface {
	Record(ctx context.Context, e AuditEntry) error
}

// identity is the session's resolved agent id. A per-call agent_id
// argument never changes it: it only records provenance.
func (h *Host) identity() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return identity.Resolve(h.opts.AgentID, h.clientName)
}

// identityOf is the resolved agent id of the session a call belongs to.
func (h *Host) identityOf(ctx context.Context) string {
	return identity.Resolve(h.opts.AgentID, h.clientNameOf(ctx))
}

type clientNameKey struct{}

// WithClientName tells the host the client name of the session a message
// belongs to, for a transport whose sessions share one host (HTTP without
// authentication: each session keeps its own name).
func WithClientName(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, clientNameKey{}, name)
}

// clientNameOf is the client name of the session of ctx: as the transport
// said, else as mcp-go's session recorded it, else the one the host last
// learned (a stdio host has one session).
func (h *Host) clientNameOf(ctx context.Context) string {
	if name, _ := ctx.Value(clientNameKey{}).(string); name != "" {
		return name
	}
	if s, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
		if name := s.GetClientInfo().Name; name != "" {
			return name
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.clientName
}

func (h *Host) audit(ctx context.Context, e AuditEntry) {
	if h.opts.Audit == nil {
		return
	}
	e.Attestation = h.opts.Attestation
	if err := h.opts.Audit.Record(ctx, e); err != nil {
		h.log.Error("audit write failed", "event", e.Event, "family", e.Family, "agent_id", e.AgentID, "err", err)
	}
}

// permitCall checks the allowlist for a call of tool in family and audits a denial.
func (h *Host) permitCall(ctx context.Context, family, tool string) error {
	agent := h.identityOf(ctx)
	d := h.opts.Allowlist.Decide(agent, family)
	if d.Allowed {
		return nil
	}
	h.audit(ctx, AuditEntry{AgentID: agent, Event: "call_denied", Family: family, Tool: tool, Reason: "allowlist rule " + ruleName(d.Rule)})
	return h.deniedError(agent, family, d)
}

func (h *Host) deniedError(agent, family string, d guard.Decision) error {
	rule := d.Rule
	if rule == guard.AttestationRule {
		have := h.opts.Attestation
		if have == "" {
			have = "none"
		}
		how := "connect with a client certificate (mTLS)"
		if d.Need != "mtls" {
			how = "connect with an OAuth access token or a client certificate"
		}
		return fmt.Errorf("agent %s may not use the %s family over this connection: it requires an attested identity (%s), and this one is %s; %s, or ask an operator to lower [mcp.attestation] for it", agent, family, d.Need, have, how)
	}
	if rule == guard.CredentialRule {
		return fmt.Errorf("agent %s is not cleared for the %s family: its credential does not grant it; ask an operator for a token with that family (ai-memory token create --families)", agent, family)
	}
	return fmt.Errorf("agent %s is not cleared for the %s family (allowlist rule %s); ask an operator to add it to [mcp.allowlist] in config.toml",
		agent, family, ruleName(rule))
}

func ruleName(rule string) string {
	if rule == "none" {
		return "none matched, and there is no \"*\" row"
	}
	return sdk.Quote(rule)
}

// loadProfile registers the profile's families that the session's identity
// is cleared for (all of them without an allowlist) and drops the others;
// it runs at start and again whenever initialize (or a later request) says
// who the client is.
func (h *Host) loadProfile() {
	agent := h.identity()
	for _, f := range h.opts.Profile.Families() {
		if h.opts.Allowlist.Decide(agent, f).Allowed {
			if err := h.load(f, false); err != nil {
				h.log.Warn("family in profile is not available", "family", f, "err", err)
			}
		} else {
			h.unload(f)
		}
	}
}

// visibleFamilies is what discovery shows: every family, or with redacted
// discovery only those the identity is cleared for.
func (h *Host) visibleFamilies() []string {
	if !h.opts.RedactedDiscovery || !h.opts.Allowlist.Enabled() {
		return h.set.Families()
	}
	return h.opts.Allowlist.Allowed(h.identity())
}

func (h *Host) visible(family string) bool { return slices.Contains(h.visibleFamilies(), family) }

// howToLoad tells how to make family callable.
func howToLoad(family string) string {
	return fmt.Sprintf("Load it now with memory_capabilities {\"family\":\"%s\",\"include_schema\":true} (its tools become callable at once), or run one tool with memory_capabilities {\"tool\":...,\"arguments\":{...}} (for clients that do not refresh their tool list), or restart the server with --profile %s,%s.",
		family, catalog.Base, family)
}

// unloadedToolMessage answers a direct call of a known tool whose family
// this session has not loaded: which family, and how to load it (or why
// not). ok is false when the call is not such a case.
func (h *Host) unloadedToolMessage(ctx context.Context, tool string) (text string, ok bool) {
	family := h.set.FamilyOf(tool)
	if family == "" || catalog.IsAlwaysOn(tool) || h.isLoaded(family) {
		return "", false
	}
	h.suggestUnloaded(tool, family)
	if !h.visible(family) {
		return "", false // redacted: behave as for an unknown tool
	}
	if !h.set.Installed(family) {
		return fmt.Sprintf("%s belongs to the %s family, which no installed plugin provides yet.", tool, family), true
	}
	if err := h.permitCall(ctx, family, tool); err != nil {
		return err.Error(), true
	}
	return fmt.Sprintf("%s belongs to the %s family, which is not loaded in this session. %s", tool, family, howToLoad(family)), true
}

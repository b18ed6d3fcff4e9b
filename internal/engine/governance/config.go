package governance

import (
	"slices"
	"strings"
	"time"
)

// DefaultPendingTTL is how long a pending action waits for a decision
// unless [governance] pending_ttl_secs says otherwise.
const DefaultPendingTTL = 7 * 24 * time.Hour

// Config is the data dir's governance settings (the [governance] section
// of D/engine.toml, recorded from config.toml by the first host).
type Config struct {
	// Operators may always set, clear and reassign any namespace's
	// standard, and pass every "owner" level.
	Operators []string
	// Owners pins namespaces to their owners; a namespace absent here is
	// owned by the first identity that sets its standard.
	Owners map[string]string
	// Default governs namespaces that no policy in their chain governs;
	// nil means AllowAll.
	Default *Policy
	// PendingTTL is how long a queued write waits; 0 means DefaultPendingTTL.
	PendingTTL time.Duration
}

// IsOperator reports whether principal is an operator.
func (c *Config) IsOperator(principal string) bool {
	return c != nil && principal != "" && slices.Contains(c.Operators, principal)
}

// ConfiguredOwner is the owner [governance.owners] names for ns, if any.
func (c *Config) ConfiguredOwner(ns string) (string, bool) {
	if c == nil {
		return "", false
	}
	o, ok := c.Owners[ns]
	return o, ok
}

// DefaultPolicy is the policy of an ungoverned namespace.
func (c *Config) DefaultPolicy() Policy {
	if c == nil || c.Default == nil {
		return AllowAll
	}
	return *c.Default
}

// PendingFor is the pending actions' time to live.
func (c *Config) PendingFor() time.Duration {
	if c == nil || c.PendingTTL <= 0 {
		return DefaultPendingTTL
	}
	return c.PendingTTL
}

// SamePrincipal compares identities for "nobody approves their own
// request": case-insensitively, so a requester cannot approve itself by
// changing case.
func SamePrincipal(a, b string) bool { return strings.EqualFold(a, b) }

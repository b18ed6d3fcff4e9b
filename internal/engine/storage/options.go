package storage

import (
	"log/slog"
	"time"

	"github.com/ai-memory/ai-memory/internal/engine/audit"
	"github.com/ai-memory/ai-memory/internal/engine/governance"

	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// TTL says how long memories of each tier live and how far a recall pushes
// an expiry out. A zero duration for a tier means "never expires".
type TTL struct {
	Short, Mid, Long       time.Duration
	ShortExtend, MidExtend time.Duration
}

// DefaultTTL is data-model §4: short 6 h, mid 7 d, long none; a recall
// extends short to at least now+1 h and mid to at least now+1 d.
func DefaultTTL() TTL {
	return TTL{
		Short:       6 * time.Hour,
		Mid:         7 * 24 * time.Hour,
		ShortExtend: time.Hour,
		MidExtend:   24 * time.Hour,
	}
}

// ForTier is the TTL of a tier; 0 = no expiry.
func (t TTL) ForTier(tier string) time.Duration {
	switch tier {
	case "short":
		return t.Short
	case "mid":
		return t.Mid
	case "long":
		return t.Long
	}
	return 0
}

// ExpiresAt is the expiry of a memory of tier written at now; 0 = none.
func (t TTL) ExpiresAt(tier string, now int64) int64 {
	d := t.ForTier(tier)
	if d <= 0 {
		return 0
	}
	return now + int64(d)
}

// Publisher receives every committed write, after the commit.
type Publisher interface {
	Publish(*aimemoryv1.Event)
}

// Options configure any backend. The zero value is usable.
type Options struct {
	// TTL per tier; the zero value means DefaultTTL().
	TTL TTL
	// Policy is asked before every governed write; nil allows all.
	Policy WritePolicy
	// Governance is the data dir's governance settings (operators, owners,
	// default policy, pending expiry); nil means none of them.
	Governance *governance.Config
	// Events receives committed writes; nil drops them.
	Events Publisher
	// Now is the clock (tests move it); nil means time.Now.
	Now func() time.Time
	// OpenTimeout bounds the wait for the storage's lock or connection; 0 means 5 s.
	OpenTimeout time.Duration
	// Logger for open-time reports; nil discards.
	Logger *slog.Logger
	// Audit keys the audit chain (the data dir's audit.key); nil means a
	// random key, so a chain verifies only while the store is open (tests).
	Audit *audit.Chain
	// Committed, when set, is told of every commit: how many write
	// requests it made durable and how long its transaction took, fsync
	// included (the engine's metrics). Called under the commit order.
	Committed func(writes int, took time.Duration)
}

// WithDefaults fills the zero fields of o.
func (o Options) WithDefaults() Options {
	if o.TTL == (TTL{}) {
		o.TTL = DefaultTTL()
	}
	if o.Policy == nil {
		o.Policy = AllowAll{}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.OpenTimeout <= 0 {
		o.OpenTimeout = 5 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Audit == nil {
		o.Audit = audit.Ephemeral()
	}
	if o.Committed == nil {
		o.Committed = func(int, time.Duration) {}
	}
	return o
}

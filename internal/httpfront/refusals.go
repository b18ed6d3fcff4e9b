package httpfront

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ai-memory/ai-memory/internal/mcphost"
	"github.com/ai-memory/ai-memory/internal/metrics"
)

// RefusedEvent is the audit event of a request the front turned away.
const RefusedEvent = "http_refused"

// Refusal limits: per source (the principal, else the client's address)
// and in all, per window. Beyond them refusals are counted, and each window
// ends with one summary, so no client can flood stderr or the audit chain.
const (
	refusalWindow    = time.Minute
	refusalPerSource = 20
	refusalTotal     = 200
	refusalSources   = 1024 // distinct sources counted one by one per window
)

// refusal is one request the front turned away.
type refusal struct {
	status    int
	kind      string // host, origin, auth, framing, body, too_large, busy, streams, query_token
	principal Principal
	addr      string // the client's IP
	msg       string // built by the front, values quoted (so bounded)
}

// refusals logs every refusal to stderr and audits it, within the limits
// above. Audit appends run on their own goroutine, off the request path.
type refusals struct {
	log     *slog.Logger
	audit   mcphost.Auditor
	queue   chan mcphost.AuditEntry
	metrics *metrics.Host // counts every refusal, over the limits too

	mu       sync.Mutex
	bySource map[string]int
	total    int
	held     map[string]int // refusals over the limits, by source
	heldN    int
}

func newRefusals(log *slog.Logger, audit mcphost.Auditor, m *metrics.Host) *refusals {
	return &refusals{log: log, audit: audit, metrics: m, queue: make(chan mcphost.AuditEntry, 64),
		bySource: map[string]int{}, held: map[string]int{}}
}

// record counts rf, and logs and audits it unless its source or the front
// is over its limit for this window.
func (rs *refusals) record(rf refusal) {
	rs.metrics.Refused(rf.kind)
	source := rf.principal.ID
	if source == "" {
		source = rf.addr
	}
	rs.mu.Lock()
	over := rs.total >= refusalTotal || rs.bySource[source] >= refusalPerSource
	if over {
		rs.heldN++
		if _, ok := rs.held[source]; ok || len(rs.held) < refusalSources {
			rs.held[source]++
		}
	} else {
		rs.total++
		rs.bySource[source]++
	}
	rs.mu.Unlock()
	if over {
		return
	}
	rs.log.Warn("request refused", "status", rf.status, "kind", rf.kind, "principal", rf.principal.ID, "from", rf.addr, "reason", rf.msg)
	rs.enqueue(mcphost.AuditEntry{AgentID: rf.principal.ID, Event: RefusedEvent, Attestation: rf.principal.Attestation,
		Reason: fmt.Sprintf("%d %s from %s: %s", rf.status, rf.kind, rf.addr, rf.msg)})
}

// roll ends the window: the refusals held back are summed up in one log
// line and one audit record.
func (rs *refusals) roll() {
	rs.mu.Lock()
	n, held := rs.heldN, rs.held
	rs.bySource, rs.total, rs.held, rs.heldN = map[string]int{}, 0, map[string]int{}, 0
	rs.mu.Unlock()
	if n == 0 {
		return
	}
	sources := make([]string, 0, len(held))
	for s := range held {
		sources = append(sources, s)
	}
	sort.Slice(sources, func(i, j int) bool { return held[sources[i]] > held[sources[j]] })
	var top []string
	for _, s := range sources[:min(len(sources), 5)] {
		top = append(top, fmt.Sprintf("%s×%d", s, held[s]))
	}
	summary := fmt.Sprintf("%d more refusals in the last %s, over the limit of %d per source and %d in all, not recorded one by one; most from %s",
		n, refusalWindow, refusalPerSource, refusalTotal, strings.Join(top, ", "))
	rs.log.Warn("refusals held back", "count", n, "sources", len(held), "summary", summary)
	rs.enqueue(mcphost.AuditEntry{Event: RefusedEvent, Reason: summary})
}

func (rs *refusals) enqueue(e mcphost.AuditEntry) {
	if rs.audit == nil {
		return
	}
	select {
	case rs.queue <- e:
	default:
		rs.log.Error("refusal not audited: the audit queue is full", "reason", e.Reason)
	}
}

// run appends queued records until ctx ends, then those still queued:
// the server stops only once its refusals are audited.
func (rs *refusals) run(ctx context.Context) {
	for {
		select {
		case e := <-rs.queue:
			rs.write(e)
		case <-ctx.Done():
			for {
				select {
				case e := <-rs.queue:
					rs.write(e)
				default:
					return
				}
			}
		}
	}
}

// write appends one record; a write under way is not cut short by the
// server stopping.
func (rs *refusals) write(e mcphost.AuditEntry) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := rs.audit.Record(ctx, e); err != nil {
		rs.log.Error("audit write failed", "event", e.Event, "err", err)
	}
}

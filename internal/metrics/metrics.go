// Package metrics is ai-memory's Prometheus instrumentation, with the
// official client library: the host's (tool calls, HTTP refusals,
// sessions), the engine's (commits, webhook deliveries, embedding
// backlog), and the /metrics endpoint of `ai-memory serve
// --metrics-listen`, which relays the engine's beside the host's.
//
// No label carries memory content, a title or a principal. The label
// values are tool names (the installed families' own), call outcomes,
// refusal kinds and delivery outcomes: small fixed sets.
package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Call outcomes (the outcome label of ai_memory_tool_calls_total).
const (
	OK          = "ok"          // the tool answered
	ToolError   = "error"       // the tool answered with an error (a rule broken, not found, queued for approval)
	Refused     = "refused"     // the allowlist or the credential does not clear the family
	Unavailable = "unavailable" // the engine is not available
	Failed      = "failed"      // the plugin did not answer (a crash, the call timeout)
	Cancelled   = "cancelled"   // the client cancelled it before it was answered
)

// outcomes are the call outcomes, in the order of toolMetrics.calls.
var outcomes = [...]string{OK, ToolError, Refused, Unavailable, Failed, Cancelled}

// Host is a host process's metrics. A nil *Host counts nothing, so call
// sites need no check.
type Host struct {
	reg      *prometheus.Registry
	calls    *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	refusals *prometheus.CounterVec
	tools    sync.Map // tool name → *toolMetrics
}

// toolMetrics are one tool's series, looked up once: a call then costs an
// increment and an observation, not a hash of its label values.
type toolMetrics struct {
	calls   [len(outcomes)]prometheus.Counter
	latency prometheus.Observer
}

// NewHost registers the host's metrics, with the Go runtime's and the
// process's.
func NewHost() *Host {
	h := &Host{
		reg: prometheus.NewRegistry(),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ai_memory_tool_calls_total",
			Help: "Tool calls by tool and outcome (ok, error, refused, unavailable, failed, cancelled).",
		}, []string{"tool", "outcome"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "ai_memory_tool_call_duration_seconds",
			Help: "Time from a tool call's arrival at the host to its answer, by tool.",
			// 100 µs to about 10 s: a store is a few ms, a recall over a
			// large store or a model call much more.
			Buckets: prometheus.ExponentialBuckets(0.0001, 2.5, 13),
		}, []string{"tool"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ai_memory_http_refusals_total",
			Help: "Requests the HTTP front refused, by kind (host, origin, auth, framing, body, too_large, busy, streams, query_token); every one, also those over the audit's rate limit.",
		}, []string{"kind"}),
	}
	h.reg.MustRegister(h.calls, h.latency, h.refusals,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return h
}

// ObserveCall counts one tool call and its latency.
func (h *Host) ObserveCall(tool, outcome string, took time.Duration) {
	if h == nil {
		return
	}
	m, ok := h.tools.Load(tool)
	if !ok {
		t := &toolMetrics{latency: h.latency.WithLabelValues(tool)}
		for i, o := range outcomes {
			t.calls[i] = h.calls.WithLabelValues(tool, o)
		}
		m, _ = h.tools.LoadOrStore(tool, t)
	}
	t := m.(*toolMetrics)
	for i, o := range outcomes {
		if o == outcome {
			t.calls[i].Inc()
		}
	}
	t.latency.Observe(took.Seconds())
}

// Refused counts one request the HTTP front refused.
func (h *Host) Refused(kind string) {
	if h == nil {
		return
	}
	h.refusals.WithLabelValues(kind).Inc()
}

// Gauge registers a gauge read when scraped (sessions, connections).
func (h *Host) Gauge(name, help string, read func() float64) {
	h.reg.MustRegister(gauge(name, help, read))
}

func gauge(name, help string, read func() float64) prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, read)
}

package metrics

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/protobuf/proto"
)

// Delivery outcomes (the outcome label of ai_memory_webhook_deliveries_total).
const (
	Delivered = "delivered" // the receiver answered 2xx
	Retry     = "retry"     // failed, to be attempted again
	Dead      = "dead"      // failed for the last time: dead-lettered
)

// Engine is the engine process's metrics. The engine is a process of its
// own, shared by every host of the data dir, so it keeps them and a host
// serving /metrics asks for them (the Metrics RPC) at each scrape: no
// second port, no state in the host, and the numbers are the engine's
// whichever host asks.
type Engine struct {
	reg        *prometheus.Registry
	commits    prometheus.Counter
	writes     prometheus.Counter
	commitTime prometheus.Histogram
	deliveries *prometheus.CounterVec
}

// NewEngine registers the engine's metrics.
func NewEngine() *Engine {
	e := &Engine{
		reg: prometheus.NewRegistry(),
		commits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ai_memory_engine_commits_total",
			Help: "Transactions the engine committed (a group commit makes several writes durable in one).",
		}),
		writes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ai_memory_engine_writes_total",
			Help: "Write requests the engine made durable (stores, updates, deletes, links, audit records, ...).",
		}),
		commitTime: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "ai_memory_engine_commit_duration_seconds",
			Help: "Time of one commit's transaction, fsync included.",
			// 50 µs to about 1.6 s.
			Buckets: prometheus.ExponentialBuckets(0.00005, 2, 16),
		}),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ai_memory_webhook_deliveries_total",
			Help: "Webhook delivery attempts settled, by outcome (delivered, retry, dead).",
		}, []string{"outcome"}),
	}
	e.reg.MustRegister(e.commits, e.writes, e.commitTime, e.deliveries)
	for _, o := range []string{Delivered, Retry, Dead} {
		e.deliveries.WithLabelValues(o) // present at 0 from the start
	}
	return e
}

// Committed counts one commit of writes requests (storage.Options.Committed).
func (e *Engine) Committed(writes int, took time.Duration) {
	e.commits.Inc()
	e.writes.Add(float64(writes))
	e.commitTime.Observe(took.Seconds())
}

// Settled counts one webhook delivery attempt's outcome.
func (e *Engine) Settled(outcome string) { e.deliveries.WithLabelValues(outcome).Inc() }

// Gauge registers a gauge read when scraped (queue depth, backlog).
func (e *Engine) Gauge(name, help string, read func() float64) {
	e.reg.MustRegister(gauge(name, help, read))
}

// Families is every metric now, each an encoded MetricFamily (the
// Metrics RPC's answer).
func (e *Engine) Families() ([][]byte, error) {
	mfs, err := e.reg.Gather()
	if err != nil {
		return nil, err
	}
	out := make([][]byte, 0, len(mfs))
	for _, mf := range mfs {
		b, err := proto.Marshal(mf)
		if err != nil {
			return nil, fmt.Errorf("metrics: %s: %w", mf.GetName(), err)
		}
		out = append(out, b)
	}
	return out, nil
}

package engine

import (
	"context"
	"time"

	"github.com/ai-memory/ai-memory/internal/engine/embedder"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/metrics"
)

// addGauges registers the engine's gauges, each read when a host scrapes:
// the memories stored, the webhook deliveries queued, and, with an
// embedding endpoint, the memories still without a vector.
func addGauges(m *metrics.Engine, st storage.Backend, emb *embedder.Embedder) {
	m.Gauge("ai_memory_memories", "Live memories in the store.", func() float64 { return float64(st.Count()) })
	m.Gauge("ai_memory_webhook_queue_depth", "Webhook deliveries queued or waiting to retry, all subscriptions.", func() float64 {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		subs, err := st.ListSubscriptions(ctx)
		if err != nil {
			return -1
		}
		var n uint64
		for _, s := range subs {
			d, err := st.DeliveryState(ctx, s.ID, 0)
			if err != nil {
				return -1
			}
			n += d.Pending
		}
		return float64(n)
	})
	if emb == nil {
		return
	}
	m.Gauge("ai_memory_embedding_backlog", "Memories with no vector by the configured embedding model (ai-memory reindex embeds them).", func() float64 {
		s := emb.Status()
		return float64(s.GetMemories() - min(s.GetWithVector(), s.GetMemories()))
	})
	m.Gauge("ai_memory_embedding_queued", "Writes whose embedding request is queued now.", func() float64 {
		return float64(emb.Status().GetQueued())
	})
}

// outcomeName is a delivery outcome's metric label.
func outcomeName(o storage.Outcome) string {
	switch o {
	case storage.Delivered:
		return metrics.Delivered
	case storage.Retry:
		return metrics.Retry
	}
	return metrics.Dead
}

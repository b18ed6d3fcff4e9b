package metrics

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"
)

// FetchEngine asks the engine for its metrics (the Metrics RPC).
type FetchEngine func(ctx context.Context) ([][]byte, error)

// relay gathers the engine's metrics at each scrape, with
// ai_memory_engine_up saying whether it answered.
type relay struct{ fetch FetchEngine }

func (r relay) Gather() ([]*dto.MetricFamily, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	up := &dto.MetricFamily{Name: proto.String("ai_memory_engine_up"),
		Help: proto.String("1 when the engine answered this scrape's request for its metrics, else 0."),
		Type: dto.MetricType_GAUGE.Enum(), Metric: []*dto.Metric{{Gauge: &dto.Gauge{Value: proto.Float64(0)}}}}
	raw, err := r.fetch(ctx)
	if err != nil {
		return []*dto.MetricFamily{up}, nil // the host's metrics still serve; up says why the engine's do not
	}
	out := make([]*dto.MetricFamily, 0, len(raw)+1)
	for _, b := range raw {
		mf := &dto.MetricFamily{}
		if err := proto.Unmarshal(b, mf); err != nil {
			return []*dto.MetricFamily{up}, nil
		}
		out = append(out, mf)
	}
	up.Metric[0].Gauge.Value = proto.Float64(1)
	return append(out, up), nil
}

// Handler serves the host's metrics and the engine's in the Prometheus
// exposition formats (text, or what the scraper negotiates).
func (h *Host) Handler(engine FetchEngine) http.Handler {
	return promhttp.HandlerFor(prometheus.Gatherers{h.reg, relay{engine}}, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

package e2e

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

var metricsURL = regexp.MustCompile(`msg=metrics url=(\S+)`)

// scrape reads /metrics the way Prometheus does, as text.
func scrape(t *testing.T, url string) (string, map[string]*dto.MetricFamily) {
	t.Helper()
	resp, err := testHTTP.Get(url)
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %s\n%s", resp.Status, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("scrape is not the text format: %v\n%s", err, body)
	}
	return string(body), families
}

// sample is the value of the series of name with exactly labels (k=v
// pairs), -1 when there is none.
func sample(families map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	mf := families[name]
	if mf == nil {
		return -1
	}
	for _, m := range mf.GetMetric() {
		var got []string
		for _, l := range m.GetLabel() {
			got = append(got, l.GetName()+"="+l.GetValue())
		}
		slices.Sort(got)
		want := slices.Sorted(slices.Values(labels))
		if !slices.Equal(got, want) {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	return -1
}

// TestMetricsMoveWithCallsAndShowNoContent: serve --metrics-listen counts
// calls by tool and outcome, refusals by kind, the engine's writes and
// commits and webhook deliveries; no label holds a memory's content or
// title, or a principal.
func TestMetricsMoveWithCallsAndShowNoContent(t *testing.T) {
	e := hookEnv(t)
	const principal = "principal-zq7"
	key := e.token(principal, "--namespace", "*")
	s := e.serve("--metrics-listen", "127.0.0.1:0")
	m := metricsURL.FindStringSubmatch(s.stderr.String())
	if m == nil {
		t.Fatalf("no metrics url logged:\n%s", s.stderr.String())
	}
	url := m[1]
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("metrics url %s", url)
	}
	_, before := scrape(t, url)
	if got := sample(before, "ai_memory_tool_calls_total", "tool=memory_store", "outcome=ok"); got > 0 {
		t.Fatalf("calls before any call: %v", got)
	}
	if sample(before, "ai_memory_engine_up") != 1 {
		t.Fatalf("engine_up = %v", sample(before, "ai_memory_engine_up"))
	}

	c := s.connect(key, nil)
	const title, content = "title-secret-k4", "content-secret-m9 never in a label"
	c.ok("memory_store", map[string]any{"title": title, "content": content})
	c.ok("memory_store", map[string]any{"title": title + " two", "content": content})
	c.fails("memory_get", map[string]any{"id": "ffffffff-nope"}, "not found")
	c.ok("memory_capabilities", map[string]any{})

	// Refusals, each of its own kind.
	if r := s.post(nil, initBody, map[string]string{"Authorization": "Bearer wrong-token-value"}); r.status != http.StatusUnauthorized {
		t.Fatalf("bad token: %d", r.status)
	}
	if r := s.post(nil, initBody, map[string]string{"Host": "elsewhere.example"}); r.status != http.StatusForbidden {
		t.Fatalf("bad Host: %d", r.status)
	}
	if r := s.post(nil, initBody, map[string]string{"Authorization": "Bearer " + key, "Origin": "https://evil.example"}); r.status != http.StatusForbidden {
		t.Fatalf("bad Origin: %d", r.status)
	}

	// A webhook that fails twice, then delivers (a stdio host of the same
	// data dir: the engine, and so its metrics, are shared).
	admin := adminHost(e, "alice")
	recv := newReceiver(t, "", 500, 503)
	admin.ok("memory_subscribe", map[string]any{"url": recv.srv.URL, "events": "memory_store"})
	admin.ok("memory_store", map[string]any{"title": "hooked", "content": "c"})
	eventually(t, 30*time.Second, "the delivery", func() bool { return recv.acceptedCount() == 1 })

	var body string
	var after map[string]*dto.MetricFamily
	eventually(t, 10*time.Second, "the delivery counted", func() bool {
		body, after = scrape(t, url)
		return sample(after, "ai_memory_webhook_deliveries_total", "outcome=delivered") == 1
	})
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"ai_memory_tool_calls_total", []string{"tool=memory_store", "outcome=ok"}, 2},
		{"ai_memory_tool_calls_total", []string{"tool=memory_get", "outcome=error"}, 1},
		{"ai_memory_tool_calls_total", []string{"tool=memory_capabilities", "outcome=ok"}, 1},
		{"ai_memory_tool_call_duration_seconds", []string{"tool=memory_store"}, 2},
		{"ai_memory_http_refusals_total", []string{"kind=auth"}, 1},
		{"ai_memory_http_refusals_total", []string{"kind=host"}, 1},
		{"ai_memory_http_refusals_total", []string{"kind=origin"}, 1},
		{"ai_memory_webhook_deliveries_total", []string{"outcome=retry"}, 2},
		{"ai_memory_webhook_deliveries_total", []string{"outcome=dead"}, 0},
		{"ai_memory_webhook_queue_depth", nil, 0},
		{"ai_memory_memories", nil, 3},
		{"ai_memory_http_sessions", nil, 1},
		{"ai_memory_http_principals", nil, 1},
		{"ai_memory_engine_up", nil, 1},
	} {
		if got := sample(after, c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	// Three memories, a subscription, the audit of the refusals and the
	// deliveries' settlements: many writes, fewer or as many commits.
	writes, commits := sample(after, "ai_memory_engine_writes_total"), sample(after, "ai_memory_engine_commits_total")
	if writes < 4 || commits < 1 || commits > writes || sample(after, "ai_memory_engine_commit_duration_seconds") < 1 {
		t.Errorf("writes %v, commits %v, commit durations %v", writes, commits, sample(after, "ai_memory_engine_commit_duration_seconds"))
	}

	// Nothing a client sent is in the metrics but tool names.
	for _, secret := range []string{title, "content-secret", principal, key, "alice", "wrong-token-value", "elsewhere.example", "evil.example", "ffffffff-nope"} {
		if strings.Contains(body, secret) {
			t.Errorf("the metrics hold %q", secret)
		}
	}
	allowed := map[string]bool{"tool": true, "outcome": true, "kind": true, "le": true}
	for name, mf := range after {
		if !strings.HasPrefix(name, "ai_memory_") {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if !allowed[l.GetName()] {
					t.Errorf("%s has label %s=%q", name, l.GetName(), l.GetValue())
				}
				if l.GetName() == "tool" && !strings.HasPrefix(l.GetValue(), "memory_") {
					t.Errorf("%s tool label %q", name, l.GetValue())
				}
			}
		}
	}
	t.Logf("families: %d, %d bytes", len(after), len(body))
}

// TestMetricsAreOffUnlessAsked: without --metrics-listen nothing listens,
// and a port alone listens on loopback.
func TestMetricsAreOffUnlessAsked(t *testing.T) {
	e := newEnv(t)
	s := e.serve("--auth", "none")
	if metricsURL.MatchString(s.stderr.String()) {
		t.Fatalf("metrics served unasked:\n%s", s.stderr.String())
	}
	port := freePort(t)
	s2 := e.serve("--auth", "none", "--metrics-listen", fmt.Sprint(port))
	m := metricsURL.FindStringSubmatch(s2.stderr.String())
	if m == nil || m[1] != fmt.Sprintf("http://127.0.0.1:%d/metrics", port) {
		t.Fatalf("--metrics-listen %d: %v\n%s", port, m, s2.stderr.String())
	}
	if _, fams := scrape(t, m[1]); sample(fams, "ai_memory_engine_up") != 1 {
		t.Errorf("engine_up = %v", sample(fams, "ai_memory_engine_up"))
	}
}

// freePort is a loopback TCP port free now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

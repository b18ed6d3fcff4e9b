package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"

	"github.com/ai-memory/ai-memory/internal/benchutil"
)

// BenchmarkStoreRecallHTTPvsStdio measures one call at a time, store and
// recall, over stdio and over Streamable HTTP (token auth) against the
// same data dir and engine, so the difference is the transport's (mcp-go's
// client on both).
func BenchmarkStoreRecallHTTPvsStdio(b *testing.B) {
	e := newEnv(b)
	key := e.token("bench", "--namespace", "*")
	s := e.serve()
	httpc := s.connect(key, nil).c
	stdio := startMCPClient(b, "ai-memory", e.binDir+"/ai-memory", e.environ(), "", "mcp").c
	for i := range 2000 {
		if _, err := callText(context.Background(), stdio, "memory_store", benchMemory(i)); err != nil {
			b.Fatal(err)
		}
	}
	// The transports alternate call by call, so both see the same load on
	// a shared machine.
	for _, op := range []string{"store", "recall"} {
		b.Run(op, func(b *testing.B) {
			samples := map[string][]time.Duration{}
			for i := 0; b.Loop(); i++ {
				for _, tr := range []struct {
					name string
					c    *client.Client
				}{{"stdio", stdio}, {"http", httpc}} {
					name, args := "memory_recall", map[string]any{"context": benchQuery(i), "limit": 5}
					if op == "store" {
						name, args = "memory_store", benchMemory(200000+i)
						args["title"] = tr.name + " " + args["title"].(string)
					}
					t0 := time.Now()
					if _, err := callText(context.Background(), tr.c, name, args); err != nil {
						b.Fatal(err)
					}
					samples[tr.name] = append(samples[tr.name], time.Since(t0))
				}
			}
			benchutil.ReportPercentiles(b, samples["stdio"], "stdio")
			benchutil.ReportPercentiles(b, samples["http"], "http")
		})
	}
}

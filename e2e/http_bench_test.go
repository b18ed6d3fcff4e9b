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
// same data dir and engine, so the difference is the transport's.
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
	for _, tr := range []struct {
		name string
		c    *client.Client
	}{{"stdio", stdio}, {"http", httpc}} {
		for _, op := range []string{"store", "recall"} {
			b.Run(tr.name+"/"+op, func(b *testing.B) {
				var samples []time.Duration
				for i := 0; b.Loop(); i++ {
					name, args := "memory_recall", map[string]any{"context": benchQuery(i), "limit": 5}
					if op == "store" {
						name, args = "memory_store", benchMemory(200000+i)
						args["title"] = tr.name + " " + args["title"].(string)
					}
					t0 := time.Now()
					if _, err := callText(context.Background(), tr.c, name, args); err != nil {
						b.Fatal(err)
					}
					samples = append(samples, time.Since(t0))
				}
				benchutil.ReportPercentiles(b, samples, "call")
			})
		}
	}
}

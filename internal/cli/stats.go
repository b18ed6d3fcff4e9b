package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc"

	"github.com/ai-memory/ai-memory/internal/assertion"
	"github.com/ai-memory/ai-memory/internal/engine"
	"github.com/ai-memory/ai-memory/sdk/wire"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

type statsCmd struct {
	JSON bool `help:"Print the engine's counters as JSON."`
	operatorID
}

// Run prints the store's health view (the counters memory_stats reports),
// starting the data dir's engine if it is not running.
func (c *statsCmd) Run(root *rootCmd) error {
	_, conn, err := c.engine(root)
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := conn.Stats(ctx, &aimemoryv1.StatsRequest{})
	if err != nil {
		return err
	}
	if c.JSON {
		out, _ := json.MarshalIndent(st, "", "  ")
		fmt.Println(string(out))
		return nil
	}
	for _, ch := range healthChecks(st) {
		fmt.Printf("%-10s %s\n", ch.Name, ch.Detail)
	}
	if vs, err := conn.VectorStatus(ctx, &aimemoryv1.VectorStatusRequest{}); err == nil {
		_, detail := vectorHealth(vs)
		fmt.Printf("%-10s %s\n", "vectors", detail)
	}
	return nil
}

// runningStats asks a running engine (never starting one) for its counters.
func runningStats(dataDir string) (*aimemoryv1.StatsResponse, error) {
	creds, err := assertion.HostDial(dataDir, "cli:doctor", "")
	if err != nil {
		return nil, err
	}
	conn, err := wire.DialEngineAt(engine.SocketPath(dataDir), creds)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return conn.Stats(ctx, &aimemoryv1.StatsRequest{}, grpc.WaitForReady(false))
}

// healthChecks is the health view of the counters, one line per concern:
// what `ai-memory stats` prints and `ai-memory doctor` adds when the
// engine runs. The index fails when it disagrees with storage.
func healthChecks(st *aimemoryv1.StatsResponse) []check {
	counts := func(l []*aimemoryv1.CountByKey, most int) string {
		var parts []string
		for i, c := range l {
			if i == most {
				parts = append(parts, fmt.Sprintf("… %d more", len(l)-most))
				break
			}
			parts = append(parts, fmt.Sprintf("%s %d", c.GetKey(), c.GetCount()))
		}
		return strings.Join(parts, ", ")
	}
	ok := func(name, detail string) check { return check{Name: name, OK: true, Status: "ok", Detail: detail} }
	index := ok("index", fmt.Sprintf("healthy: %d memories indexed of %d stored, %d terms, %s of postings",
		st.GetIndexed(), st.GetStored(), st.GetIndexTerms(), bytesText(int64(st.GetIndexPostingsBytes()))))
	if st.GetIndexed() != st.GetStored() {
		index = check{Name: "index", Status: "fail", Detail: fmt.Sprintf("%d memories indexed but %d stored: restart the engine to rebuild the index",
			st.GetIndexed(), st.GetStored())}
	}
	return []check{
		ok("memories", fmt.Sprintf("%d (%s); %d expiring within the hour", st.GetTotal(), counts(st.GetByTier(), 3), st.GetExpiringSoon())),
		ok("namespaces", fmt.Sprintf("%d: %s", len(st.GetByNamespace()), counts(st.GetByNamespace(), 8))),
		ok("links", fmt.Sprint(st.GetLinks())),
		index,
		ok("archive", fmt.Sprintf("%d removed memories, %d superseded versions, %s", st.GetArchived(), st.GetVersions(), bytesText(int64(st.GetArchiveSizeBytes())))),
		ok("database", bytesText(st.GetDbSizeBytes())),
	}
}

// bytesText is n in B, KiB or MiB.
func bytesText(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

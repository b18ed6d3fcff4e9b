package cli

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"

	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

type reindexCmd struct {
	Batch uint32  `help:"Memories per embedding request (1-256)." default:"16"`
	Rate  float64 `help:"Requests per second at most; 0 = the endpoint's rate_per_sec (default 10)."`
	Quiet bool    `help:"No progress bar."`
	operatorID
}

// Run backfills vectors: memories never embedded, embedded by another
// model, or edited since. It asks the engine for one batch at a time, so
// an interrupted run loses nothing and the next one resumes where the
// missing vectors are; memories that look like they hold a secret are
// reported and never sent.
func (c *reindexCmd) Run(root *rootCmd) error {
	if c.Batch < 1 || c.Batch > 256 {
		return &exitError{code: 2, msg: "ai-memory reindex: --batch must be from 1 to 256"}
	}
	_, conn, err := c.engine(root)
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx := context.Background()
	st, err := conn.VectorStatus(ctx, &aimemoryv1.VectorStatusRequest{})
	if err != nil {
		return err
	}
	if !st.GetConfigured() {
		return &exitError{code: 1, msg: "ai-memory reindex: no embedding endpoint configured ([models.embeddings] in the data dir's engine.toml)"}
	}
	rate := c.Rate
	if rate <= 0 {
		rate = st.GetRatePerSec()
	}
	interval := time.Duration(float64(time.Second) / rate)
	total := st.GetMemories() - st.GetWithVector()
	var done, withheld uint64
	start := time.Now()
	bar := progress(int64(total), "reindexing")
	if c.Quiet {
		bar = progressbar.DefaultSilent(int64(total), "reindexing")
	}
	after := ""
	next := time.Now()
	for {
		if wait := time.Until(next); wait > 0 {
			time.Sleep(wait) // the rate limit: a product's pacing, not a test's wait
		}
		next = time.Now().Add(interval)
		resp, err := conn.Backfill(ctx, &aimemoryv1.BackfillRequest{Batch: c.Batch, After: after})
		if err != nil {
			_ = bar.Exit()
			return fmt.Errorf("reindex stopped after %d memories (run it again to resume): %w", done, err)
		}
		done += uint64(resp.GetEmbedded())
		withheld += uint64(len(resp.GetWithheld()))
		for _, id := range resp.GetWithheld() {
			fmt.Fprintf(os.Stderr, "\nwithheld %s: it looks like it holds a secret, so it is never sent\n", id)
		}
		_ = bar.Set64(int64(done + withheld))
		after = resp.GetNextAfter()
		if after == "" {
			break
		}
	}
	_ = bar.Finish()
	secs := time.Since(start).Seconds()
	fmt.Printf("reindexed %d memories with %s in %.1fs (%.0f/s); %d withheld\n", done, st.GetModel(), secs, float64(done)/max(secs, 1e-9), withheld)
	return nil
}

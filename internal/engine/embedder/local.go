package embedder

import (
	"context"
	"log/slog"

	"github.com/ai-memory/ai-memory/internal/embed"
	"github.com/ai-memory/ai-memory/internal/engine/keyword"
	"github.com/ai-memory/ai-memory/internal/engine/settings"
)

// Local is a model the engine runs itself (package embed).
type Local struct {
	Name  string // what vectors are tagged with
	Model *embed.Model
	Bytes int64 // its files on disk, for doctor and stats
}

// localDefaults are the local model's settings, which an endpoint's come
// from engine.toml. MinSimilarity, the blend's floor, was chosen on the
// retrieval benchmark (docs/RETRIEVAL.md "Hybrid recall"): MiniLM's
// answers to questions asked in other words often score 0.2 to 0.4.
var localDefaults = settings.Endpoint{
	MinSimilarity:      LocalMinSimilarity,
	DuplicateThreshold: 0.9,
	Concurrency:        1,    // one background worker, at low priority
	RatePerSec:         1000, // reindex has no endpoint to spare
}

// LocalMinSimilarity is the local model's min_similarity.
const LocalMinSimilarity = 0.1

// backfillBatch is how many memories one background step embeds (about a
// third of a second of one core for memories of 50 tokens).
const backfillBatch = 8

// NewLocal is the embedder of a local model.
func NewLocal(l Local, st Store, log *slog.Logger, hold func() func()) *Embedder {
	if hold == nil {
		hold = func() func() { return func() {} }
	}
	return &Embedder{enc: localEncoder{l}, cfg: localDefaults, st: st, log: log, hold: hold, local: true, modelBytes: l.Bytes}
}

type localEncoder struct{ l Local }

func (e localEncoder) Model() string { return e.l.Name }

func (e localEncoder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return e.l.Model.Embed(texts)
}

// UnreadShare is the share of text's content words (function words and
// punctuation aside) that m has no vocabulary entry for: names,
// identifiers and coined words it reads only in pieces, about which its
// vector says little. Hybrid recall gives the vectors less say the larger
// it is (vecset.Blend).
func UnreadShare(m *embed.Model, text string) float64 {
	words, unread := 0, 0
	for _, w := range m.Words(text) {
		terms := keyword.Terms(nil, w)
		if len(terms) == 0 || keyword.IsFunctionWord(terms[0]) {
			continue
		}
		words++
		if !m.Knows(w) {
			unread++
		}
	}
	if words == 0 {
		return 0
	}
	return float64(unread) / float64(words)
}

// UnreadShare is the local model's UnreadShare of text; −1 (not known)
// for an endpoint, whose vocabulary the engine does not have.
func (e *Embedder) UnreadShare(text string) float64 {
	if e == nil {
		return -1
	}
	if l, ok := e.enc.(localEncoder); ok {
		return UnreadShare(l.l.Model, text)
	}
	return -1
}

// backfillLocal embeds every memory without a vector by the local model, a
// batch at a time at low priority, until none is left or ctx ends. What is
// missing is read from the store each time, so an engine that stops midway
// resumes at its next start; the engine is kept up only while a batch is
// in hand.
func (e *Embedder) backfillLocal(ctx context.Context) {
	lowPriority()
	after, done := "", 0
	for ctx.Err() == nil {
		release := e.hold()
		ms, err := e.st.MissingVectors(ctx, e.enc.Model(), after, backfillBatch)
		if err == nil && len(ms) > 0 {
			_, err = e.embed(ctx, ms)
			after = ms[len(ms)-1].GetId()
			done += len(ms)
		}
		release()
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			e.log.Warn("background embedding: a batch failed; it is retried at the next start", "after", after, "err", err)
		case len(ms) < backfillBatch:
			if done > 0 {
				e.log.Info("background embedding done", "model", e.enc.Model(), "embedded", done)
			}
			return
		}
	}
}

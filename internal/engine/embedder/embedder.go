// Package embedder is the engine's use of an embedding model: the data
// dir's endpoint ([models.embeddings]) or, without one, a local model the
// engine runs itself (local.go). Memories are embedded after they are
// written, in the background (a store never waits for it or fails because
// of it); queries are embedded for hybrid recall; `ai-memory reindex`
// drives a backfill, which the local model also runs on its own at low
// priority. Text that looks like it holds a secret is never sent to an
// endpoint. An endpoint that fails is not asked again for a while (the
// breaker), so a recall pays a failing endpoint's timeout at most once per
// cool-down, and every failure is logged and reported as the reason the
// keyword method was used.
package embedder

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ai-memory/ai-memory/internal/engine/events"
	"github.com/ai-memory/ai-memory/internal/engine/models"
	"github.com/ai-memory/ai-memory/internal/engine/settings"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Errors of Backfill.
var (
	ErrNotConfigured = errors.New("no embedding endpoint configured ([models.embeddings] in the data dir's engine.toml)")
	ErrUnavailable   = errors.New("embedding endpoint failed")
)

// Store is what the embedder needs of the backend.
type Store interface {
	storage.Vectors
	GetMemories(context.Context, *aimemoryv1.GetMemoriesRequest) (*aimemoryv1.GetMemoriesResponse, error)
}

// Encoder turns texts into vectors: an endpoint's client or the local model.
type Encoder interface {
	Model() string
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Embedder is nil-safe: a nil *Embedder is "not configured".
type Embedder struct {
	enc  Encoder
	cfg  settings.Endpoint // the endpoint's settings, or the local model's defaults
	st   Store
	log  *slog.Logger
	hold func() func()

	local      bool  // the engine's own model: nothing leaves the machine
	modelBytes int64 // the local model's files

	breaker models.Breaker
	mu      sync.Mutex
	dims    int

	queued   atomic.Int32
	withheld sync.Map // ids never sent: they look like they hold a secret
}

// New returns the embedder of an endpoint, or nil when none is configured.
// hold keeps the engine from exiting while queued work remains (nil: no hold).
func New(cfg *settings.Endpoint, st Store, log *slog.Logger, hold func() func()) *Embedder {
	if cfg == nil {
		return nil
	}
	if hold == nil {
		hold = func() func() { return func() {} }
	}
	return &Embedder{enc: models.New(*cfg), cfg: *cfg, st: st, log: log, hold: hold}
}

// Model is the configured model ("" when none).
func (e *Embedder) Model() string {
	if e == nil {
		return ""
	}
	return e.enc.Model()
}

// DuplicateThreshold is the configured cosine threshold for duplicates.
func (e *Embedder) DuplicateThreshold() float64 {
	if e == nil || e.cfg.DuplicateThreshold == 0 {
		return 0.9
	}
	return e.cfg.DuplicateThreshold
}

// MinSimilarity is the cosine a vector candidate of hybrid recall needs
// (0: the engine's default).
func (e *Embedder) MinSimilarity() float64 {
	if e == nil {
		return 0
	}
	return e.cfg.MinSimilarity
}

// RatePerSec is how many backfill requests a second a reindex may send.
func (e *Embedder) RatePerSec() float64 {
	if e == nil || e.cfg.RatePerSec == 0 {
		return 10
	}
	return e.cfg.RatePerSec
}

// Run embeds each stored or updated memory after its commit, until ctx
// ends. Events it falls behind on are lost to it (the memories stay
// without a vector until a reindex), never to the write.
func (e *Embedder) Run(ctx context.Context, ev *events.Broadcaster) {
	if e == nil || ev == nil {
		return
	}
	sub := ev.Subscribe(4096)
	defer sub.Close()
	type job struct {
		id string
		at time.Time // when the write was seen
	}
	work := make(chan job, 4096)
	workers := max(1, e.cfg.Concurrency)
	if e.cfg.Concurrency == 0 {
		workers = 2
	}
	var wg sync.WaitGroup
	if e.local {
		wg.Go(func() { e.backfillLocal(ctx) })
	}
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if e.local {
				lowPriority() // the write path's embeddings yield to queries
			}
			for j := range work {
				if !e.local || afterWriteSettles(ctx, j.at) {
					e.embedOne(ctx, j.id)
				}
				e.queued.Add(-1)
			}
		}()
	}
	defer wg.Wait()
	defer close(work)
	for {
		select {
		case <-ctx.Done():
			return
		case evt := <-sub.C:
			switch evt.GetType() {
			case storage.EventStore, storage.EventUpdate, storage.EventRestore, storage.EventPromote, storage.EventConsolidated:
			default: // removals drop their vector in their own transaction
				continue
			}
			select {
			case work <- job{evt.GetMemoryId(), time.Now()}:
				e.queued.Add(1)
			default: // behind: a reindex catches up
			}
		}
	}
}

// writeSettle is how long after a write the local model starts embedding
// it: the event comes at the commit, before the write's answer has gone
// back through the engine, plugin and host, and a model started at once
// takes the CPU that answer needs (issue 26: a store costs no more with the
// model loaded). A memory behind others waits no longer than they took.
const writeSettle = 50 * time.Millisecond

// afterWriteSettles waits until writeSettle after at; false if ctx ended.
func afterWriteSettles(ctx context.Context, at time.Time) bool {
	d := time.Until(at.Add(writeSettle))
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func (e *Embedder) embedOne(ctx context.Context, id string) {
	if e.coolingDown() {
		return
	}
	release := e.hold()
	defer release()
	resp, err := e.st.GetMemories(ctx, &aimemoryv1.GetMemoriesRequest{Ids: []string{id}})
	if err != nil || len(resp.GetMemories()) == 0 {
		return
	}
	m := resp.GetMemories()[0]
	if e.st.HasVector(id, e.enc.Model()) {
		return // a tags-only update: the text embedded is unchanged
	}
	if _, err := e.embed(ctx, []*aimemoryv1.Memory{m}); err != nil {
		e.log.Warn("embedding on write failed; the memory is stored without a vector until a reindex", "id", id, "err", err)
	}
}

// embed sends the memories without a secret in one request (the local
// model takes them all) and stores their vectors; it returns the ids
// withheld.
func (e *Embedder) embed(ctx context.Context, ms []*aimemoryv1.Memory) (withheld []string, err error) {
	var texts []string
	var send []*aimemoryv1.Memory
	for _, m := range ms {
		text := m.GetTitle() + " " + m.GetContent()
		if kinds := models.Secrets(text); len(kinds) > 0 && !e.local {
			withheld = append(withheld, m.GetId())
			e.withheld.Store(m.GetId(), true)
			e.log.Info("not sent to the embedding endpoint: looks like it holds a secret", "id", m.GetId(), "kinds", strings.Join(kinds, ", "))
			continue
		}
		texts = append(texts, text)
		send = append(send, m)
	}
	if len(texts) == 0 {
		return withheld, nil
	}
	vs, err := e.enc.Embed(ctx, texts)
	if err == nil {
		err = e.checkDims(vs)
	}
	if err != nil {
		e.fail(err)
		return withheld, err
	}
	e.ok()
	puts := make([]storage.VectorPut, len(send))
	for i, m := range send {
		puts[i] = storage.VectorPut{ID: m.GetId(), Text: texts[i], Vector: vs[i]}
	}
	_, err = e.st.PutVectors(ctx, e.enc.Model(), puts)
	return withheld, err
}

// checkDims: every vector has the dimension of the first this engine saw
// (a model answering with another dimension is garbage for this index).
func (e *Embedder) checkDims(vs [][]float32) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, v := range vs {
		if e.dims == 0 {
			e.dims = len(v)
		}
		if len(v) != e.dims {
			return fmt.Errorf("embeddings: %d dimensions, want %d as before", len(v), e.dims)
		}
	}
	return nil
}

func (e *Embedder) fail(err error) {
	e.breaker.Fail(err)
	e.log.Warn("embedding endpoint failed; keyword methods are used meanwhile", "err", err, "retry_after", models.CoolDown)
}

func (e *Embedder) ok() { e.breaker.OK() }

// coolingDown: the endpoint failed less than models.CoolDown ago
// (queries and background embedding wait; a backfill always tries).
func (e *Embedder) coolingDown() bool { return e.breaker.Open() != "" }

// reason is why a query is not embedded now, or "".
func (e *Embedder) reason() string {
	if e == nil {
		return "no embedding endpoint configured"
	}
	if why := e.breaker.Open(); why != "" {
		return "embedding endpoint " + why
	}
	return ""
}

// EmbedQuery is text's vector and the model, or the reason there is none.
func (e *Embedder) EmbedQuery(ctx context.Context, text string) ([]float32, string, string) {
	if r := e.reason(); r != "" {
		return nil, "", r
	}
	if kinds := models.Secrets(text); len(kinds) > 0 && !e.local {
		return nil, "", "not sent to the embedding endpoint: it looks like it holds a secret (" + strings.Join(kinds, ", ") + ")"
	}
	vs, err := e.enc.Embed(ctx, []string{text})
	if err == nil {
		err = e.checkDims(vs)
	}
	if err != nil {
		e.fail(err)
		return nil, "", "embedding endpoint failed (" + err.Error() + ")"
	}
	e.ok()
	return vs[0], e.enc.Model(), ""
}

// Status reports configuration, the last outcome and coverage.
func (e *Embedder) Status() *aimemoryv1.VectorStatusResponse {
	if e == nil {
		return &aimemoryv1.VectorStatusResponse{}
	}
	mem, cur, other := e.st.VectorStatus(e.enc.Model())
	lastErr, lastErrAt := e.breaker.Last()
	e.mu.Lock()
	defer e.mu.Unlock()
	r := &aimemoryv1.VectorStatusResponse{
		Configured: true, Model: e.enc.Model(), LastError: lastErr, Source: "endpoint", ModelBytes: uint64(e.modelBytes),
		Memories: uint64(mem), WithVector: uint64(cur), OtherModel: uint64(other),
		Dimensions: uint32(e.dims), Queued: uint32(max(0, e.queued.Load())), Withheld: e.withheldCount(),
		RatePerSec: e.RatePerSec(),
	}
	if e.local {
		r.Source = "local"
	}
	if lastErr != "" {
		r.LastErrorAt = lastErrAt.UnixNano()
	}
	return r
}

func (e *Embedder) withheldCount() uint64 {
	var n uint64
	e.withheld.Range(func(_, _ any) bool { n++; return true })
	return n
}

// Backfill embeds up to batch memories without a vector by the model,
// after the id after.
func (e *Embedder) Backfill(ctx context.Context, batch int, after string) (*aimemoryv1.BackfillResponse, error) {
	if e == nil {
		return nil, ErrNotConfigured
	}
	ms, err := e.st.MissingVectors(ctx, e.enc.Model(), after, batch)
	if err != nil {
		return nil, err
	}
	resp := &aimemoryv1.BackfillResponse{}
	if len(ms) > 0 {
		withheld, err := e.embed(ctx, ms)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		resp.Withheld = withheld
		resp.Embedded = uint32(len(ms) - len(withheld))
		if len(ms) == batch {
			resp.NextAfter = ms[len(ms)-1].GetId()
		}
	}
	mem, cur, _ := e.st.VectorStatus(e.enc.Model())
	resp.Remaining = uint64(max(0, mem-cur))
	return resp, nil
}

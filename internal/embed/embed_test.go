package embed

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/benchutil"
	"github.com/ai-memory/ai-memory/internal/embed/embedtest"
)

type reference struct {
	Model        string `json:"model"`
	MaxSeqLength int    `json:"max_seq_length"`
	Cases        []struct {
		Text   string    `json:"text"`
		IDs    []int32   `json:"ids"`
		Vector []float32 `json:"vector"`
	} `json:"cases"`
}

func loadReference(t testing.TB) *reference {
	t.Helper()
	data, err := os.ReadFile("testdata/reference.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref reference
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.Cases) < 30 {
		t.Fatalf("reference.json: %d cases, want at least 30", len(ref.Cases))
	}
	return &ref
}

var (
	shared     *Model
	sharedErr  error
	sharedOnce sync.Once
)

// model loads the real model once per test binary.
func model(t testing.TB) *Model {
	t.Helper()
	dir := embedtest.ModelDir(t)
	sharedOnce.Do(func() { shared, sharedErr = Load(dir) })
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return shared
}

// TestTokenizerMatchesReference: the ids of Hugging Face's tokenizers for
// every reference sentence (cut to the model's limit as the reference
// model cuts them).
func TestTokenizerMatchesReference(t *testing.T) {
	ref := loadReference(t)
	m := model(t)
	if m.MaxTokens() != ref.MaxSeqLength {
		t.Fatalf("max tokens %d, reference %d", m.MaxTokens(), ref.MaxSeqLength)
	}
	for i, c := range ref.Cases {
		want := c.IDs
		if len(want) > ref.MaxSeqLength {
			want = append(slices.Clone(want[:ref.MaxSeqLength-1]), want[len(want)-1])
		}
		if got := m.Tokenize(c.Text); !slices.Equal(got, want) {
			t.Errorf("case %d %.40q:\n got  %v\n want %v", i, c.Text, m.tok.Tokens(got), m.tok.Tokens(want))
		}
	}
}

// TestMatchesReference: cosine ≥ 0.999 with sentence-transformers' vector
// for each sentence, embedded alone and all in one batch.
func TestMatchesReference(t *testing.T) {
	ref := loadReference(t)
	m := model(t)
	texts := make([]string, len(ref.Cases))
	for i, c := range ref.Cases {
		texts[i] = c.Text
	}
	batch, err := m.Embed(texts)
	if err != nil {
		t.Fatal(err)
	}
	worst := 1.0
	for i, c := range ref.Cases {
		alone, err := m.Embed([]string{c.Text})
		if err != nil {
			t.Fatal(err)
		}
		for _, got := range [][]float32{alone[0], batch[i]} {
			cos := cosine(got, c.Vector)
			worst = min(worst, cos)
			if cos < 0.999 {
				t.Errorf("case %d %.40q: cosine %.5f with the reference, want ≥ 0.999", i, c.Text, cos)
			}
		}
	}
	t.Logf("lowest cosine with the reference over %d sentences: %.7f", len(ref.Cases), worst)
}

func cosine(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	if aa == 0 || bb == 0 {
		return 0
	}
	return ab / math.Sqrt(aa*bb)
}

// TestMeaning: the three memories and questions of issue 26, by meaning.
func TestMeaning(t *testing.T) {
	m := model(t)
	memories := []string{
		"Deploy day: Deploys go out on Thursdays after the 2pm standup; never on Fridays",
		"DB choice: We chose PostgreSQL 16 over MySQL because of logical replication and JSONB",
		"Go formatting: Use gofumpt, not gofmt, in CI for the Go services",
	}
	questions := map[string]int{"when can I ship to production?": 0, "which database do we use and why": 1, "postgres": 1}
	mv, err := m.Embed(memories)
	if err != nil {
		t.Fatal(err)
	}
	for q, want := range questions {
		qv, err := m.Embed([]string{q})
		if err != nil {
			t.Fatal(err)
		}
		best := 0
		for i := range mv {
			if cosine(qv[0], mv[i]) > cosine(qv[0], mv[best]) {
				best = i
			}
		}
		if best != want {
			t.Errorf("%q: nearest is %.30q, want %.30q", q, memories[best], memories[want])
		}
	}
}

func TestLoadRefusesWhatItCannotRun(t *testing.T) {
	dir := t.TempDir()
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "config.json") {
		t.Fatalf("empty dir: %v, want an error naming config.json", err)
	}
	os.WriteFile(dir+"/config.json", []byte(`{"model_type":"roberta","hidden_act":"gelu"}`), 0o644)
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "model_type") {
		t.Fatalf("roberta: %v, want an error naming model_type", err)
	}
}

// cpuTime is the process's user and system CPU time: on a shared machine
// the figure a quiet core would show, where wall time counts waiting.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// text is n tokens of plain English for m (n counts [CLS] and [SEP]).
func text(t testing.TB, m *Model, n int) string {
	words := strings.Fields("the team decided to move the billing service to postgres because logical replication and jsonb support make the nightly export simpler while the old mysql cluster keeps running for reports until the migration is done next quarter")
	var out []string
	for i := 0; len(m.Tokenize(strings.Join(out, " "))) < n; i++ {
		out = append(out, words[i%len(words)])
	}
	for len(m.Tokenize(strings.Join(out, " "))) > n { // a word of several tokens overshot: pad with one-token words
		out = out[:len(out)-1]
		for len(m.Tokenize(strings.Join(out, " "))) < n {
			out = append(out, "the")
		}
	}
	s := strings.Join(out, " ")
	if got := len(m.Tokenize(s)); got != n {
		t.Fatalf("made %d tokens, want %d", got, n)
	}
	return s
}

// BenchmarkEmbed: a 12-token query, a 50-token memory and a text at the
// 256-token limit, one at a time
// (run with -cpu 1). Besides wall-clock percentiles it reports the CPU
// time per embedding (cpu-ms/op), which is what a quiet core would take
// when the machine is shared.
func BenchmarkEmbed(b *testing.B) {
	m := model(b)
	for _, n := range []int{12, 50, 256} {
		b.Run(fmt.Sprintf("tokens=%d", n), func(b *testing.B) {
			s := text(b, m, n)
			m.Embed([]string{s}) // warm: weights paged in, scratch allocated
			lat := make([]time.Duration, 0, b.N)
			c0 := cpuTime()
			b.ResetTimer()
			for b.Loop() {
				t0 := time.Now()
				if _, err := m.Embed([]string{s}); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			cpu := cpuTime() - c0
			benchutil.ReportPercentiles(b, lat, "embed")
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
			b.ReportMetric(float64(b.N)/cpu.Seconds(), "embeds/cpu-s")
		})
	}
}

// BenchmarkBackfill embeds 50-token memories in batches of 8, as the
// engine's background backfill does.
func BenchmarkBackfill(b *testing.B) {
	m := model(b)
	batch := make([]string, 8)
	for i := range batch {
		batch[i] = text(b, m, 50)
	}
	m.Embed(batch)
	c0 := cpuTime()
	b.ResetTimer()
	for b.Loop() {
		if _, err := m.Embed(batch); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	cpu := cpuTime() - c0
	b.ReportMetric(float64(len(batch)*b.N)/b.Elapsed().Seconds(), "memories/s")
	b.ReportMetric(float64(len(batch)*b.N)/cpu.Seconds(), "memories/cpu-s")
}

// BenchmarkResidentMemory is the resident memory the model adds to a
// process: loaded, then used on a query and a full-length text (every
// weight page touched, the largest scratch allocated). Linux only.
func BenchmarkResidentMemory(b *testing.B) {
	dir := embedtest.ModelDir(b)
	for b.Loop() {
		runtime.GC()
		before := rss(b)
		m, err := Load(dir)
		if err != nil {
			b.Fatal(err)
		}
		long := strings.Repeat("memory recall by meaning ", 200)
		if _, err := m.Embed([]string{"which database do we use and why", long, long}); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(rss(b)-before)/(1<<20), "rss-added-MiB")
		m.Close()
	}
}

// rss is the process's resident set size (VmRSS) in bytes.
func rss(b *testing.B) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Skip("no /proc/self/status: resident memory is measured on Linux")
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	b.Fatal("no VmRSS")
	return 0
}

package e2e

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unicode"
)

// openAI is a local server speaking the OpenAI-compatible protocol the
// engine's model client uses, with a deterministic embedder (hashed bags
// of crudely stemmed words: texts sharing words point the same way) and
// switchable failures.
type openAI struct {
	*httptest.Server
	dims     atomic.Int32
	mode     atomic.Value // "", "500", "hang", "baddims", "cut"
	requests atomic.Int64
	inputs   sync.Map // every text sent, for the secret check
	hang     chan struct{}
	// hung counts requests held by "hang", gaveUp those of them the
	// client stopped waiting for.
	hung, gaveUp atomic.Int64
}

func newOpenAI(t testing.TB, dims int) *openAI {
	o := &openAI{hang: make(chan struct{})}
	o.dims.Store(int32(dims))
	o.mode.Store("")
	o.Server = httptest.NewServer(http.HandlerFunc(o.serve))
	t.Cleanup(func() { close(o.hang); o.Close() })
	return o
}

func (o *openAI) set(mode string) { o.mode.Store(mode) }

func (o *openAI) serve(w http.ResponseWriter, r *http.Request) {
	o.requests.Add(1)
	switch o.mode.Load().(string) {
	case "500":
		http.Error(w, "model crashed", http.StatusInternalServerError)
		return
	case "hang":
		o.hung.Add(1)
		select {
		case <-r.Context().Done():
			o.gaveUp.Add(1)
		case <-o.hang:
		}
		return
	case "cut":
		hj, _ := w.(http.Hijacker)
		conn, buf, _ := hj.Hijack()
		buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 4000\r\n\r\n{\"data\":[{\"index\":0,\"embedding\":[0.1,")
		buf.Flush()
		conn.Close()
		return
	}
	var req struct {
		Input    []string `json:"input"`
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	switch r.URL.Path {
	case "/v1/embeddings":
		dims := int(o.dims.Load())
		if o.mode.Load().(string) == "baddims" {
			dims = 3
		}
		var data []map[string]any
		for i, in := range req.Input {
			o.inputs.Store(in, true)
			data = append(data, map[string]any{"index": i, "embedding": testEmbedding(in, dims)})
		}
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
	case "/v1/chat/completions":
		prompt := ""
		if len(req.Messages) > 0 {
			prompt = req.Messages[0].Content
		}
		o.inputs.Store(prompt, true)
		json.NewEncoder(w).Encode(map[string]any{"choices": []map[string]any{{"message": map[string]any{"role": "assistant", "content": chatReply(prompt)}}}})
	default:
		http.NotFound(w, r)
	}
}

// chatReply is the test model: it answers each of the power family's
// prompts recognisably.
func chatReply(prompt string) string {
	switch {
	case strings.Contains(prompt, "lowercase tags"):
		return "- Billing\n2. deploys\n#Fridays\n"
	case strings.Contains(prompt, "search terms"):
		return "invoices\npayments\n"
	case strings.Contains(prompt, "Summarise these notes"):
		return "Billing deploys: frozen on Fridays, according to one note."
	case strings.Contains(prompt, "contradict"):
		return "Yes."
	}
	return "?"
}

func (o *openAI) saw(substr string) bool {
	found := false
	o.inputs.Range(func(k, _ any) bool {
		found = found || strings.Contains(k.(string), substr)
		return !found
	})
	return found
}

// testEmbedding hashes each word's first five letters into a signed
// dimension, weighted by 1/sqrt of the word's repeats, then normalises.
func testEmbedding(text string, dims int) []float64 {
	v := make([]float64, dims)
	counts := map[string]int{}
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(w) < 3 {
			continue
		}
		if r := []rune(w); len(r) > 5 {
			w = string(r[:5])
		}
		counts[w]++
	}
	for w, n := range counts {
		h := fnv.New64a()
		h.Write([]byte(w))
		x := h.Sum64()
		sign := 1.0
		if x&1 == 1 {
			sign = -1
		}
		v[int((x>>1)%uint64(dims))] += sign * math.Sqrt(float64(n))
	}
	var s float64
	for _, x := range v {
		s += x * x
	}
	if s == 0 {
		v[0] = 1
		return v
	}
	for i := range v {
		v[i] /= math.Sqrt(s)
	}
	return v
}

// chatConfig is the config.toml section pointing the chat endpoint at o.
func chatConfig(o *openAI, timeout string) string {
	return fmt.Sprintf("[models.chat]\nbase_url = %q\nmodel = \"test-chat\"\ntimeout = %q\n", o.URL, timeout)
}

// embeddingsConfig is the config.toml section pointing at o.
func embeddingsConfig(o *openAI, timeout string) string {
	return fmt.Sprintf("[models.embeddings]\nbase_url = %q\nmodel = \"test-embed\"\ntimeout = %q\nconcurrency = 4\nrate_per_sec = 1000\n", o.URL, timeout)
}

package corefamily

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ai-memory/ai-memory/sdk/sdktest"
)

// harness calls the core tools the way the host does (sdktest.Family),
// over a real engine on a temporary data dir.
type harness struct {
	*sdktest.Family
	t   *testing.T
	eng *sdktest.Engine
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	eng := sdktest.StartEngine(t)
	return &harness{Family: sdktest.NewFamily(t, "core", Families(eng)).WithEngine(eng), t: t, eng: eng}
}

// store stores a memory from extra JSON fields and returns its full id.
func (h *harness) store(title, content, extra string) string {
	h.t.Helper()
	args := map[string]any{"title": title, "content": content, "format": "json"}
	if extra != "" {
		dec := json.NewDecoder(strings.NewReader(extra))
		dec.UseNumber() // keep large numbers exact
		if err := dec.Decode(&args); err != nil {
			h.t.Fatal(err)
		}
		args["title"], args["content"] = title, content
	}
	raw, _ := json.Marshal(args)
	var res storeResult
	h.OK("memory_store", string(raw), &res)
	if res.ID == "" {
		h.t.Fatalf("store %q: no id", title)
	}
	return res.ID
}

// memory is a JSON memory as get and the json format show it.
type memory struct {
	ID             string          `json:"id"`
	Title          string          `json:"title"`
	Tier           string          `json:"tier"`
	Namespace      string          `json:"namespace"`
	Content        string          `json:"content"`
	Tags           []string        `json:"tags"`
	Priority       int             `json:"priority"`
	Confidence     float64         `json:"confidence"`
	Source         string          `json:"source"`
	AccessCount    int             `json:"access_count"`
	CreatedAt      string          `json:"created_at"`
	UpdatedAt      string          `json:"updated_at"`
	LastAccessedAt string          `json:"last_accessed_at"`
	ExpiresAt      string          `json:"expires_at"`
	Metadata       map[string]any  `json:"metadata"`
	Score          *float64        `json:"score"`
	Links          json.RawMessage `json:"links"`
}

func (h *harness) get(id string) memory {
	h.t.Helper()
	var m memory
	h.OK("memory_get", `{"id":"`+id+`","format":"json"}`, &m)
	return m
}

func ids(ms []memory) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}

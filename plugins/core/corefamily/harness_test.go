package corefamily

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"

	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
	"github.com/ai-memory/ai-memory/sdk"
	"github.com/ai-memory/ai-memory/sdk/sdktest"
)

// harness calls the core tools the way the host does: through the Family
// server, over a real engine on a temporary data dir.
type harness struct {
	t     *testing.T
	srv   aimemoryv1.FamilyServer
	agent string // the session identity the host resolved
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	eng := sdktest.StartEngine(t)
	srv, err := sdk.NewFamilyServer("core", "test", Families(eng), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return &harness{t: t, srv: srv, agent: "ai:test"}
}

// call runs tool with JSON args and returns the result text and isError.
func (h *harness) call(tool, args string) (string, bool) {
	h.t.Helper()
	resp, err := h.srv.Call(context.Background(), &aimemoryv1.CallRequest{
		Tool:          tool,
		ArgumentsJson: []byte(args),
		Context:       &aimemoryv1.CallContext{AgentId: h.agent, SessionId: "s1", ClientName: "test"},
	})
	if err != nil {
		h.t.Fatalf("%s %s: transport error %v", tool, args, err)
	}
	return resp.GetText(), resp.GetIsError()
}

// ok runs a call that must succeed and returns its text.
func (h *harness) ok(tool, args string) string {
	h.t.Helper()
	text, isErr := h.call(tool, args)
	if isErr {
		h.t.Fatalf("%s %s: %s", tool, args, text)
	}
	return text
}

// okJSON runs a call that must succeed and decodes its JSON result into v.
func (h *harness) okJSON(tool, args string, v any) {
	h.t.Helper()
	text := h.ok(tool, args)
	if err := json.Unmarshal([]byte(text), v); err != nil {
		h.t.Fatalf("%s: result is not the expected JSON: %v\n%s", tool, err, text)
	}
}

// toon runs a call that must succeed and returns its TOON text. While the
// SDK JSON-encodes text results, the TOON arrives as a JSON string.
func (h *harness) toon(tool, args string) string {
	h.t.Helper()
	text := h.ok(tool, args)
	if strings.HasPrefix(text, `"`) {
		var s string
		if err := json.Unmarshal([]byte(text), &s); err != nil {
			h.t.Fatal(err)
		}
		return s
	}
	return text
}

// fails runs a call that must be a tool error containing want.
func (h *harness) fails(tool, args, want string) {
	h.t.Helper()
	text, isErr := h.call(tool, args)
	if !isErr {
		h.t.Fatalf("%s %s: succeeded (%s); want error %q", tool, args, text, want)
	}
	if !strings.Contains(text, want) {
		h.t.Fatalf("%s %s: error %q; want it to contain %q", tool, args, text, want)
	}
}

// store stores a memory from extra JSON fields and returns its id.
func (h *harness) store(title, content, extra string) string {
	h.t.Helper()
	args := map[string]any{"title": title, "content": content}
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
	h.okJSON("memory_store", string(raw), &res)
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
	h.okJSON("memory_get", `{"id":"`+id+`"}`, &m)
	return m
}

func ids(ms []memory) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}

package embedder

import (
	"testing"

	"github.com/ai-memory/ai-memory/internal/embed"
	"github.com/ai-memory/ai-memory/internal/embed/embedtest"
	"github.com/ai-memory/ai-memory/internal/engine/settings"
)

// TestUnreadShare with the real model: function words and punctuation do
// not count; a coined word or a name the vocabulary holds only in pieces
// does; an endpoint's model, whose vocabulary is not known, reports −1.
func TestUnreadShare(t *testing.T) {
	m, err := embed.Load(embedtest.ModelDir(t))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for text, want := range map[string]float64{
		"which database do we use and why?":                       0,       // database, use
		"what do we know about viquoumoning and how was it done?": 1.0 / 3, // know, viquoumoning, done
		"Use gofumpt, not gofmt":                                  2.0 / 3, // use, gofumpt, gofmt
		"the and of":                                              0,       // function words only
		"":                                                        0,
	} {
		if got := UnreadShare(m, text); got != want {
			t.Errorf("UnreadShare(%q) = %.3f, want %.3f", text, got, want)
		}
	}
	local := NewLocal(Local{Name: "m", Model: m}, nil, nil, nil)
	if got := local.UnreadShare("gofumpt"); got != 1 {
		t.Errorf("local embedder: %v, want 1", got)
	}
	var endpoint *Embedder // not configured
	if got := endpoint.UnreadShare("gofumpt"); got != -1 {
		t.Errorf("no embedder: %v, want -1", got)
	}
	endpoint = New(&settings.Endpoint{BaseURL: "http://127.0.0.1:1", Model: "m", Timeout: "2s"}, nil, nil, nil)
	if got := endpoint.UnreadShare("gofumpt"); got != -1 {
		t.Errorf("endpoint: %v, want -1", got)
	}
}

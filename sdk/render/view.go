package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// ContentCut is how many bytes of content recall, search and list carry:
// an agent recalls in order to read, yet one long memory must not flood
// the context. memory_get returns the rest.
const ContentCut = 2000

// CutContent shortens content to ContentCut bytes on a UTF-8 boundary and
// says how much is left and how to get it.
func CutContent(id, content string) string { return CutContentAt(id, content, ContentCut) }

// CutContentAt is CutContent at limit bytes (0 = ContentCut, negative =
// whole).
func CutContentAt(id, content string, limit int) string {
	if limit == 0 {
		limit = ContentCut
	}
	if limit < 0 || len(content) <= limit {
		return content
	}
	n := limit
	for n > 0 && !utf8.RuneStart(content[n]) {
		n--
	}
	return fmt.Sprintf("%s…[%d more bytes; memory_get %s]", content[:n], len(content)-n, id)
}

// Standard is a namespace standard a result shows before its memories
// (recall's injection, session_start): the namespace it governs and its
// memory.
type Standard struct {
	Namespace string `json:"namespace"`
	ID        string `json:"id"`
	Title     string `json:"title"`
	Content   string `json:"content"`
}

// View is one memory as a JSON result shows it: RFC 3339 times, the
// metadata object, and no empty or zero fields. Priority and confidence are
// always shown: 0 confidence is a value, not an absence.
type View struct {
	ID             string          `json:"id"`
	Title          string          `json:"title"`
	Tier           string          `json:"tier"`
	Namespace      string          `json:"namespace"`
	Priority       int32           `json:"priority"`
	Confidence     float64         `json:"confidence"`
	Score          *float64        `json:"score,omitempty"`
	AccessCount    int64           `json:"access_count,omitempty"`
	Tags           []string        `json:"tags,omitempty"`
	Source         string          `json:"source,omitempty"`
	CreatedBy      string          `json:"created_by,omitempty"` // engine-stamped: who the host said called
	UpdatedBy      string          `json:"updated_by,omitempty"`
	CreatedAt      string          `json:"created_at,omitempty"`
	UpdatedAt      string          `json:"updated_at,omitempty"`
	LastAccessedAt string          `json:"last_accessed_at,omitempty"`
	ExpiresAt      string          `json:"expires_at,omitempty"`
	Metadata       json.RawMessage `json:"metadata,omitempty"`
	Content        string          `json:"content,omitempty"`
}

// NewView renders m, its content whole (a listing cuts it).
func NewView(m *aimemoryv1.Memory) View {
	return View{
		ID:             m.GetId(),
		Title:          m.GetTitle(),
		Tier:           m.GetTier(),
		Namespace:      m.GetNamespace(),
		Priority:       m.GetPriority(),
		Confidence:     m.GetConfidence(),
		AccessCount:    m.GetAccessCount(),
		Tags:           m.GetTags(),
		Source:         m.GetSource(),
		CreatedBy:      m.GetCreatedBy(),
		UpdatedBy:      m.GetUpdatedBy(),
		CreatedAt:      record.FormatTime(m.GetCreatedAt()),
		UpdatedAt:      record.FormatTime(m.GetUpdatedAt()),
		LastAccessedAt: record.FormatTime(m.GetLastAccessedAt()),
		ExpiresAt:      record.FormatTime(m.GetExpiresAt()),
		Metadata:       MetadataJSON(m.GetMetadataJson()),
		Content:        m.GetContent(),
	}
}

// MetadataJSON returns compact metadata, or nil when it is empty or not a
// valid object (which the engine never stores, but a result must still encode).
func MetadataJSON(raw []byte) json.RawMessage {
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil || buf.Len() == 0 || buf.String() == "{}" || buf.Bytes()[0] != '{' {
		return nil
	}
	return buf.Bytes()
}

// MetadataString returns the string value of key in metadata, "" if absent.
func MetadataString(raw []byte, key string) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return ""
	}
	var s string
	if json.Unmarshal(m[key], &s) != nil {
		return ""
	}
	return s
}

// metadataWithout is metadata without keys (shown elsewhere), nil when
// nothing else is left or it is not an object.
func metadataWithout(raw []byte, keys ...string) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	for _, k := range keys {
		delete(m, k)
	}
	if len(m) == 0 {
		return nil
	}
	out, err := json.Marshal(m)
	if err != nil {
		return nil
	}
	return out
}

// Round3 rounds a score to 3 decimal places, as results show it.
func Round3(f float64) float64 { return math.Round(f*1000) / 1000 }

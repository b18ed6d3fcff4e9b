package corefamily

import (
	"context"
	"strings"

	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
	"github.com/ai-memory/ai-memory/sdk/render"
)

// Namespace standards injected into a recall (data-model §9.8): the
// standard memories of the request namespace's chain ("*" alone when the
// recall names no namespace), most general first, each once, taken out of
// the ranked memories. Best effort, like recall's bookkeeping: a failure
// is logged and the recall answers without them.

// standardRow is one injected standard.
type standardRow struct {
	Namespace string `json:"namespace"`
	ID        string `json:"id"`
	Title     string `json:"title"`
	Content   string `json:"content"`
}

// standards reads the chain's standards for ns ("" = global only).
func (s *service) standards(ctx context.Context, ns string) []standardRow {
	if ns == "" {
		ns = "*"
	}
	resp, err := s.eng.GetStandard(ctx, &aimemoryv1.GetStandardRequest{Namespace: ns, Inherit: true})
	if err != nil {
		s.log.Warn("recall: namespace standards not injected", "namespace", ns, "err", err)
		return nil
	}
	var out []standardRow
	seen := map[string]bool{}
	for _, l := range resp.GetLevels() {
		m := l.GetMemory()
		if m == nil || seen[m.GetId()] {
			continue
		}
		seen[m.GetId()] = true
		out = append(out, standardRow{Namespace: l.GetStandard().GetNamespace(), ID: m.GetId(), Title: m.GetTitle(), Content: render.CutContent(m.GetId(), m.GetContent())})
	}
	return out
}

// withoutStandards drops the injected standards from the ranked hits.
func withoutStandards(hits []scored, std []standardRow) []scored {
	if len(std) == 0 {
		return hits
	}
	out := hits[:0:0]
	for _, h := range hits {
		if !containsID(std, h.mem.GetId()) {
			out = append(out, h)
		}
	}
	return out
}

func containsID(std []standardRow, id string) bool {
	for _, r := range std {
		if r.ID == id {
			return true
		}
	}
	return false
}

// standardsTOON is the standards block of a TOON recall.
func standardsTOON(std []standardRow) string {
	if len(std) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nstandards[namespace|id|title|content]:")
	for _, r := range std {
		b.WriteString("\n" + render.EscapeTOON(r.Namespace) + "|" + r.ID + "|" + render.EscapeTOON(r.Title) + "|" + render.EscapeTOON(r.Content))
	}
	return b.String()
}

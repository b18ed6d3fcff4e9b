package corefamily

import (
	"context"

	"github.com/ai-memory/ai-memory/sdk/render"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Namespace standards injected into a recall (data-model §9.8): the
// standard memories of the request namespace's chain ("*" alone when the
// recall names no namespace), most general first, each once, taken out of
// the ranked memories. Best effort, like recall's bookkeeping: a failure
// is logged and the recall answers without them.

// standards reads the chain's standards for ns ("" = global only).
func (s *service) standards(ctx context.Context, ns string) []render.Standard {
	if ns == "" {
		ns = "*"
	}
	resp, err := s.eng.GetStandard(ctx, &aimemoryv1.GetStandardRequest{Namespace: ns, Inherit: true})
	if err != nil {
		s.log.Warn("recall: namespace standards not injected", "namespace", ns, "err", err)
		return nil
	}
	var out []render.Standard
	seen := map[string]bool{}
	for _, l := range resp.GetLevels() {
		m := l.GetMemory()
		if m == nil || seen[m.GetId()] {
			continue
		}
		seen[m.GetId()] = true
		out = append(out, render.Standard{Namespace: l.GetStandard().GetNamespace(), ID: m.GetId(), Title: m.GetTitle(), Content: m.GetContent()})
	}
	return out
}

// withoutStandards drops the injected standards from the ranked hits.
func withoutStandards(hits []scored, std []render.Standard) []scored {
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

func containsID(std []render.Standard, id string) bool {
	for _, r := range std {
		if r.ID == id {
			return true
		}
	}
	return false
}

// standardIDs are the standards' memory ids.
func standardIDs(std []render.Standard) []string {
	ids := make([]string, len(std))
	for i, r := range std {
		ids[i] = r.ID
	}
	return ids
}

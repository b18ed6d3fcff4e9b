package corefamily

import (
	"context"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ai-memory/ai-memory/sdk"
	"github.com/ai-memory/ai-memory/sdk/record"
	"github.com/ai-memory/ai-memory/sdk/render"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

var getArgs = argNames(getSchema, "format")

// linkView is one link of memory_get, in either direction.
type linkView struct {
	SourceID  string `json:"source_id"`
	TargetID  string `json:"target_id"`
	Relation  string `json:"relation"`
	CreatedAt string `json:"created_at,omitempty"`
}

// getResult is the JSON form: the whole memory (content uncut) plus its links.
type getResult struct {
	render.View
	Links []linkView `json:"links,omitempty"`
}

// parseGet returns the validated id (or unique prefix) of a memory_get call
// and the format asked for.
func parseGet(raw []byte) (id, format string, err error) {
	a, err := sdk.ParseArgs(raw, getArgs)
	if err != nil {
		return "", "", err
	}
	if id, err = a.Required("id"); err != nil {
		return "", "", err
	}
	if err := record.ValidateID("id", id); err != nil {
		return "", "", err
	}
	format, err = render.FormatArg(a)
	return id, format, err
}

// get answers a memory in full with its links: a card by default (no id,
// which the caller gave, no timestamps, link ends as short ids), the
// listing's full TOON row, or JSON with every field.
func (s *service) get(ctx context.Context, call sdk.Call) (any, error) {
	id, format, err := parseGet(call.Arguments)
	if err != nil {
		return nil, err
	}
	resp, err := s.eng.GetMemories(ctx, &aimemoryv1.GetMemoriesRequest{
		Ids: []string{id}, AllowPrefix: true, IncludeLinks: true,
	})
	if status.Code(err) == codes.NotFound || (err == nil && len(resp.GetMemories()) == 0) {
		return nil, sdk.Errorf("memory not found: %s", id)
	}
	if err != nil {
		return nil, sdk.EngineError(err) // an ambiguous prefix lists its candidates
	}
	m, links := resp.GetMemories()[0], resp.GetLinks()
	switch format {
	case render.JSON:
		out := getResult{View: render.NewView(m)}
		for _, l := range links {
			out.Links = append(out.Links, linkView{SourceID: l.GetSourceId(), TargetID: l.GetTargetId(),
				Relation: l.GetRelation(), CreatedAt: record.FormatTime(l.GetCreatedAt())})
		}
		return out, nil
	case render.TOON:
		text := render.Listing{Memories: []*aimemoryv1.Memory{m}, Cut: -1}.TOON()
		if len(links) > 0 {
			text += "\n" + strings.TrimSuffix(linksTOON(links, nil, true), "\n")
		}
		return sdk.Text(text), nil
	}
	var shorts map[string]string
	if len(links) > 0 {
		ends := []string{}
		for _, l := range links {
			ends = append(ends, l.GetSourceId(), l.GetTargetId())
		}
		shorts = render.ShortIDsOf(ctx, s.eng, ends...)
	}
	card := render.Card{Memory: m, Namespace: call.DefaultNamespace(), Caller: call.Caller(), Blocks: linksTOON(links, shorts, false)}
	return sdk.Text(card.Compact()), nil
}

// linksTOON is a memory's links as a TOON block ending in a line break,
// ends shortened by shorts; full adds when each was made.
func linksTOON(links []*aimemoryv1.Link, shorts map[string]string, full bool) string {
	if len(links) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("links[source_id|relation|target_id")
	if full {
		b.WriteString("|created_at")
	}
	b.WriteString("]:\n")
	for _, l := range links {
		b.WriteString(render.Short(shorts, l.GetSourceId()) + "|" + render.EscapeTOON(l.GetRelation()) + "|" + render.Short(shorts, l.GetTargetId()))
		if full {
			b.WriteString("|" + record.FormatTime(l.GetCreatedAt()))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

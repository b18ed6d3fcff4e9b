package corefamily

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
	"github.com/ai-memory/ai-memory/sdk"
	"github.com/ai-memory/ai-memory/sdk/record"
	"github.com/ai-memory/ai-memory/sdk/render"
)

var getArgs = argNames(getSchema, "format")

// linkView is one link of memory_get, in either direction.
type linkView struct {
	SourceID  string `json:"source_id"`
	TargetID  string `json:"target_id"`
	Relation  string `json:"relation"`
	CreatedAt string `json:"created_at,omitempty"`
}

// getResult is the whole memory (content uncut) plus its links.
type getResult struct {
	render.View
	Links []linkView `json:"links,omitempty"`
}

// parseGet returns the validated id (or unique prefix) of a memory_get call.
func parseGet(raw []byte) (string, error) {
	a, err := sdk.ParseArgs(raw, getArgs)
	if err != nil {
		return "", err
	}
	id, err := a.Required("id")
	if err != nil {
		return "", err
	}
	if err := record.ValidateID("id", id); err != nil {
		return "", err
	}
	if _, err := render.FormatArg(a); err != nil {
		return "", err
	}
	return id, nil
}

func (s *service) get(ctx context.Context, call sdk.Call) (any, error) {
	id, err := parseGet(call.Arguments)
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
	out := getResult{View: render.NewView(resp.GetMemories()[0], false)}
	for _, l := range resp.GetLinks() {
		out.Links = append(out.Links, linkView{
			SourceID:  l.GetSourceId(),
			TargetID:  l.GetTargetId(),
			Relation:  l.GetRelation(),
			CreatedAt: record.FormatTime(l.GetCreatedAt()),
		})
	}
	return out, nil
}

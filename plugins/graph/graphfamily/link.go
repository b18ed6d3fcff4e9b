package graphfamily

import (
	"cmp"
	"context"
	"slices"

	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/sdk"
	"github.com/ai-memory/ai-memory/sdk/record"
	"github.com/ai-memory/ai-memory/sdk/wire"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

var (
	linkArgs       = argNames(linkSchema)
	invalidateArgs = argNames(invalidateSchema)
	getLinksArgs   = argNames(getLinksSchema)
)

// linkResult is memory_link's answer.
type linkResult struct {
	Linked    bool   `json:"linked"`
	Relation  string `json:"relation"`
	Revived   bool   `json:"revived,omitempty"`
	Unchanged bool   `json:"unchanged,omitempty"`
	ValidFrom string `json:"valid_from"`
}

func parseLink(call sdk.Call) (*aimemoryv1.PutLinkRequest, error) {
	a, err := sdk.ParseArgs(call.Arguments, linkArgs)
	if err != nil {
		return nil, err
	}
	src, err := a.TargetID("source_id")
	if err != nil {
		return nil, err
	}
	dst, err := a.TargetID("target_id")
	if err != nil {
		return nil, err
	}
	rel, err := relation(a, record.DefaultRelation)
	if err != nil {
		return nil, err
	}
	if err := record.ValidateLink(src, dst, rel); err != nil {
		return nil, err
	}
	// Who observed it is the engine's to record, from the verified caller.
	return &aimemoryv1.PutLinkRequest{SourceId: src, TargetId: dst, Relation: rel}, nil
}

func (s *service) link(ctx context.Context, call sdk.Call) (any, error) {
	req, err := parseLink(call)
	if err != nil {
		return nil, err
	}
	if req.SourceId, req.TargetId, err = s.resolvePair(ctx, req.SourceId, req.TargetId); err != nil {
		return nil, err
	}
	resp, err := s.eng.PutLink(ctx, req)
	if err != nil {
		return nil, sdk.EngineError(err)
	}
	l := resp.GetLink()
	return linkResult{
		Linked:    true,
		Relation:  l.GetRelation(),
		Revived:   resp.GetOutcome() == aimemoryv1.PutLinkOutcome_PUT_LINK_OUTCOME_REVIVED,
		Unchanged: resp.GetOutcome() == aimemoryv1.PutLinkOutcome_PUT_LINK_OUTCOME_UNCHANGED,
		ValidFrom: record.FormatTime(l.GetValidFrom()),
	}, nil
}

// invalidateResult is memory_kg_invalidate's answer; found false is a
// normal answer (the memories exist, the link does not).
type invalidateResult struct {
	Found              bool   `json:"found"`
	ValidUntil         string `json:"valid_until,omitempty"`
	PreviousValidUntil string `json:"previous_valid_until,omitempty"`
}

func parseInvalidate(call sdk.Call) (*aimemoryv1.InvalidateLinkRequest, error) {
	a, err := sdk.ParseArgs(call.Arguments, invalidateArgs)
	if err != nil {
		return nil, err
	}
	src, err := a.TargetID("source_id")
	if err != nil {
		return nil, err
	}
	dst, err := a.TargetID("target_id")
	if err != nil {
		return nil, err
	}
	if _, ok := a.Value("relation"); !ok {
		return nil, sdk.Errorf("relation is required")
	}
	rel, err := relation(a, "")
	if err != nil {
		return nil, err
	}
	if err := record.ValidateLink(src, dst, rel); err != nil {
		return nil, err
	}
	req := &aimemoryv1.InvalidateLinkRequest{SourceId: src, TargetId: dst, Relation: rel} // invalidated_by: the engine's, as above
	until, ok, err := timeArg(a, "valid_until", false)
	if err != nil {
		return nil, err
	}
	if ok {
		req.ValidUntil = proto.Int64(until)
	}
	return req, nil
}

func (s *service) invalidate(ctx context.Context, call sdk.Call) (any, error) {
	req, err := parseInvalidate(call)
	if err != nil {
		return nil, err
	}
	if req.SourceId, req.TargetId, err = s.resolvePair(ctx, req.SourceId, req.TargetId); err != nil {
		return nil, err
	}
	resp, err := s.eng.InvalidateLink(ctx, req)
	if err != nil {
		return nil, sdk.EngineError(err)
	}
	if !resp.GetFound() {
		return invalidateResult{}, nil
	}
	return invalidateResult{
		Found:              true,
		ValidUntil:         record.FormatTime(resp.GetLink().GetValidUntil()),
		PreviousValidUntil: record.FormatTime(resp.GetPreviousValidUntil()),
	}, nil
}

// getLinksResult splits a memory's links by direction, so the memory's own
// id is not repeated in every row.
type getLinksResult struct {
	Count int       `json:"count"`
	Out   []linkRow `json:"out,omitempty"`
	In    []linkRow `json:"in,omitempty"`
}

func parseGetLinks(raw []byte) (string, error) {
	a, err := sdk.ParseArgs(raw, getLinksArgs)
	if err != nil {
		return "", err
	}
	return memoryID(a, "id")
}

func (s *service) getLinks(ctx context.Context, call sdk.Call) (any, error) {
	id, err := parseGetLinks(call.Arguments)
	if err != nil {
		return nil, err
	}
	if id, err = s.resolve(ctx, id); err != nil {
		return nil, err
	}
	resp, err := s.eng.GetLinks(ctx, &aimemoryv1.GetLinksRequest{
		Ids: []string{id}, Direction: aimemoryv1.Direction_DIRECTION_BOTH, IncludeNodes: true,
	})
	if err != nil {
		return nil, sdk.EngineError(err)
	}
	if len(resp.GetNotFound()) > 0 {
		return nil, sdk.Errorf("id: memory not found: %s", id)
	}
	nodes := summaries(resp.GetNodes())
	links := slices.Clone(resp.GetLinks())
	slices.SortFunc(links, byValidity)
	out := getLinksResult{Count: len(links)}
	for _, l := range links {
		if l.GetSourceId() == id {
			out.Out = append(out.Out, row(l, l.GetTargetId(), nodes))
		} else {
			out.In = append(out.In, row(l, l.GetSourceId(), nodes))
		}
	}
	return out, nil
}

// resolve turns a short id (a unique prefix) into the full id.
func (s *service) resolve(ctx context.Context, id string) (string, error) {
	ids, err := wire.ResolveIDs(ctx, s.eng, id)
	if err != nil {
		return "", sdk.EngineError(err)
	}
	return ids[0], nil
}

// resolvePair resolves a link's two ends in one engine read.
func (s *service) resolvePair(ctx context.Context, src, dst string) (string, string, error) {
	ids, err := wire.ResolveIDs(ctx, s.eng, src, dst)
	if err != nil {
		return "", "", sdk.EngineError(err)
	}
	return ids[0], ids[1], nil
}

func summaries(ns []*aimemoryv1.NodeSummary) map[string]*aimemoryv1.NodeSummary {
	m := make(map[string]*aimemoryv1.NodeSummary, len(ns))
	for _, n := range ns {
		m[n.GetId()] = n
	}
	return m
}

// row is newRow with other's summary from nodes.
func row(l *aimemoryv1.Link, other string, nodes map[string]*aimemoryv1.NodeSummary) linkRow {
	n := nodes[other]
	return newRow(l, other, n.GetTitle(), n.GetNamespace())
}

// byValidity orders links by when they became valid, then were created,
// then by their identity: the order of every graph listing.
func byValidity(a, b *aimemoryv1.Link) int {
	return cmp.Or(cmp.Compare(a.GetValidFrom(), b.GetValidFrom()), cmp.Compare(a.GetCreatedAt(), b.GetCreatedAt()),
		cmp.Compare(a.GetSourceId(), b.GetSourceId()), cmp.Compare(a.GetTargetId(), b.GetTargetId()),
		cmp.Compare(a.GetRelation(), b.GetRelation()))
}

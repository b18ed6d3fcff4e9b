package server

import (
	"context"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Graph serves links, entities and the namespace tree (plugins/graph).
type Graph struct {
	aimemoryv1.UnimplementedGraphServer
	errorMapper
	st storage.Graph
}

// GetLinks is a traversal's batched frontier read.
func (s *Graph) GetLinks(ctx context.Context, req *aimemoryv1.GetLinksRequest) (*aimemoryv1.GetLinksResponse, error) {
	resp, err := s.st.GetLinks(ctx, req)
	return resp, s.status(err)
}

// Traverse is memory_kg_query's walk in one call.
func (s *Graph) Traverse(ctx context.Context, req *aimemoryv1.TraverseRequest) (*aimemoryv1.TraverseResponse, error) {
	resp, err := s.st.Traverse(ctx, req)
	return resp, s.status(err)
}

func (s *Graph) PutLink(ctx context.Context, req *aimemoryv1.PutLinkRequest) (*aimemoryv1.PutLinkResponse, error) {
	resp, err := s.st.PutLink(ctx, req)
	return resp, s.status(err)
}

func (s *Graph) InvalidateLink(ctx context.Context, req *aimemoryv1.InvalidateLinkRequest) (*aimemoryv1.InvalidateLinkResponse, error) {
	resp, err := s.st.InvalidateLink(ctx, req)
	return resp, s.status(err)
}

func (s *Graph) LinkTimeline(ctx context.Context, req *aimemoryv1.LinkTimelineRequest) (*aimemoryv1.LinkTimelineResponse, error) {
	resp, err := s.st.LinkTimeline(ctx, req)
	return resp, s.status(err)
}

func (s *Graph) RegisterEntity(ctx context.Context, req *aimemoryv1.RegisterEntityRequest) (*aimemoryv1.RegisterEntityResponse, error) {
	resp, err := s.st.RegisterEntity(ctx, req)
	return resp, s.status(err)
}

func (s *Graph) GetEntityByAlias(ctx context.Context, req *aimemoryv1.GetEntityByAliasRequest) (*aimemoryv1.GetEntityByAliasResponse, error) {
	resp, err := s.st.GetEntityByAlias(ctx, req)
	return resp, s.status(err)
}

func (s *Graph) CountNamespaces(ctx context.Context, req *aimemoryv1.CountNamespacesRequest) (*aimemoryv1.CountNamespacesResponse, error) {
	resp, err := s.st.CountNamespaces(ctx, req)
	return resp, s.status(err)
}

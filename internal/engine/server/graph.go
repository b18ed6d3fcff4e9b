package server

import (
	"context"

	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// The graph family's RPCs: links, entities and the namespace tree. GetLinks,
// the traversal's frontier read, is in server.go.

func (s *Server) PutLink(ctx context.Context, req *aimemoryv1.PutLinkRequest) (*aimemoryv1.PutLinkResponse, error) {
	resp, err := s.store.PutLink(ctx, req)
	return resp, s.status(err)
}

func (s *Server) InvalidateLink(ctx context.Context, req *aimemoryv1.InvalidateLinkRequest) (*aimemoryv1.InvalidateLinkResponse, error) {
	resp, err := s.store.InvalidateLink(ctx, req)
	return resp, s.status(err)
}

func (s *Server) LinkTimeline(ctx context.Context, req *aimemoryv1.LinkTimelineRequest) (*aimemoryv1.LinkTimelineResponse, error) {
	resp, err := s.store.LinkTimeline(ctx, req)
	return resp, s.status(err)
}

func (s *Server) RegisterEntity(ctx context.Context, req *aimemoryv1.RegisterEntityRequest) (*aimemoryv1.RegisterEntityResponse, error) {
	resp, err := s.store.RegisterEntity(ctx, req)
	return resp, s.status(err)
}

func (s *Server) GetEntityByAlias(ctx context.Context, req *aimemoryv1.GetEntityByAliasRequest) (*aimemoryv1.GetEntityByAliasResponse, error) {
	resp, err := s.store.GetEntityByAlias(ctx, req)
	return resp, s.status(err)
}

func (s *Server) CountNamespaces(ctx context.Context, req *aimemoryv1.CountNamespacesRequest) (*aimemoryv1.CountNamespacesResponse, error) {
	resp, err := s.store.CountNamespaces(ctx, req)
	return resp, s.status(err)
}

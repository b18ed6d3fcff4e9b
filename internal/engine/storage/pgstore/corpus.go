package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/index"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	"github.com/ai-memory/ai-memory/internal/engine/termstats"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// Reads answered by the in-memory index, as boltstore answers them.

// corpus is what the Corpus API is answered from (termstats, shared with
// boltstore so the answers cannot drift).
func (s *Store) corpus(ctx context.Context) termstats.Source {
	return termstats.Source{
		An: s.an, Idx: s.idx, Now: s.nowNanos(),
		DocFreqs: termstats.CallerDocFreqs(s.idx, authz.Of(ctx)),
		Filter:   func(f *aimemoryv1.Filter) (*index.Filter, error) { return s.filter(ctx, f) },
		Records:  func(hits []index.Hit) ([]*aimemoryv1.Memory, error) { return s.records(ctx, hits) },
	}
}

// TermStats: the text's terms with their document frequencies, and on
// request the existing tags (of memories the caller may read) it spells out.
func (s *Store) TermStats(ctx context.Context, req *aimemoryv1.TermStatsRequest) (*aimemoryv1.TermStatsResponse, error) {
	if err := s.catchUp(ctx); err != nil { // see the other engines' writes
		return nil, err
	}
	return termstats.AnswerTermStats(s.corpus(ctx), req)
}

// RelatedTerms mines the best recall matches of the query for co-occurring terms.
func (s *Store) RelatedTerms(ctx context.Context, req *aimemoryv1.RelatedTermsRequest) (*aimemoryv1.RelatedTermsResponse, error) {
	if err := s.catchUp(ctx); err != nil { // see the other engines' writes
		return nil, err
	}
	return termstats.AnswerRelatedTerms(s.corpus(ctx), req)
}

// CountNamespaces counts live memories per namespace under a prefix.
func (s *Store) CountNamespaces(ctx context.Context, req *aimemoryv1.CountNamespacesRequest) (*aimemoryv1.CountNamespacesResponse, error) {
	if err := s.catchUp(ctx); err != nil { // see the other engines' writes
		return nil, err
	}
	return ops.CountNamespaces(ctx, s.idx, s.nowNanos(), req)
}

// Archived is the archive row of id; storage.ErrNotFound when there is none.
func (s *Store) Archived(ctx context.Context, id string) (*storage.Archived, error) {
	a := &storage.Archived{}
	var raw []byte
	err := s.pool.QueryRow(ctx, `SELECT archived_at, reason, original_tier, original_expires_at, record FROM archived WHERE id = $1`, id).
		Scan(&a.ArchivedAt, &a.Reason, &a.OriginalTier, &a.OriginalExpiresAt, &raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%w in archive: %s", storage.ErrNotFound, id)
	}
	if err != nil {
		return nil, err
	}
	if a.Memory, err = decodeMemory(raw); err != nil {
		return nil, err
	}
	return a, nil
}

// GetArchived reads archive rows by exact id and, with include_versions,
// each id's superseded versions, oldest first; rows in namespaces the
// caller may not read are not found; with the links kept in the archive.
func (s *Store) GetArchived(ctx context.Context, req *aimemoryv1.GetArchivedRequest) (*aimemoryv1.GetArchivedResponse, error) {
	if err := rules.ValidateIDs("ids", req.GetIds()); err != nil {
		return nil, err
	}
	resp := &aimemoryv1.GetArchivedResponse{}
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	readable := authz.Of(ctx).Reader()
	seen := map[string]bool{}
	for _, id := range rules.Dedupe(append([]string(nil), req.GetIds()...)) {
		if req.GetIncludeVersions() {
			rows, err := tx.Query(ctx, `SELECT archived_at, original_tier, original_expires_at, record FROM versions WHERE id = $1 ORDER BY archived_at`, id)
			if err != nil {
				return nil, err
			}
			for rows.Next() {
				v := &aimemoryv1.ArchivedMemory{Reason: storage.ArchiveReasonSuperseded}
				var raw []byte
				if err := rows.Scan(&v.ArchivedAt, &v.OriginalTier, &v.OriginalExpiresAt, &raw); err != nil {
					rows.Close()
					return nil, err
				}
				if v.Memory, err = decodeMemory(raw); err != nil {
					rows.Close()
					return nil, err
				}
				if readable(v.Memory.GetNamespace()) {
					resp.Versions = append(resp.Versions, v)
				}
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return nil, err
			}
		}
		a := &aimemoryv1.ArchivedMemory{}
		var raw []byte
		err := tx.QueryRow(ctx, `SELECT archived_at, reason, original_tier, original_expires_at, record FROM archived WHERE id = $1`, id).
			Scan(&a.ArchivedAt, &a.Reason, &a.OriginalTier, &a.OriginalExpiresAt, &raw)
		if errors.Is(err, pgx.ErrNoRows) {
			resp.NotFound = append(resp.NotFound, id)
			continue
		}
		if err != nil {
			return nil, err
		}
		if a.Memory, err = decodeMemory(raw); err != nil {
			return nil, err
		}
		if !readable(a.Memory.GetNamespace()) {
			resp.NotFound = append(resp.NotFound, id)
			continue
		}
		resp.Archived = append(resp.Archived, a)
		links, err := linksAround(ctx, tx, archivedLinks, []string{id}, aimemoryv1.Direction_DIRECTION_BOTH, "")
		if err != nil {
			return nil, err
		}
		resp.Links = links.collect(id, nil, seen, resp.Links)
	}
	if resp.Links, err = ops.ReadableLinks(resp.Links, ops.ReadableIDs(readable, func(id string) (string, error) { return anyNamespace(ctx, tx, id) })); err != nil {
		return nil, err
	}
	return resp, nil
}

// anyNamespace is the namespace of memory id, live or archived.
func anyNamespace(ctx context.Context, q pgx.Tx, id string) (string, error) {
	var (
		ns  *string
		raw []byte
	)
	err := q.QueryRow(ctx, `SELECT (SELECT namespace FROM memories WHERE id = $1), (SELECT record FROM archived WHERE id = $1)`, id).Scan(&ns, &raw)
	if err != nil {
		return "", err
	}
	if ns == nil && raw == nil {
		return "", fmt.Errorf("link names missing memory %s", id)
	}
	return rowNamespace(ns, raw)
}

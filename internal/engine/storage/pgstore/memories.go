package pgstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/index"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	"github.com/ai-memory/ai-memory/internal/engine/storage/vecset"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
	"github.com/ai-memory/ai-memory/sdk/record"
)

// The Memories interface, rule for rule as boltstore's (the conformance
// suite and the differential test hold both to it): validation and the
// record rules come from package rules, ranking from package index.

const (
	maxAmbiguousIDs = 10
)

// Hybrid search's default floor, boltstore's.
var defaultMinSimilarity = vecset.DefaultMinSimilarity

// StoreMemory writes a new memory or resolves a (title, namespace)
// collision by on_conflict: ERROR fails, VERSION picks "T (n)", MERGE (the
// default) merges into the holder by rules.Merge, archiving the version it
// replaces. The unique (namespace, title) constraint makes a race between
// engines a retry, which then sees the title taken and merges.
func (s *Store) StoreMemory(ctx context.Context, req *aimemoryv1.StoreMemoryRequest) (*aimemoryv1.StoreMemoryResponse, error) {
	in, policy, err := rules.NewStore(req)
	if err != nil {
		return nil, err
	}
	var resp *aimemoryv1.StoreMemoryResponse
	err = s.writeGoverned(ctx, &aimemoryv1.PendingPayload{Action: &aimemoryv1.PendingPayload_Store{Store: req}}, func(w *writeTx) error {
		resp = &aimemoryv1.StoreMemoryResponse{}
		return w.storeMemory(in, policy, resp)
	})
	if err != nil {
		return nil, err
	}
	if resp.Outcome == aimemoryv1.StoreOutcome_STORE_OUTCOME_CREATED {
		resp.PotentialContradictions = ops.Contradictions(s.an, s.idx, resp.Memory)
	}
	return resp, nil
}

// storeMemory is StoreMemory inside a transaction (ops.Store, shared with
// boltstore).
func (w *writeTx) storeMemory(in *aimemoryv1.Memory, policy aimemoryv1.ConflictPolicy, resp *aimemoryv1.StoreMemoryResponse) error {
	return ops.Store(opsTx{w}, in, policy, resp)
}

// opsTx is this backend's transaction as the shared write steps see it.
type opsTx struct{ w *writeTx }

func (t opsTx) Context() context.Context { return t.w.ctx }
func (t opsTx) Get(id string) (*aimemoryv1.Memory, error) {
	m, err := t.w.get(id)
	return ops.Visible(t.w.ctx, m), err
}
func (t opsTx) TitleOwner(ns, title string) (string, error) { return t.w.titleOwner(ns, title) }
func (t opsTx) Authorize(write storage.Write) error         { return t.w.authorize(write) }
func (t opsTx) Archive(m *aimemoryv1.Memory, reason, ev string) error {
	return t.w.archive(m, reason, ev)
}
func (t opsTx) Put(old, m *aimemoryv1.Memory, ev string) error { return t.w.put(old, m, ev) }
func (t opsTx) Remove(m *aimemoryv1.Memory, ev string) error   { return t.w.removeForGood(m, ev) }
func (t opsTx) Now() int64                                     { return t.w.now }
func (t opsTx) TTL() storage.TTL                               { return t.w.s.ttl }
func (t opsTx) Principal() string                              { return t.w.principal() }

// GetMemories reads memories by exact id or, with allow_prefix, by unique
// id prefix; expired-but-uncollected ones included; with include_links,
// every live link touching them, once each (boltstore's order).
func (s *Store) GetMemories(ctx context.Context, req *aimemoryv1.GetMemoriesRequest) (*aimemoryv1.GetMemoriesResponse, error) {
	if err := rules.ValidateIDs("ids", req.GetIds()); err != nil {
		return nil, err
	}
	resp := &aimemoryv1.GetMemoriesResponse{}
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	for _, id := range req.GetIds() {
		var raw []byte
		err := tx.QueryRow(ctx, `SELECT record FROM memories WHERE id = $1`, id).Scan(&raw)
		if errors.Is(err, pgx.ErrNoRows) {
			raw, err = nil, nil
			if req.GetAllowPrefix() {
				raw, err = byPrefix(ctx, tx, id)
			}
		}
		if err != nil {
			return nil, err
		}
		var m *aimemoryv1.Memory
		if raw != nil {
			if m, err = decodeMemory(raw); err != nil {
				return nil, err
			}
		}
		if m == nil || !authz.Of(ctx).Reads(m.Namespace) {
			resp.NotFound = append(resp.NotFound, id)
			continue
		}
		resp.Memories = append(resp.Memories, m)
	}
	if !req.GetIncludeLinks() {
		return resp, nil
	}
	ids := make([]string, len(resp.Memories))
	for i, m := range resp.Memories {
		ids[i] = m.Id
	}
	a, err := linksAround(ctx, tx, liveLinks, ids, aimemoryv1.Direction_DIRECTION_BOTH, "")
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, id := range ids {
		resp.Links = ops.CollectLinks(a.out, a.in, id, nil, seen, resp.Links)
	}
	// A live link's ends are live (the foreign keys).
	resp.Links, err = ops.ReadableLinks(resp.Links, ops.ReadableIDs(authz.Of(ctx).Reader(), func(id string) (ns string, err error) {
		err = tx.QueryRow(ctx, `SELECT namespace FROM memories WHERE id = $1`, id).Scan(&ns)
		return ns, err
	}))
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// byPrefix is the record whose id uniquely starts with prefix among those
// the caller may read; nil if none. Ids sort bytewise (COLLATE "C"), so
// the candidates are one index range from prefix on.
func byPrefix(ctx context.Context, tx pgx.Tx, prefix string) ([]byte, error) {
	rows, err := tx.Query(ctx, `SELECT id, namespace, record FROM memories WHERE id >= $1 ORDER BY id`, prefix)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var (
		ids    []string
		count  int
		found  []byte
		id, ns string
		raw    []byte
	)
	for rows.Next() {
		if err := rows.Scan(&id, &ns, &raw); err != nil {
			return nil, err
		}
		if !strings.HasPrefix(id, prefix) {
			break
		}
		if !authz.Of(ctx).Reads(ns) {
			continue
		}
		count++
		if len(ids) < maxAmbiguousIDs {
			ids = append(ids, id)
		}
		found = slices.Clone(raw)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	switch count {
	case 0:
		return nil, nil
	case 1:
		return found, nil
	}
	return nil, &storage.AmbiguousError{Prefix: prefix, IDs: ids, Count: count}
}

// ShortIDs gives each id its shortest prefix, at least min_length long,
// that no other live or archived memory's id starts with: one longer than
// the longest it shares with its neighbours in id order.
func (s *Store) ShortIDs(ctx context.Context, req *aimemoryv1.ShortIdsRequest) (*aimemoryv1.ShortIdsResponse, error) {
	if err := rules.ValidateIDs("ids", req.GetIds()); err != nil {
		return nil, err
	}
	if n := req.GetMinLength(); n > record.MaxIDBytes {
		return nil, &record.FieldError{Field: "min_length", Rule: fmt.Sprintf("must be at most %d (got %d)", record.MaxIDBytes, n)}
	}
	readable := authz.Of(ctx).Reader()
	resp := &aimemoryv1.ShortIdsResponse{Prefixes: make([]string, len(req.GetIds()))}
	for i, id := range req.GetIds() {
		// The nearest id each way, live and archived, in one round trip;
		// a direction whose nearest the caller may not read walks on.
		rows, err := s.pool.Query(ctx, `
			(SELECT 0, id, namespace, NULL::bytea FROM memories WHERE id > $1 ORDER BY id LIMIT 1) UNION ALL
			(SELECT 1, id, namespace, NULL FROM memories WHERE id < $1 ORDER BY id DESC LIMIT 1) UNION ALL
			(SELECT 2, id, NULL, record FROM archived WHERE id > $1 ORDER BY id LIMIT 1) UNION ALL
			(SELECT 3, id, NULL, record FROM archived WHERE id < $1 ORDER BY id DESC LIMIT 1)`, id)
		if err != nil {
			return nil, err
		}
		type near struct{ id, ns string }
		nearest := map[int]near{}
		for rows.Next() {
			var (
				dir int
				n   near
				ns  *string
				raw []byte
			)
			if err := rows.Scan(&dir, &n.id, &ns, &raw); err != nil {
				rows.Close()
				return nil, err
			}
			if n.ns, err = rowNamespace(ns, raw); err != nil {
				rows.Close()
				return nil, err
			}
			nearest[dir] = n
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		shared := 0
		for dir, n := range nearest {
			if !readable(n.ns) {
				if n.id, err = nearestReadable(ctx, s.pool, neighbourQueries[dir], n.id, readable); err != nil {
					return nil, err
				}
			}
			if n.id != "" {
				shared = max(shared, commonPrefix(n.id, id))
			}
		}
		resp.Prefixes[i] = id[:min(len(id), max(int(req.GetMinLength()), shared+1))]
	}
	return resp, nil
}

// rowNamespace is a row's namespace: its column, else its record's.
func rowNamespace(col *string, record []byte) (string, error) {
	if col != nil {
		return *col, nil
	}
	m, err := decodeMemory(record)
	return m.GetNamespace(), err
}

// neighbourQueries read a page of the ids next to a cursor id in one
// direction, live or archived (in ShortIDs' order of directions), each
// with its namespace.
var neighbourQueries = []string{
	`SELECT id, namespace, NULL::bytea FROM memories WHERE id > $1 ORDER BY id LIMIT $2`,
	`SELECT id, namespace, NULL::bytea FROM memories WHERE id < $1 ORDER BY id DESC LIMIT $2`,
	`SELECT id, NULL::text, record FROM archived WHERE id > $1 ORDER BY id LIMIT $2`,
	`SELECT id, NULL::text, record FROM archived WHERE id < $1 ORDER BY id DESC LIMIT $2`,
}

// rowsQuerier is a pool or a transaction.
type rowsQuerier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// nearestReadable is the nearest id query reads past the cursor id whose
// namespace the caller may read; "" when there is none.
func nearestReadable(ctx context.Context, q rowsQuerier, query, cursor string, readable func(string) bool) (string, error) {
	const page = 16
	for {
		rows, err := q.Query(ctx, query, cursor, page)
		if err != nil {
			return "", err
		}
		n, found := 0, ""
		for found == "" && rows.Next() {
			var (
				ns  *string
				raw []byte
			)
			if err := rows.Scan(&cursor, &ns, &raw); err != nil {
				rows.Close()
				return "", err
			}
			n++
			name, err := rowNamespace(ns, raw)
			if err != nil {
				rows.Close()
				return "", err
			}
			if readable(name) {
				found = cursor
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil || found != "" || n < page {
			return found, err
		}
	}
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// filter compiles a request's filter with the read rules of the guarded
// namespaces and the caller's scope (boltstore's filter).
func (s *Store) filter(ctx context.Context, in *aimemoryv1.Filter) (*index.Filter, error) {
	return ops.ReadFilter(ctx, in)
}

// records reads the memories of hits in order, skipping any deleted since
// the index was read.
func (s *Store) records(ctx context.Context, hits []index.Hit) ([]*aimemoryv1.Memory, error) {
	if len(hits) == 0 {
		return []*aimemoryv1.Memory{}, nil
	}
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	rows, err := s.pool.Query(ctx, `SELECT id, record FROM memories WHERE id = ANY($1)`, ids)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	byID := make(map[string]*aimemoryv1.Memory, len(ids))
	for rows.Next() {
		var (
			id  string
			raw []byte
		)
		if err := rows.Scan(&id, &raw); err != nil {
			return nil, err
		}
		m, err := decodeMemory(raw)
		if err != nil {
			return nil, fmt.Errorf("memory %s: %w", id, err)
		}
		byID[id] = m
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]*aimemoryv1.Memory, 0, len(hits))
	for _, id := range ids {
		if m := byID[id]; m != nil {
			out = append(out, m)
		}
	}
	return out, nil
}

// ListMemories returns live memories matching the filter, priority desc,
// then updated_at desc, then id.
func (s *Store) ListMemories(ctx context.Context, req *aimemoryv1.ListMemoriesRequest) (*aimemoryv1.ListMemoriesResponse, error) {
	if err := s.catchUp(ctx); err != nil { // see the other engines' writes
		return nil, err
	}
	f, err := s.filter(ctx, req.GetFilter())
	if err != nil {
		return nil, err
	}
	return ops.List(s.idx, f, s.nowNanos(), req, func(hits []index.Hit) ([]*aimemoryv1.Memory, error) { return s.records(ctx, hits) })
}

// SearchMemories ranks live memories matching the filter by keyword
// relevance (index/rank.go), as boltstore does; with a query vector and
// model, fused with the nearest vectors (hybrid), as boltstore does.
func (s *Store) SearchMemories(ctx context.Context, req *aimemoryv1.SearchMemoriesRequest) (*aimemoryv1.SearchMemoriesResponse, error) {
	if err := s.catchUp(ctx); err != nil { // see the other engines' writes
		return nil, err
	}
	f, err := s.filter(ctx, req.GetFilter())
	if err != nil {
		return nil, err
	}
	q, err := ops.KeywordQuery(s.an, req, f, s.nowNanos())
	if err != nil {
		return nil, err
	}
	limit := q.Limit
	resp := &aimemoryv1.SearchMemoriesResponse{Mode: "keyword"}
	hybrid := len(req.GetQueryVector()) > 0 && req.GetVectorModel() != ""
	if hybrid {
		q.Limit = max(3*limit, 30)
	}
	hits := s.idx.Search(q)
	if hybrid { // boltstore's blend, step for step
		minCos := float64(req.GetMinSimilarity())
		if minCos == 0 {
			minCos = defaultMinSimilarity
		}
		near, err := s.nearest(ctx, f, req.GetQueryVector(), req.GetVectorModel(), max(5*limit, 50), minCos)
		if err != nil {
			return nil, err
		}
		if len(near) == 0 {
			resp.SemanticReason = "no memory has a vector by " + req.GetVectorModel() + " close to the query"
			hits = hits[:min(len(hits), limit)]
		} else {
			hits = s.vecs.Blend(hits, s.idx.QueryWeight(q.Terms), near, req.GetQueryVector(), req.GetVectorModel(), minCos, float64(req.GetQueryUnread()), limit)
			resp.Mode = "hybrid"
		}
	}
	if resp.Results, err = s.scored(ctx, hits); err != nil {
		return nil, err
	}
	return resp, nil
}

// HasExpired reports whether any memory has expired: one index probe.
func (s *Store) HasExpired(ctx context.Context) (bool, error) {
	var found bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM memories WHERE expires_at <> 0 AND expires_at <= $1)`, s.nowNanos()).Scan(&found)
	return found, err
}

// Expired reads the expired rows, soonest first (seam.Tx).
func (t opsTx) Expired() ([]*aimemoryv1.Memory, error) {
	rows, err := t.w.tx.Query(t.w.ctx, `SELECT record FROM memories WHERE expires_at <> 0 AND expires_at <= $1 ORDER BY expires_at, id`, t.w.now)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (*aimemoryv1.Memory, error) {
		var raw []byte
		if err := row.Scan(&raw); err != nil {
			return nil, err
		}
		return decodeMemory(raw)
	})
}

// Stats counts stored memories by tier and namespace (from the index),
// the index's size, live links, archive rows and versions, and the
// database's size.
func (s *Store) Stats(ctx context.Context) (*aimemoryv1.StatsResponse, error) {
	if err := s.catchUp(ctx); err != nil { // see the other engines' writes
		return nil, err
	}
	resp, wide := ops.IndexStats(ctx, s.idx, s.nowNanos())
	if !wide { // store-wide counts are only for a grant of every namespace
		return resp, nil
	}
	// Sizes are of this backend's own rows (the archive's: its records).
	var stored, archived, versions, archiveBytes, links int64
	err := s.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM memories), (SELECT count(*) FROM archived), (SELECT count(*) FROM versions),
		(SELECT count(*) FROM links),
		(SELECT coalesce(sum(octet_length(record)), 0) FROM archived) + (SELECT coalesce(sum(octet_length(record)), 0) FROM versions),
		pg_database_size(current_database())`).Scan(&stored, &archived, &versions, &links, &archiveBytes, &resp.DbSizeBytes)
	if err != nil {
		return nil, err
	}
	resp.Stored, resp.Archived, resp.Versions, resp.ArchiveSizeBytes = uint64(stored), uint64(archived), uint64(versions), uint64(archiveBytes)
	resp.Links = uint64(links)
	return resp, nil
}

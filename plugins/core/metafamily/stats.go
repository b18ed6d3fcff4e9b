package metafamily

import (
	"context"

	"github.com/ai-memory/ai-memory/sdk"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

var statsArgs = sdk.ArgNames(statsSchema)

// statsResult is memory_stats's answer. by_tier and by_namespace are
// arrays of {tier|namespace, count}, count desc (the reference's shape,
// not the object its guide shows). Vector coverage joins index when
// embeddings exist.
type statsResult struct {
	Total        uint64      `json:"total"`
	ByTier       []tierCount `json:"by_tier"`
	ByNamespace  []nsCount   `json:"by_namespace"`
	ExpiringSoon uint64      `json:"expiring_soon"` // within the next hour
	LinksCount   uint64      `json:"links_count"`
	DBSizeBytes  int64       `json:"db_size_bytes"`
	Index        indexHealth `json:"index"`
	Archive      archiveSize `json:"archive"`
}

type tierCount struct {
	Tier  string `json:"tier"`
	Count uint64 `json:"count"`
}

type nsCount struct {
	Namespace string `json:"namespace"`
	Count     uint64 `json:"count"`
}

// indexHealth: the keyword index against storage.
type indexHealth struct {
	Healthy      bool   `json:"healthy"` // every stored memory is indexed
	Indexed      uint64 `json:"indexed"`
	Stored       uint64 `json:"stored"`
	Terms        uint64 `json:"terms"`
	PostingBytes uint64 `json:"posting_bytes"`
}

type archiveSize struct {
	Archived  uint64 `json:"archived"`
	Versions  uint64 `json:"versions"`
	SizeBytes uint64 `json:"size_bytes"`
}

func (s *service) stats(ctx context.Context, call sdk.Call) (any, error) {
	if _, err := sdk.ParseArgs(call.Arguments, statsArgs); err != nil {
		return nil, err
	}
	r, err := s.eng.Stats(ctx, &aimemoryv1.StatsRequest{})
	if err != nil {
		return nil, sdk.EngineError(err)
	}
	return statsView(r), nil
}

// statsView is the stats view of an engine answer.
func statsView(r *aimemoryv1.StatsResponse) any {
	out := statsResult{
		Total: r.GetTotal(), ByTier: []tierCount{}, ByNamespace: []nsCount{},
		ExpiringSoon: r.GetExpiringSoon(), LinksCount: r.GetLinks(), DBSizeBytes: r.GetDbSizeBytes(),
		Index: indexHealth{
			Healthy: r.GetIndexed() == r.GetStored(), Indexed: r.GetIndexed(), Stored: r.GetStored(),
			Terms: r.GetIndexTerms(), PostingBytes: r.GetIndexPostingsBytes(),
		},
		Archive: archiveSize{Archived: r.GetArchived(), Versions: r.GetVersions(), SizeBytes: r.GetArchiveSizeBytes()},
	}
	for _, c := range r.GetByTier() {
		out.ByTier = append(out.ByTier, tierCount{Tier: c.GetKey(), Count: c.GetCount()})
	}
	for _, c := range r.GetByNamespace() {
		out.ByNamespace = append(out.ByNamespace, nsCount{Namespace: c.GetKey(), Count: c.GetCount()})
	}
	return out
}

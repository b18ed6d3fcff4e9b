package pgstore

import (
	"context"
	"testing"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/pgstore/pgtest"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// open is a fresh store on a fresh database, closed when t ends.
func open(t testing.TB, opts storage.Options) *Store {
	t.Helper()
	s, err := Open(context.Background(), pgtest.DSN(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// implemented are the conformance tests of the parts built so far: the
// Memories interface, the corpus statistics and namespace counts. The
// rest of storagetest.Run is what remains (issue 16): vectors, archive
// reads and the lifecycle (forget, restore, promote), links and entities,
// audit, governance decisions.
var implemented = []string{
	"StoreDefaults", "StoreConflictPolicies", "PotentialContradictions", "Update",
	"ConcurrentWrites", "FailingWriteFailsAlone", "ValidationNamesField",
	"GetByPrefix", "ShortIDs",
	"Filters", "RankingFormula", "RankingTermFrequency", "RankingBounded", "RecallFunctionWords",
	"ListOrder", "MatchModesStemmingAndSanitising", "TermStats", "RelatedTerms",
	"ExpiredHiddenFromListAndSearchVisibleToGetCollectedByGC", "Touch", "CustomTTL",
	"EventsAfterCommit", "CountNamespaces", "InboxReadableByOwnerOnly",
	"EventLogResumeCursor", "DeliveriesQueuedWithTheWrite", "DeliveryOutcomes", "Inbox",
}

// TestConformance runs the backend-neutral suite's implemented part against PostgreSQL.
func TestConformance(t *testing.T) {
	storagetest.RunOnly(t, func(t *testing.T, opts storage.Options) storage.Backend { return open(t, opts) }, implemented...)
}

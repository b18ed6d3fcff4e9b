// Package storagetest is the conformance suite every storage backend must
// pass: what the engine's services promise, checked through the
// storage.Backend interface alone, as the engine serves it: package
// records over the backend's seam. A backend's test runs it:
//
//	func TestConformance(t *testing.T) {
//		storagetest.Run(t, func(t *testing.T, opts storage.Options) storage.Backend {
//			b, err := mybackend.Open(..., opts) // fresh and empty, closed by t.Cleanup
//			...
//			return records.New(b)
//		})
//	}
package storagetest

import (
	"context"
	"slices"
	"testing"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
)

// Opener opens a fresh, empty backend with opts (the suite sets the clock,
// TTL and policy there) and closes it when t ends.
type Opener func(t *testing.T, opts storage.Options) storage.Backend

// Checker is what a backend must also implement for the suite: a full
// check of its own invariants (indexes agree with records, no dangling
// link or alias), which the suite runs after writes.
type Checker interface {
	CheckConsistency(context.Context) error
}

// Run runs every conformance test against backends from open.
func Run(t *testing.T, open Opener) {
	for _, tc := range conformanceTests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open) })
	}
}

// RunOnly runs the named conformance tests: for a backend still being
// built, the parts it has (the rest of Run is its to-do list). An unknown
// name fails t, so a renamed test is not silently dropped.
func RunOnly(t *testing.T, open Opener, names ...string) {
	for _, name := range names {
		i := slices.IndexFunc(conformanceTests, func(tc conformanceTest) bool { return tc.name == name })
		if i < 0 {
			t.Errorf("storagetest has no test %q", name)
			continue
		}
		t.Run(name, func(t *testing.T) { conformanceTests[i].fn(t, open) })
	}
}

type conformanceTest struct {
	name string
	fn   func(*testing.T, Opener)
}

var conformanceTests = []conformanceTest{
	// memories: store, merge, conflicts, defaults, validation
	{"StoreDefaults", testStoreDefaults},
	{"StoreConflictPolicies", testStoreConflictPolicies},
	{"PotentialContradictions", testPotentialContradictions},
	{"Update", testUpdate},
	{"ConcurrentWrites", testConcurrentWrites},
	{"FailingWriteFailsAlone", testFailingWriteFailsAlone},
	{"ValidationNamesField", testValidationNamesField},
	{"GetByPrefix", testGetByPrefix},
	{"PrefixPastUnreadable", testPrefixPastUnreadable},
	{"ShortIDs", testShortIDs},
	// list and search
	{"Filters", testFilters},
	{"RankingFormula", testRankingFormula},
	{"RankingTermFrequency", testRankingTermFrequency},
	{"RankingBounded", testRankingBounded},
	{"RecallFunctionWords", testRecallFunctionWords},
	{"ListOrder", testListOrder},
	{"MatchModesStemmingAndSanitising", testMatchModesStemmingAndSanitising},
	{"TermStats", testTermStats},
	{"RelatedTerms", testRelatedTerms},
	{"Vectors", testVectors},
	// expiry, touch, gc and archive
	{"ExpiredHiddenFromListAndSearchVisibleToGetCollectedByGC", testExpiredHiddenFromListAndSearchVisibleToGetCollectedByGC},
	{"Touch", testTouch},
	{"CustomTTL", testCustomTTL},
	{"ArchiveKeepsMetadataAndLinks", testArchiveKeepsMetadataAndLinks},
	{"RestoreRefusals", testRestoreRefusals},
	{"RestoreLongHasNoExpiry", testRestoreLongHasNoExpiry},
	{"Forget", testForget},
	{"ForgetSkipsGuarded", testForgetSkipsGuarded},
	{"SupersededVersions", testSupersededVersions},
	{"ArchiveListStatsPurge", testArchiveListStatsPurge},
	{"PurgeByVersionKey", testPurgeByVersionKey},
	{"PurgeTakesArchivedLinks", testPurgeTakesArchivedLinks},
	{"RestoreVersionAndMerge", testRestoreVersionAndMerge},
	{"Promote", testPromote},
	{"Consolidate", testConsolidate},
	{"ConsolidateGoverned", testConsolidateGoverned},
	// policy and events
	{"WritePolicy", testWritePolicy},
	{"EventsAfterCommit", testEventsAfterCommit},
	{"EventLogResumeCursor", testEventLogResumeCursor},
	{"DeliveriesQueuedWithTheWrite", testDeliveriesQueuedWithTheWrite},
	{"DeliveryOutcomes", testDeliveryOutcomes},
	{"NarrowGrants", testNarrowGrants},
	{"Inbox", testInbox},
	// links, timeline, entities, namespaces
	{"LinksCascadeOnDelete", testLinksCascadeOnDelete},
	{"PutLinkValidatesAndWritesNothingOnBadInput", testPutLinkValidatesAndWritesNothingOnBadInput},
	{"LinkLifecycleCreateInvalidateRevive", testLinkLifecycleCreateInvalidateRevive},
	{"LinkHistoryIsBounded", testLinkHistoryIsBounded},
	{"GetLinksFiltersAndNodes", testGetLinksFiltersAndNodes},
	{"Traverse", testTraverse},
	{"LinkTimeline", testLinkTimeline},
	{"LinksCascadeAtomically", testLinksCascadeAtomically},
	{"RegisterEntity", testRegisterEntity},
	{"AliasFoldingIsUnicode", testAliasFoldingIsUnicode},
	{"AliasUniquePerNamespaceWritesNothingOnConflict", testAliasUniquePerNamespaceWritesNothingOnConflict},
	{"RegisterEntityValidation", testRegisterEntityValidation},
	{"EntityCascadeOnDelete", testEntityCascadeOnDelete},
	{"EntityMovedByUpdate", testEntityMovedByUpdate},
	{"CountNamespaces", testCountNamespaces},
	// audit, export and import
	{"AuditChain", testAuditChain},
	{"ExportImportEveryKind", testExportImportEveryKind},
	// identity: attribution, guarded namespaces
	{"Attribution", testAttribution},
	{"GuardedNamespacesRefuseOrdinaryWrites", testGuardedNamespacesRefuseOrdinaryWrites},
	{"InboxReadableByOwnerOnly", testInboxReadableByOwnerOnly},
	{"FamilyKeyspaceIsTheFamilysOwn", testFamilyKeyspaceIsTheFamilysOwn},
	{"ScopeLimitsReadsAndWrites", testScopeLimitsReadsAndWrites},
	{"TenantSeesNothingOfAnother", testTenantSeesNothingOfAnother},
	// governance: policy on every write path, approvals, standards
	{"GovernanceBypassMatrix", testGovernanceBypassMatrix},
	{"GovernanceApproval", testGovernanceApproval},
	{"PendingExpiry", testPendingExpiry},
	{"ApproverRules", testApproverRules},
	{"ReRegistrationKeepsRegisteredAt", testReRegistrationKeepsRegisteredAt},
	{"StandardsOwnership", testStandardsOwnership},
}

// Limits of the API contract (the proto comments) that the suite pins.
const (
	maxLinkHistory    = 32 // Link.history: at most 32 closed intervals are kept
	maxContradictions = 5  // StoreMemoryResponse.potential_contradictions: at most 5
)

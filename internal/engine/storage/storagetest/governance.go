package storagetest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/engine/governance"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/testwait"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Governance conformance: the namespace policy binds every write path, a
// queued write is recorded and executed once on approval, approvals mean
// something, and standards belong to their owners.

const (
	denyPolicy    = `{"write":"owner","delete":"owner","promote":"owner"}`
	approvePolicy = `{"write":"approve","delete":"approve","promote":"approve"}`
)

// govFixture is a backend where alice governs namespace "gov" with policy;
// dave wrote a memory in "gov" before the policy, linked to one of bob's
// two memories in "open" (ungoverned). Bob is the caller who tries.
type govFixture struct {
	s                    storage.Backend
	clock                *Clock
	inGov, inOpen, other *aimemoryv1.Memory
	inSub                *aimemoryv1.Memory // in gov/sub, under gov's policy
	archived             *aimemoryv1.Memory // archived from gov before the policy
}

func newGovFixture(t *testing.T, open Opener, policy string, cfg *governance.Config) *govFixture {
	t.Helper()
	s, clock := open.open(t, storage.Options{Governance: cfg})
	f := &govFixture{s: s, clock: clock}
	bob := as("ai:bob")
	f.inGov = storeAs(t, as("ai:dave"), s, Mem("dave in gov", "governed words", InNS("gov")))
	f.inOpen = storeAs(t, bob, s, Mem("bob in open", "open words", InNS("open")))
	f.inSub = storeAs(t, as("ai:dave"), s, Mem("dave in sub", "sub words", InNS("gov/sub")))
	f.other = storeAs(t, bob, s, Mem("bob other", "other words", InNS("open")))
	if _, err := s.PutLink(bob, &aimemoryv1.PutLinkRequest{SourceId: f.inGov.Id, TargetId: f.other.Id, Relation: "related_to"}); err != nil {
		t.Fatal(err)
	}
	f.archived = storeAs(t, as("ai:dave"), s, Mem("dave archived", "kept words", InNS("gov")))
	if _, err := s.DeleteMemories(as("ai:dave"), &aimemoryv1.DeleteMemoriesRequest{Ids: []string{f.archived.Id}, Archive: true}); err != nil {
		t.Fatal(err)
	}
	std := storeAs(t, as("ai:alice"), s, Mem("gov rules", "the rules of gov", InNS("gov")))
	if _, err := s.SetStandard(as("ai:alice"), &aimemoryv1.SetStandardRequest{Namespace: "gov", Id: std.Id, GovernanceJson: policy}); err != nil {
		t.Fatal(err)
	}
	return f
}

// writePaths are every write a caller can ask for, against the fixture.
func writePaths(f *govFixture) []struct {
	name string
	do   func(ctx context.Context) error
} {
	s := f.s
	ns := func(n string) *string { return &n }
	return []struct {
		name string
		do   func(ctx context.Context) error
	}{
		{"store", func(ctx context.Context) error {
			_, err := s.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: Mem("new in gov", "x", InNS("gov"))})
			return err
		}},
		{"merge", func(ctx context.Context) error {
			_, err := s.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: Mem("dave in gov", "overwritten", InNS("gov"))})
			return err
		}},
		{"update", func(ctx context.Context) error {
			_, err := s.UpdateMemory(ctx, &aimemoryv1.UpdateMemoryRequest{Id: f.inGov.Id, Content: ns("changed")})
			return err
		}},
		{"move into", func(ctx context.Context) error {
			_, err := s.UpdateMemory(ctx, &aimemoryv1.UpdateMemoryRequest{Id: f.inOpen.Id, Namespace: ns("gov")})
			return err
		}},
		{"move out", func(ctx context.Context) error {
			_, err := s.UpdateMemory(ctx, &aimemoryv1.UpdateMemoryRequest{Id: f.inGov.Id, Namespace: ns("open")})
			return err
		}},
		{"delete", func(ctx context.Context) error {
			_, err := s.DeleteMemories(ctx, &aimemoryv1.DeleteMemoriesRequest{Ids: []string{f.inGov.Id}})
			return err
		}},
		{"delete mixed", func(ctx context.Context) error {
			_, err := s.DeleteMemories(ctx, &aimemoryv1.DeleteMemoriesRequest{Ids: []string{f.other.Id, f.inGov.Id}})
			return err
		}},
		{"delete to the archive", func(ctx context.Context) error {
			_, err := s.DeleteMemories(ctx, &aimemoryv1.DeleteMemoriesRequest{Ids: []string{f.inGov.Id}, Archive: true})
			return err
		}},
		{"forget", func(ctx context.Context) error {
			_, err := s.Forget(ctx, &aimemoryv1.ForgetRequest{Pattern: "governed words"})
			return err
		}},
		{"promote", func(ctx context.Context) error {
			_, err := s.PromoteMemory(ctx, &aimemoryv1.PromoteMemoryRequest{Id: f.inGov.Id})
			return err
		}},
		{"promote into", func(ctx context.Context) error {
			_, err := s.PromoteMemory(ctx, &aimemoryv1.PromoteMemoryRequest{Id: f.inSub.Id, ToNamespace: "gov"})
			return err
		}},
		{"consolidate into", func(ctx context.Context) error {
			_, err := s.Consolidate(ctx, &aimemoryv1.ConsolidateRequest{Ids: []string{f.inOpen.Id, f.other.Id}, Title: "bob merged", Summary: "merged", Namespace: "gov"})
			return err
		}},
		{"consolidate sources", func(ctx context.Context) error {
			_, err := s.Consolidate(ctx, &aimemoryv1.ConsolidateRequest{Ids: []string{f.inGov.Id, f.other.Id}, Title: "bob merged", Summary: "merged", Namespace: "open"})
			return err
		}},
		{"restore", func(ctx context.Context) error {
			_, err := s.RestoreMemory(ctx, &aimemoryv1.RestoreMemoryRequest{Id: f.archived.Id})
			return err
		}},
		{"link", func(ctx context.Context) error {
			_, err := s.PutLink(ctx, &aimemoryv1.PutLinkRequest{SourceId: f.inOpen.Id, TargetId: f.inGov.Id, Relation: "supersedes"})
			return err
		}},
		{"unlink", func(ctx context.Context) error {
			_, err := s.InvalidateLink(ctx, &aimemoryv1.InvalidateLinkRequest{SourceId: f.inGov.Id, TargetId: f.other.Id, Relation: "related_to"})
			return err
		}},
	}
}

// snapshot is what a refused write must leave as it was.
func govSnapshot(t *testing.T, f *govFixture) string {
	t.Helper()
	var b strings.Builder
	list, err := f.s.ListMemories(Operator(), &aimemoryv1.ListMemoriesRequest{Limit: 200})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range list.Memories {
		b.WriteString(m.Id + "|" + m.Namespace + "|" + m.Title + "|" + m.Content + "\n")
	}
	links, err := f.s.GetLinks(Operator(), &aimemoryv1.GetLinksRequest{Ids: []string{f.inGov.Id, f.inOpen.Id, f.other.Id}})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range links.Links {
		b.WriteString(l.SourceId + ">" + l.TargetId + ":" + l.Relation + "\n")
	}
	return b.String()
}

// Under a deny policy every write path is refused for a caller who is not
// the owner, and under an approval policy queued, and either way nothing
// is written (spec §15 items 10-12: moves in and out are checked too).
func testGovernanceBypassMatrix(t *testing.T, open Opener) {
	for _, policy := range []string{denyPolicy, approvePolicy} {
		f := newGovFixture(t, open, policy, nil)
		for _, p := range writePaths(f) {
			before := govSnapshot(t, f)
			err := p.do(as("ai:bob"))
			var pe *storage.PendingError
			switch {
			case policy == denyPolicy && !errors.Is(err, storage.ErrDenied):
				t.Errorf("deny policy, %s by bob: %v, want ErrDenied", p.name, err)
			case policy == approvePolicy && (!errors.As(err, &pe) || pe.ID == ""):
				t.Errorf("approval policy, %s by bob: %v, want a PendingError with an id", p.name, err)
			}
			if after := govSnapshot(t, f); after != before {
				t.Errorf("%s %s changed the store:\nbefore %s\nafter  %s", policy, p.name, before, after)
			}
		}
		if policy == approvePolicy {
			list, err := f.s.ListPending(Operator(), &aimemoryv1.ListPendingRequest{})
			if err != nil || len(list.Pending) != len(writePaths(f)) {
				t.Errorf("pending after the matrix: %d, %v; want %d", len(list.GetPending()), err, len(writePaths(f)))
			}
		}
		check(t, f.s)
	}
}

// A queued write executes on approval by someone else, as its requester,
// exactly once even when approvers race; the requester cannot approve or
// reject it.
func testGovernanceApproval(t *testing.T, open Opener) {
	f := newGovFixture(t, open, approvePolicy, nil)
	_, err := f.s.StoreMemory(as("ai:bob"), &aimemoryv1.StoreMemoryRequest{Memory: Mem("queued", "awaiting approval", InNS("gov"))})
	var pe *storage.PendingError
	if !errors.As(err, &pe) || pe.ID == "" || pe.Namespace != "gov" || pe.Approver != "human" {
		t.Fatalf("store: %v, want queued in gov with approver human", err)
	}
	for _, verb := range []string{"approve", "reject"} {
		var err error
		if verb == "approve" {
			_, err = f.s.ApprovePending(as("ai:bob"), &aimemoryv1.DecidePendingRequest{Id: pe.ID})
		} else {
			_, err = f.s.RejectPending(as("AI:BOB"), &aimemoryv1.DecidePendingRequest{Id: pe.ID})
		}
		if !errors.Is(err, storage.ErrDenied) || !strings.Contains(err.Error(), "own request") {
			t.Errorf("%s by the requester: %v, want refused", verb, err)
		}
	}
	if _, err := f.s.ApprovePending(as("ai:carol"), &aimemoryv1.DecidePendingRequest{Id: "no-such-id"}); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("approve unknown id: %v, want ErrNotFound", err)
	}
	before := stats(t, f.s).Total
	const racers = 8
	var wg sync.WaitGroup
	results := make([]error, racers)
	for i := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, results[i] = f.s.ApprovePending(as("ai:approver"+string(rune('a'+i))), &aimemoryv1.DecidePendingRequest{Id: pe.ID})
		}()
	}
	testwait.Wait(t, &wg, "the racing approvals")
	won := 0
	for _, err := range results {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, storage.ErrDecided):
			t.Errorf("racing approval: %v, want ErrDecided", err)
		}
	}
	if won != 1 || stats(t, f.s).Total != before+1 {
		t.Fatalf("%d approvals succeeded and %d memories were added; want exactly one of each", won, stats(t, f.s).Total-before)
	}
	list, err := f.s.ListPending(Operator(), &aimemoryv1.ListPendingRequest{Status: "approved"})
	if err != nil || len(list.Pending) != 1 {
		t.Fatalf("approved list: %v %v", list, err)
	}
	p := list.Pending[0]
	m := get(t, f.s, p.ResultMemoryId)
	if m == nil || m.Title != "queued" || m.CreatedBy != "ai:bob" || !strings.HasPrefix(p.DecidedBy, "ai:approver") {
		t.Errorf("executed memory %v decided by %q; want bob's memory", m, p.DecidedBy)
	}
	if _, err := f.s.RejectPending(as("ai:carol"), &aimemoryv1.DecidePendingRequest{Id: pe.ID}); !errors.Is(err, storage.ErrDecided) {
		t.Errorf("reject after approval: %v, want ErrDecided", err)
	}
	// Link and unlink approvals record the requester (the pending action's
	// requested_by), not the approver, as who observed and invalidated.
	_, err = f.s.PutLink(as("ai:bob"), &aimemoryv1.PutLinkRequest{SourceId: f.inOpen.Id, TargetId: f.inGov.Id, Relation: "supersedes"})
	if !errors.As(err, &pe) {
		t.Fatalf("link: %v", err)
	}
	if resp, err := f.s.ApprovePending(as("ai:carol"), &aimemoryv1.DecidePendingRequest{Id: pe.ID}); err != nil || !resp.Approved {
		t.Fatalf("approved link: %v %v", resp, err)
	}
	_, err = f.s.InvalidateLink(as("ai:bob"), &aimemoryv1.InvalidateLinkRequest{SourceId: f.inGov.Id, TargetId: f.other.Id, Relation: "related_to"})
	if !errors.As(err, &pe) {
		t.Fatalf("unlink: %v", err)
	}
	if resp, err := f.s.ApprovePending(as("ai:carol"), &aimemoryv1.DecidePendingRequest{Id: pe.ID}); err != nil || !resp.Approved {
		t.Fatalf("approved unlink: %v %v", resp, err)
	}
	links, err := f.s.GetLinks(Operator(), &aimemoryv1.GetLinksRequest{Ids: []string{f.inOpen.Id, f.inGov.Id}})
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]string{}
	for _, l := range links.Links {
		by[l.Relation] = l.ObservedBy + "/" + l.InvalidatedBy
	}
	if by["supersedes"] != "ai:bob/" || by["related_to"] != "ai:bob/ai:bob" {
		t.Errorf("approved link and unlink recorded %v; want ai:bob as observer and invalidator", by)
	}
	// Delete approvals execute their own kind.
	_, err = f.s.DeleteMemories(as("ai:bob"), &aimemoryv1.DeleteMemoriesRequest{Ids: []string{f.inGov.Id}})
	if !errors.As(err, &pe) {
		t.Fatalf("delete: %v", err)
	}
	if resp, err := f.s.ApprovePending(as("ai:carol"), &aimemoryv1.DecidePendingRequest{Id: pe.ID}); err != nil || !resp.Approved || get(t, f.s, f.inGov.Id) != nil {
		t.Errorf("approved delete: %v %v; memory still there: %v", resp, err, get(t, f.s, f.inGov.Id) != nil)
	}
	// Forget approvals archive what the request matched; promote approvals promote.
	_, err = f.s.Forget(as("ai:bob"), &aimemoryv1.ForgetRequest{Namespace: "gov/sub", Pattern: "sub words"})
	if !errors.As(err, &pe) {
		t.Fatalf("forget: %v", err)
	}
	if resp, err := f.s.ApprovePending(as("ai:carol"), &aimemoryv1.DecidePendingRequest{Id: pe.ID}); err != nil || !resp.Approved || get(t, f.s, f.inSub.Id) != nil {
		t.Errorf("approved forget: %v %v; memory still live: %v", resp, err, get(t, f.s, f.inSub.Id) != nil)
	}
	if a, err := f.s.Archived(Operator(), f.inSub.Id); err != nil || a.Reason != storage.ArchiveReasonForget {
		t.Errorf("forgotten memory in the archive: %v %v", a, err)
	}
	_, err = f.s.PromoteMemory(as("ai:bob"), &aimemoryv1.PromoteMemoryRequest{Id: m.Id})
	if !errors.As(err, &pe) {
		t.Fatalf("promote: %v", err)
	}
	if resp, err := f.s.ApprovePending(as("ai:carol"), &aimemoryv1.DecidePendingRequest{Id: pe.ID}); err != nil || !resp.Approved || get(t, f.s, m.Id).GetTier() != "long" {
		t.Errorf("approved promote: %v %v; tier %q", resp, err, get(t, f.s, m.Id).GetTier())
	}
	// An approval whose action can no longer run changes nothing.
	_, err = f.s.UpdateMemory(as("ai:bob"), &aimemoryv1.UpdateMemoryRequest{Id: f.inOpen.Id, Namespace: strPtr("gov")})
	if !errors.As(err, &pe) {
		t.Fatalf("move: %v", err)
	}
	if _, err := f.s.DeleteMemories(as("ai:bob"), &aimemoryv1.DeleteMemoriesRequest{Ids: []string{f.inOpen.Id}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.ApprovePending(as("ai:carol"), &aimemoryv1.DecidePendingRequest{Id: pe.ID}); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("approving a move of a deleted memory: %v, want ErrNotFound", err)
	}
	if list, _ := f.s.ListPending(Operator(), &aimemoryv1.ListPendingRequest{}); len(list.GetPending()) != 1 || list.Pending[0].Id != pe.ID {
		t.Errorf("the failed approval should leave the action pending: %v", list)
	}
	check(t, f.s)
}

func strPtr(s string) *string { return &s }

// Pending actions expire after the configured time (on the backend's
// clock); the default list shows pending ones only.
func testPendingExpiry(t *testing.T, open Opener) {
	f := newGovFixture(t, open, approvePolicy, &governance.Config{PendingTTL: time.Hour})
	_, err := f.s.StoreMemory(as("ai:bob"), &aimemoryv1.StoreMemoryRequest{Memory: Mem("late", "x", InNS("gov"))})
	var pe *storage.PendingError
	if !errors.As(err, &pe) {
		t.Fatal(err)
	}
	if list, _ := f.s.ListPending(Operator(), &aimemoryv1.ListPendingRequest{}); len(list.GetPending()) != 1 {
		t.Fatalf("pending before expiry: %v", list)
	}
	f.clock.Add(time.Hour + time.Second)
	if list, _ := f.s.ListPending(Operator(), &aimemoryv1.ListPendingRequest{}); len(list.GetPending()) != 0 {
		t.Errorf("default list after expiry: %v, want none", list)
	}
	if list, _ := f.s.ListPending(Operator(), &aimemoryv1.ListPendingRequest{Status: "expired"}); len(list.GetPending()) != 1 {
		t.Errorf("expired list: %v", list)
	}
	if _, err := f.s.ApprovePending(as("ai:carol"), &aimemoryv1.DecidePendingRequest{Id: pe.ID}); !errors.Is(err, storage.ErrDecided) || !strings.Contains(err.Error(), "expired") {
		t.Errorf("approve after expiry: %v, want expired", err)
	}
	if _, err := f.s.ListPending(Operator(), &aimemoryv1.ListPendingRequest{Status: "done"}); err == nil {
		t.Error("unknown status accepted")
	}
}

func registerAgents(t *testing.T, s storage.Backend, who ...string) {
	t.Helper()
	for _, w := range who {
		if _, err := s.RegisterAgent(as(w), &aimemoryv1.RegisterAgentRequest{AgentType: "test"}); err != nil {
			t.Fatal(err)
		}
	}
}

// testReRegistrationKeepsRegisteredAt: an agent confined to its own
// namespace, which cannot read the registry, registers again later; its
// entry keeps the first registered_at and moves last_seen_at on.
func testReRegistrationKeepsRegisteredAt(t *testing.T, open Opener) {
	s, clk := open.open(t, storage.Options{})
	dana := tenant("ai:dana", "team-d")
	first, err := s.RegisterAgent(dana, &aimemoryv1.RegisterAgentRequest{AgentType: "test"})
	if err != nil || !first.GetCreated() {
		t.Fatalf("first registration: %v, %v", first, err)
	}
	registeredAt := clk.Now().UnixNano()
	clk.Add(time.Hour)
	again, err := s.RegisterAgent(dana, &aimemoryv1.RegisterAgentRequest{AgentType: "test"})
	if err != nil || again.GetCreated() || again.GetAgent().GetId() != first.GetAgent().GetId() {
		t.Fatalf("registration again: %v, %v; want the same entry", again, err)
	}
	list, err := s.ListAgents(Operator(), &aimemoryv1.ListAgentsRequest{})
	if err != nil || len(list.GetAgents()) != 1 {
		t.Fatalf("agents = %v, %v; want dana's entry", list, err)
	}
	if a := list.GetAgents()[0]; a.GetRegisteredAt() != registeredAt || a.GetLastSeenAt() != clk.Now().UnixNano() {
		t.Errorf("registered_at %d, last_seen_at %d; want %d (the first) and %d (now)", a.GetRegisteredAt(), a.GetLastSeenAt(), registeredAt, clk.Now().UnixNano())
	}
}

// The approver rule is checked when the write is requested (a rule only
// the requester could meet is refused at once) and again at approval.
func testApproverRules(t *testing.T, open Opener) {
	f := newGovFixture(t, open, `{"write":"approve","approver":{"agent":"ai:alice"}}`, nil)
	store := func(who, title string) error {
		_, err := f.s.StoreMemory(as(who), &aimemoryv1.StoreMemoryRequest{Memory: Mem(title, "x", InNS("gov"))})
		return err
	}
	if err := store("ai:alice", "by the approver"); !errors.Is(err, storage.ErrDenied) || !strings.Contains(err.Error(), "nobody approves their own request") {
		t.Errorf("the designated approver's own write: %v, want refused at request", err)
	}
	var pe *storage.PendingError
	if err := store("ai:bob", "by bob"); !errors.As(err, &pe) || pe.Approver != "agent:ai:alice" {
		t.Fatalf("bob's write: %v", err)
	}
	if _, err := f.s.ApprovePending(as("ai:carol"), &aimemoryv1.DecidePendingRequest{Id: pe.ID}); !errors.Is(err, storage.ErrDenied) {
		t.Errorf("approval by someone else than the designated approver: %v", err)
	}
	if _, err := f.s.RejectPending(as("ai:carol"), &aimemoryv1.DecidePendingRequest{Id: pe.ID}); !errors.Is(err, storage.ErrDenied) {
		t.Errorf("rejection by someone else than the designated approver: %v", err)
	}
	if resp, err := f.s.ApprovePending(as("ai:alice"), &aimemoryv1.DecidePendingRequest{Id: pe.ID}); err != nil || !resp.Approved {
		t.Errorf("approval by the designated approver: %v %v", resp, err)
	}

	// Consensus: needs enough registered agents besides the requester, one
	// vote each (case-insensitively), approved on the quorum-th vote.
	c := newGovFixture(t, open, `{"write":"approve","approver":{"consensus":2},"delete":"any"}`, nil)
	cstore := func(who, title string) error {
		_, err := c.s.StoreMemory(as(who), &aimemoryv1.StoreMemoryRequest{Memory: Mem(title, "x", InNS("gov"))})
		return err
	}
	registerAgents(t, c.s, "ai:bob", "ai:v1")
	if err := cstore("ai:bob", "too few voters"); !errors.Is(err, storage.ErrDenied) || !strings.Contains(err.Error(), "registered agents") {
		t.Errorf("consensus with one other registered agent: %v, want refused at request", err)
	}
	registerAgents(t, c.s, "ai:v2")
	if err := cstore("ai:bob", "voted"); !errors.As(err, &pe) {
		t.Fatalf("consensus store: %v", err)
	}
	if _, err := c.s.ApprovePending(as("ai:unregistered"), &aimemoryv1.DecidePendingRequest{Id: pe.ID}); !errors.Is(err, storage.ErrDenied) {
		t.Errorf("unregistered voter: %v", err)
	}
	for i, voter := range []string{"ai:v1", "AI:V1"} {
		resp, err := c.s.ApprovePending(as(voter), &aimemoryv1.DecidePendingRequest{Id: pe.ID})
		if voter == "AI:V1" {
			// not registered under that spelling: refused, vote not counted
			if !errors.Is(err, storage.ErrDenied) {
				t.Errorf("vote %d: %v", i, err)
			}
			continue
		}
		if err != nil || resp.Approved || resp.Votes != 1 || resp.Quorum != 2 {
			t.Errorf("first vote: %v %v", resp, err)
		}
	}
	if resp, err := c.s.ApprovePending(as("ai:v1"), &aimemoryv1.DecidePendingRequest{Id: pe.ID}); err != nil || resp.Approved || resp.Votes != 1 {
		t.Errorf("repeated vote: %v %v, want still one vote", resp, err)
	}
	resp, err := c.s.ApprovePending(as("ai:v2"), &aimemoryv1.DecidePendingRequest{Id: pe.ID})
	if err != nil || !resp.Approved || resp.Votes != 2 || get(t, c.s, resp.Action.ResultMemoryId).GetTitle() != "voted" {
		t.Errorf("second vote: %v %v, want executed", resp, err)
	}

	// "registered" lets registered agents write and refuses the rest.
	r := newGovFixture(t, open, `{"write":"registered"}`, nil)
	registerAgents(t, r.s, "ai:member")
	if _, err := r.s.StoreMemory(as("ai:member"), &aimemoryv1.StoreMemoryRequest{Memory: Mem("m", "x", InNS("gov"))}); err != nil {
		t.Errorf("registered writer: %v", err)
	}
	if _, err := r.s.StoreMemory(as("ai:stranger"), &aimemoryv1.StoreMemoryRequest{Memory: Mem("s", "x", InNS("gov"))}); !errors.Is(err, storage.ErrDenied) {
		t.Errorf("unregistered writer: %v", err)
	}
}

// Standards belong to their owners: the first setter (or [governance.owners]);
// operators may always set, clear and reassign; a standard's memory never
// expires by tier; an owner-level policy inherited from a parent admits
// that parent's owner (spec §15 item 11); the default policy is enforced
// (item 10).
func testStandardsOwnership(t *testing.T, open Opener) {
	cfg := &governance.Config{Operators: []string{"ai:op"}, Owners: map[string]string{"pinned": "ai:carol"}}
	s, clock := open.open(t, storage.Options{Governance: cfg})
	alice, bob := as("ai:alice"), as("ai:bob")
	std := storeAs(t, alice, s, Mem("team rules", "write here carefully", InNS("team"), Tier("short")))
	set := func(ctx context.Context, ns, policy string) error {
		_, err := s.SetStandard(ctx, &aimemoryv1.SetStandardRequest{Namespace: ns, Id: std.Id, GovernanceJson: policy})
		return err
	}
	if err := set(alice, "team", `{"write":"owner"}`); err != nil {
		t.Fatal(err)
	}
	if m := get(t, s, std.Id); m.Tier != "long" || m.ExpiresAt != 0 {
		t.Errorf("standard memory tier %s expires %d, want long and never", m.Tier, m.ExpiresAt)
	}
	clock.Add(30 * 24 * time.Hour)
	if n, _ := s.CollectGarbage(Operator(), &aimemoryv1.CollectGarbageRequest{}); len(n.GetCollected()) != 0 {
		t.Errorf("gc collected %v, the standard must stay", n.GetCollected())
	}
	if err := set(bob, "team", `{"write":"any"}`); !errors.Is(err, storage.ErrDenied) {
		t.Errorf("set by a non-owner: %v", err)
	}
	if _, err := s.ClearStandard(bob, &aimemoryv1.ClearStandardRequest{Namespace: "team"}); !errors.Is(err, storage.ErrDenied) {
		t.Errorf("clear by a non-owner: %v", err)
	}
	if err := set(bob, "pinned", `{"write":"any"}`); !errors.Is(err, storage.ErrDenied) {
		t.Errorf("set of a config-owned namespace by another: %v", err)
	}
	if err := set(as("ai:carol"), "pinned", `{"write":"any"}`); err != nil {
		t.Errorf("set by the configured owner: %v", err)
	}
	// Inherited owner-level write: alice (owner of team) writes into team/sub, bob may not.
	if _, err := s.StoreMemory(alice, &aimemoryv1.StoreMemoryRequest{Memory: Mem("deep", "x", InNS("team/sub"))}); err != nil {
		t.Errorf("owner writing below her namespace: %v", err)
	}
	if _, err := s.StoreMemory(bob, &aimemoryv1.StoreMemoryRequest{Memory: Mem("deep2", "x", InNS("team/sub"))}); !errors.Is(err, storage.ErrDenied) {
		t.Errorf("non-owner writing below: %v", err)
	}
	got, err := s.GetStandard(Operator(), &aimemoryv1.GetStandardRequest{Namespace: "team/sub", Inherit: true})
	if err != nil || got.PolicyFrom != "team" || !strings.Contains(got.EffectivePolicyJson, `"write":"owner"`) || len(got.Levels) != 1 || got.Levels[0].Memory.GetId() != std.Id {
		t.Errorf("get_standard team/sub inherit: %v %v", got, err)
	}
	// Operators reassign and clear.
	if _, err := s.SetStandard(as("ai:op"), &aimemoryv1.SetStandardRequest{Namespace: "team", Id: std.Id, Owner: "ai:bob"}); err != nil {
		t.Errorf("operator reassign: %v", err)
	}
	if _, err := s.StoreMemory(bob, &aimemoryv1.StoreMemoryRequest{Memory: Mem("deep3", "x", InNS("team/sub"))}); err != nil {
		t.Errorf("new owner writing: %v", err)
	}
	if resp, err := s.ClearStandard(as("ai:op"), &aimemoryv1.ClearStandardRequest{Namespace: "team"}); err != nil || !resp.Cleared {
		t.Errorf("operator clear: %v %v", resp, err)
	}
	if _, err := s.StoreMemory(as("ai:zed"), &aimemoryv1.StoreMemoryRequest{Memory: Mem("free", "x", InNS("team/sub"))}); err != nil {
		t.Errorf("write after clear: %v", err)
	}
	if _, err := s.SetStandard(alice, &aimemoryv1.SetStandardRequest{Namespace: "team", Id: std.Id, GovernanceJson: `{"write":"sometimes"}`}); err == nil || !strings.Contains(err.Error(), "governance.write") {
		t.Errorf("bad policy: %v", err)
	}

	// The default policy is the one enforced: delete by the creator only.
	d, _ := open.open(t, storage.Options{Governance: &governance.Config{Default: &governance.Policy{
		Write: governance.Any, Promote: governance.Any, Delete: governance.Owner, Approver: governance.Approver{Kind: governance.ApproverHuman}, Inherit: true}}})
	mine := storeAs(t, alice, d, Mem("mine", "x"))
	if _, err := d.DeleteMemories(bob, &aimemoryv1.DeleteMemoriesRequest{Ids: []string{mine.Id}}); !errors.Is(err, storage.ErrDenied) {
		t.Errorf("default delete:owner, delete by another: %v", err)
	}
	if _, err := d.DeleteMemories(alice, &aimemoryv1.DeleteMemoriesRequest{Ids: []string{mine.Id}}); err != nil {
		t.Errorf("default delete:owner, delete by the creator: %v", err)
	}
	if g, _ := d.GetStandard(Operator(), &aimemoryv1.GetStandardRequest{Namespace: "anything"}); !strings.Contains(g.GetEffectivePolicyJson(), `"delete":"owner"`) || g.GetPolicyFrom() != "" {
		t.Errorf("get_standard shows %v, want the enforced default", g)
	}

	// A default owner-level policy admits the namespace's own owner (and
	// operators), never nobody.
	o, _ := open.open(t, storage.Options{Governance: &governance.Config{Operators: []string{"ai:op"}, Default: &governance.Policy{
		Write: governance.Owner, Promote: governance.Any, Delete: governance.Owner, Approver: governance.Approver{Kind: governance.ApproverHuman}, Inherit: true}}})
	doc := storeAs(t, as("ai:op"), o, Mem("carol's rules", "x", InNS("docs")))
	if _, err := o.SetStandard(as("ai:carol"), &aimemoryv1.SetStandardRequest{Namespace: "carols", Id: doc.Id}); err != nil {
		t.Fatal(err)
	}
	if _, err := o.StoreMemory(as("ai:carol"), &aimemoryv1.StoreMemoryRequest{Memory: Mem("c", "x", InNS("carols"))}); err != nil {
		t.Errorf("default write:owner, the namespace's owner: %v", err)
	}
	if _, err := o.StoreMemory(bob, &aimemoryv1.StoreMemoryRequest{Memory: Mem("b", "x", InNS("carols"))}); !errors.Is(err, storage.ErrDenied) {
		t.Errorf("default write:owner, another: %v", err)
	}
}

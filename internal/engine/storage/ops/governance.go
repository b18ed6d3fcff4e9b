package ops

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/governance"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Governance decisions, written once for every backend: who may set a
// namespace's standard, when a pending action is decidable, the approver
// rule, and the expiry of a pending action. The backend supplies its
// transaction (GovRecords, GovTx); the rules are here.

// Pending statuses besides storage.StatusPending.
const (
	StatusApproved = "approved"
	StatusRejected = "rejected"
	StatusExpired  = "expired" // read-time: pending past its expires_at
)

// GovRecords is what the governance steps read and write in a transaction.
type GovRecords interface {
	Context() context.Context // the request's, with its caller
	View() storage.GovernanceView
	Now() int64
	// Get reads a live memory by exact id, as Tx.Get.
	Get(id string) (*aimemoryv1.Memory, error)
	// Put writes m over old, as Tx.Put.
	Put(old, m *aimemoryv1.Memory, event string) error
	Records
}

// GovTx is GovRecords and the execution of an approved action (Approve).
type GovTx interface {
	GovRecords
	// ExecuteAs runs p's payload as its requester, with its approval, in
	// this transaction; the result is the memory it wrote or removed.
	ExecuteAs(p *aimemoryv1.PendingAction) (string, error)
}

// ValidStandardNamespace: "*" or a namespace outside the guarded ones.
func ValidStandardNamespace(field, ns string) error {
	if ns == governance.Global {
		return nil
	}
	if err := record.ValidateNamespace(field, ns); err != nil {
		return err
	}
	if authz.IsGuarded(ns) {
		return &record.FieldError{Field: field, Rule: "must not be a guarded namespace (beginning with '_')"}
	}
	return nil
}

// MayGovern checks that the caller (grant, who) may set or clear ns's
// standard: first its scope must cover ns (authz; "*", the global level,
// only a grant of every namespace), so nobody claims or changes another
// tenant's namespace, [governance] operators included; then it must be an
// operator, the owner, or anyone while there is none (the first setter
// becomes it).
func MayGovern(gov *governance.Config, grant authz.Grant, ns string, row *aimemoryv1.Standard, who, verb string) error {
	if err := grant.CheckWrite(verb, ns); err != nil {
		return err
	}
	if who == "" {
		return &storage.DeniedError{Reason: verb + " refused: it needs a caller identity"}
	}
	owner := storage.OwnerOf(gov, ns, row)
	if gov.IsOperator(who) || owner == "" || owner == who {
		return nil
	}
	return &storage.DeniedError{Reason: fmt.Sprintf("%s refused: namespace %s is owned by %s; only its owner or an operator ([governance] operators) may", verb, record.Quote(ns), record.Quote(owner))}
}

// SetStandardPolicy validates a set_standard request before its
// transaction; the answer is its policy in canonical form ("" for none).
func SetStandardPolicy(req *aimemoryv1.SetStandardRequest) (string, error) {
	ns, id := req.GetNamespace(), req.GetId()
	if err := ValidStandardNamespace("namespace", ns); err != nil {
		return "", err
	}
	if err := record.ValidateID("id", id); err != nil {
		return "", err
	}
	if req.Parent != nil {
		if err := ValidStandardNamespace("parent", req.GetParent()); err != nil {
			return "", err
		}
		if req.GetParent() == ns {
			return "", &record.FieldError{Field: "parent", Rule: "must differ from namespace (a namespace cannot be its own parent)"}
		}
	}
	policy := ""
	if raw := req.GetGovernanceJson(); raw != "" {
		p, err := governance.Parse([]byte(raw))
		if err != nil {
			return "", &record.FieldError{Field: "governance", Rule: err.Error()}
		}
		policy = p.Canonical()
	}
	if o := req.GetOwner(); o != "" {
		if err := record.ValidateAgentID("owner", o); err != nil {
			return "", err
		}
	}
	return policy, nil
}

// SetStandard pins a memory as ns's standard, with its policy (validated
// by SetStandardPolicy). The memory becomes long-tier with no expiry in
// the same transaction: a standard never expires by tier.
func SetStandard(t GovRecords, req *aimemoryv1.SetStandardRequest, policy string) (*aimemoryv1.SetStandardResponse, error) {
	ns, id := req.GetNamespace(), req.GetId()
	v := t.View()
	gov := v.Governance()
	row, err := v.Standard(ns)
	if err != nil {
		return nil, err
	}
	who := storage.Principal(t.Context())
	grant := authz.Of(t.Context())
	if err := MayGovern(gov, grant, ns, row, who, "set_standard"); err != nil {
		return nil, err
	}
	if err := grant.CheckWrite("set_standard", req.GetParent()); err != nil {
		return nil, err // a parent is a namespace whose policy would govern the caller's
	}
	m, err := t.Get(id)
	if err != nil {
		return nil, err
	}
	if m == nil {
		return nil, fmt.Errorf("%w: %s", storage.ErrNotFound, id)
	}
	if authz.IsGuarded(m.GetNamespace()) {
		return nil, &record.FieldError{Field: "id", Rule: "must name a memory outside the guarded namespaces"}
	}
	next := &aimemoryv1.Standard{Namespace: ns, StandardId: id, SetBy: who, UpdatedAt: t.Now()}
	if row != nil {
		next.Owner, next.PolicyJson = row.Owner, row.PolicyJson
		next.Parent, next.ParentExplicit = row.Parent, row.ParentExplicit
	}
	if next.Owner == "" {
		next.Owner = who // the first setter owns it
	}
	if o := req.GetOwner(); o != "" && o != next.Owner {
		if _, pinned := gov.ConfiguredOwner(ns); pinned {
			return nil, &storage.DeniedError{Reason: fmt.Sprintf("set_standard refused: namespace %s's owner is set by [governance.owners]", record.Quote(ns))}
		}
		next.Owner = o
	}
	if o, ok := gov.ConfiguredOwner(ns); ok {
		next.Owner, next.OwnerFromConfig = o, true
	}
	if policy != "" {
		next.PolicyJson = policy
	}
	switch {
	case req.Parent != nil:
		next.Parent, next.ParentExplicit = req.GetParent(), true
	case !next.ParentExplicit:
		next.Parent = ""
		for _, cand := range governance.ParentCandidates(ns) {
			if r, err := v.Standard(cand); err != nil {
				return nil, err
			} else if r != nil {
				next.Parent = cand
				break
			}
		}
	}
	if err := pin(t, m); err != nil {
		return nil, err
	}
	return &aimemoryv1.SetStandardResponse{Standard: next}, t.PutRecord(StandardRecord(next))
}

// pin makes a standard's memory permanent: long tier, no expiry. An engine
// effect of setting the standard (like auto-promotion), not the caller's
// edit of the memory, so updated_at and the write policy are untouched.
func pin(t GovRecords, m *aimemoryv1.Memory) error {
	if m.GetTier() == "long" && m.GetExpiresAt() == 0 {
		return nil
	}
	next := rules.Clone(m)
	next.Tier, next.ExpiresAt = "long", 0
	return t.Put(m, next, storage.EventPromote)
}

// MayClearStandard checks a clear_standard of ns's row (nil: nothing to
// clear, which is allowed and clears nothing).
func MayClearStandard(t GovRecords, ns string, row *aimemoryv1.Standard) error {
	if row == nil {
		return authz.Of(t.Context()).CheckWrite("clear_standard", ns) // nothing there: still not another's to ask about
	}
	return MayGovern(t.View().Governance(), authz.Of(t.Context()), ns, row, storage.Principal(t.Context()), "clear_standard")
}

// Effective shows a pending action past its expiry as expired.
func Effective(p *aimemoryv1.PendingAction, now int64) *aimemoryv1.PendingAction {
	if p.Status == storage.StatusPending && p.ExpiresAt != 0 && now >= p.ExpiresAt {
		p.Status = StatusExpired
	}
	return p
}

// ListPendingArgs validates a list_pending request: the status wanted
// (default pending, or "all") and the limit.
func ListPendingArgs(req *aimemoryv1.ListPendingRequest) (string, int, error) {
	want := req.GetStatus()
	switch want {
	case "":
		want = storage.StatusPending
	case storage.StatusPending, StatusApproved, StatusRejected, StatusExpired, "all":
	default:
		return "", 0, &record.FieldError{Field: "status", Rule: "must be pending, approved, rejected, expired or all (got " + record.Quote(want) + ")"}
	}
	limit := int(req.GetLimit())
	switch {
	case limit == 0:
		limit = storage.DefaultPendingLimit
	case limit > storage.MaxPendingLimit:
		return "", 0, &record.FieldError{Field: "limit", Rule: fmt.Sprintf("must be at most %d (got %d)", storage.MaxPendingLimit, limit)}
	}
	return want, limit, nil
}

// Listed shows p as Effective and reports whether it belongs in a list of
// want for a caller who may read readable (authz): an action of a
// namespace outside its grant is not listed, payload and all.
func Listed(readable func(ns string) bool, p *aimemoryv1.PendingAction, want string, now int64) bool {
	return readable(p.GetNamespace()) && (Effective(p, now).Status == want || want == "all")
}

// decidable reads pending action id for a decision by t's caller: it must
// be of a namespace the caller's grant covers (else it is not found, as a
// missing one), pending (not decided, not expired) and not the caller's own.
func decidable(t GovRecords, id, verb string) (*aimemoryv1.PendingAction, string, error) {
	if err := record.ValidateID("id", id); err != nil {
		return nil, "", err
	}
	p, err := Pending(t, id)
	if err != nil {
		return nil, "", err
	}
	if !authz.Of(t.Context()).Reads(p.GetNamespace()) {
		return nil, "", &storage.PendingNotFoundError{ID: id}
	}
	if p = Effective(p, t.Now()); p.Status != storage.StatusPending {
		return nil, "", &storage.DecidedError{ID: id, Status: p.Status, By: p.DecidedBy}
	}
	who := storage.Principal(t.Context())
	if who == "" {
		return nil, "", &storage.DeniedError{Reason: verb + " refused: a decision needs a caller identity"}
	}
	if governance.SamePrincipal(who, p.RequestedBy) {
		return nil, "", &storage.DeniedError{Reason: fmt.Sprintf("%s refused: %s requested this action, and nobody %ss their own request", verb, record.Quote(who), verb)}
	}
	return p, who, nil
}

// approver is the approver rule in force now for p's namespace (the policy
// may have changed since it was queued), checked against who: human lets
// anyone but the requester decide, agent only that agent, consensus any
// registered agent.
func approver(t GovRecords, p *aimemoryv1.PendingAction, who, verb string) (governance.Approver, error) {
	v := t.View()
	g, err := storage.ResolveGoverning(v, p.Namespace)
	if err != nil {
		return governance.Approver{}, err
	}
	a := g.Policy.Approver
	switch a.Kind {
	case governance.ApproverAgent:
		if who != a.Agent {
			return a, &storage.DeniedError{Reason: fmt.Sprintf("%s refused: this namespace's approver is %s, not %s", verb, record.Quote(a.Agent), record.Quote(who))}
		}
	case governance.ApproverConsensus:
		ok, err := v.Registered(who)
		if err != nil {
			return a, err
		}
		if !ok {
			return a, &storage.DeniedError{Reason: fmt.Sprintf("%s refused: consensus approval counts registered agents only; %s is not registered", verb, record.Quote(who))}
		}
	}
	return a, nil
}

// Approve records t's caller's approval of pending action id. When the
// approver rule is met (at once, or on the consensus's last vote) the
// action executes in this same transaction and the row becomes approved;
// if it fails, nothing changes and the action stays pending. Run in one
// transaction per decision, it executes once however many approvers race.
func Approve(t GovTx, id string) (*aimemoryv1.ApprovePendingResponse, error) {
	resp := &aimemoryv1.ApprovePendingResponse{}
	p, who, err := decidable(t, id, "approve")
	if err != nil {
		return nil, err
	}
	a, err := approver(t, p, who, "approve")
	if err != nil {
		return nil, err
	}
	if a.Kind == governance.ApproverConsensus {
		vote := strings.ToLower(who)
		if !slices.ContainsFunc(p.Approvals, func(v *aimemoryv1.Vote) bool { return v.AgentId == vote }) {
			p.Approvals = append(p.Approvals, &aimemoryv1.Vote{AgentId: vote, At: t.Now()})
		}
		resp.Votes, resp.Quorum = uint32(len(p.Approvals)), uint32(a.Quorum)
		if len(p.Approvals) < a.Quorum {
			resp.Action = p
			return resp, t.PutRecord(PendingRecord(p))
		}
	}
	result, err := t.ExecuteAs(p)
	if err != nil {
		return nil, fmt.Errorf("approve failed, the action stays pending: %w", err)
	}
	p.Status, p.DecidedBy, p.DecidedAt, p.ResultMemoryId = StatusApproved, who, t.Now(), result
	resp.Approved, resp.Action = true, p
	return resp, t.PutRecord(PendingRecord(p))
}

// Reject refuses pending action id: the approver rule decides who may (so
// a designated approver's queue is not emptied by anyone else), and never
// the requester. The payload is kept for the record.
func Reject(t GovRecords, id string) (*aimemoryv1.RejectPendingResponse, error) {
	p, who, err := decidable(t, id, "reject")
	if err != nil {
		return nil, err
	}
	if _, err := approver(t, p, who, "reject"); err != nil {
		return nil, err
	}
	p.Status, p.DecidedBy, p.DecidedAt = StatusRejected, who, t.Now()
	return &aimemoryv1.RejectPendingResponse{Action: p}, t.PutRecord(PendingRecord(p))
}

// ImportStandardRule validates an imported standard row (a refusal when
// it fails): its namespaces, policy and identities.
func ImportStandardRule(st *aimemoryv1.Standard) error {
	if err := ValidStandardNamespace("namespace", st.GetNamespace()); err != nil {
		return err
	}
	if err := record.ValidateID("standard_id", st.GetStandardId()); err != nil {
		return err
	}
	if p := st.GetParent(); p != "" {
		if err := ValidStandardNamespace("parent", p); err != nil {
			return err
		}
	}
	if p := st.GetPolicyJson(); p != "" {
		if _, err := governance.Parse([]byte(p)); err != nil {
			return fmt.Errorf("standard of %s: policy: %v", record.Quote(st.GetNamespace()), err)
		}
	}
	for _, a := range []struct{ f, v string }{{"owner", st.GetOwner()}, {"set_by", st.GetSetBy()}} {
		if a.v != "" {
			if err := record.ValidateAgentID(a.f, a.v); err != nil {
				return err
			}
		}
	}
	return nil
}

// ImportPendingRule validates an imported pending action (a refusal when
// it fails): decided or not, with its payload and time.
func ImportPendingRule(p *aimemoryv1.PendingAction) error {
	if err := record.ValidateID("id", p.GetId()); err != nil {
		return err
	}
	switch p.GetStatus() {
	case storage.StatusPending, StatusApproved, StatusRejected:
	default:
		return fmt.Errorf("pending action %s: status %s is not pending, approved or rejected", p.GetId(), record.Quote(p.GetStatus()))
	}
	if p.GetPayload() == nil || p.GetRequestedAt() <= 0 {
		return fmt.Errorf("pending action %s: payload and requested_at must be set", p.GetId())
	}
	return nil
}

// GetStandard reads ns's standard, or with inherit the whole chain's, and
// the policy in force for ns, from a read view; get reads a memory by id
// (nil when absent).
func GetStandard(ctx context.Context, v storage.GovernanceView, req *aimemoryv1.GetStandardRequest, get func(id string) (*aimemoryv1.Memory, error)) (*aimemoryv1.GetStandardResponse, error) {
	ns := req.GetNamespace()
	gov := v.Governance()
	resp := &aimemoryv1.GetStandardResponse{Namespace: ns}
	var err error
	resp.Chain = governance.Chain(ns, func(n string) string {
		r, e := v.Standard(n)
		if e != nil && err == nil {
			err = e
		}
		return r.GetParent()
	})
	if err != nil {
		return nil, err
	}
	// A level the caller may not read (another tenant's parent) is left
	// out; the global level ("*"), which every namespace inherits, is
	// everyone's.
	grant := authz.Of(ctx)
	readable := func(n string) bool { return n == governance.Global || grant.Reads(n) }
	resp.Chain = slices.DeleteFunc(resp.Chain, func(n string) bool { return !readable(n) })
	levels := []string{ns}
	if req.GetInherit() {
		levels = resp.Chain
	}
	for _, n := range levels {
		if !readable(n) {
			continue
		}
		row, err := v.Standard(n)
		if err != nil {
			return nil, err
		}
		if row == nil {
			continue
		}
		if o, ok := gov.ConfiguredOwner(n); ok {
			row.Owner, row.OwnerFromConfig = o, true
		}
		lv := &aimemoryv1.StandardLevel{Standard: row}
		m, err := get(row.StandardId)
		if err != nil {
			return nil, err
		}
		if m != nil && readable(m.GetNamespace()) {
			lv.Memory = m
		}
		resp.Levels = append(resp.Levels, lv)
	}
	g, err := storage.ResolveGoverning(v, ns)
	if err != nil {
		return nil, err
	}
	resp.EffectivePolicyJson, resp.PolicyFrom = g.Policy.Canonical(), g.Namespace
	if !readable(g.Namespace) {
		resp.PolicyFrom = "" // the policy that governs the caller's writes, not whose it is
	}
	return resp, nil
}

package storage

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/engine/governance"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
	"github.com/google/uuid"
)

// Governance is enforced here, in the check every backend makes inside
// every write transaction (Authorize), so it binds whichever family or
// plugin the write came through. The backend supplies a GovernanceView of
// its governance state as the transaction sees it.

// GovernanceView is the governance state a write transaction reads: the
// namespace standards (each with its policy and owner), the agent registry
// and the data dir's governance settings.
type GovernanceView interface {
	// Standard is ns's standard row; nil when it has none.
	Standard(ns string) (*aimemoryv1.Standard, error)
	// Registered reports whether principal is in the agent registry.
	Registered(principal string) (bool, error)
	// RegisteredOthers counts registered agents other than principal.
	RegisteredOthers(principal string) (int, error)
	Governance() *governance.Config
}

// Policy levels a write kind is checked at.
type levelKind string

const (
	kindWrite   levelKind = "write"
	kindDelete  levelKind = "delete"
	kindPromote levelKind = "promote"
)

// requirement is one level check a write needs: a kind on a namespace,
// with the memory whose creator may pass an owner-level delete or promote.
type requirement struct {
	ns     string
	kind   levelKind
	memory *aimemoryv1.Memory
}

// requirements maps a write onto the policy's levels (issue 9): store,
// update, link write; delete and forget delete; promote promote. A move
// (update to another namespace) also writes to and deletes from the
// namespace it leaves, and a vertical promote writes into the ancestor
// (spec §15 item 12). An op the gate does not know needs write and delete
// on every namespace it touches, so nothing new slips through ungated.
func requirements(w Write) []requirement {
	ns := func(m *aimemoryv1.Memory) string { return m.GetNamespace() }
	var out []requirement
	add := func(m *aimemoryv1.Memory, k levelKind) {
		if m != nil {
			out = append(out, requirement{ns: ns(m), kind: k, memory: m})
		}
	}
	switch w.Op {
	case OpStore, OpMerge, OpAlias:
		add(w.New, kindWrite)
	case OpUpdate:
		add(w.New, kindWrite)
		if w.Old != nil && w.New != nil && ns(w.Old) != ns(w.New) {
			add(w.Old, kindWrite)
			add(w.Old, kindDelete)
		}
	case OpDelete: // delete and forget
		add(w.Old, kindDelete)
	case OpLink:
		add(w.New, kindWrite)
		if w.Target != nil && ns(w.Target) != ns(w.New) {
			add(w.Target, kindWrite)
		}
	case OpConsolidate:
		add(w.New, kindWrite)
		add(w.Old, kindDelete)
	case OpPromote:
		add(w.Old, kindPromote)
		if w.New != nil && w.Old != nil && ns(w.New) != ns(w.Old) {
			add(w.New, kindWrite)
		}
	default:
		for _, m := range []*aimemoryv1.Memory{w.Old, w.New, w.Target} {
			add(m, kindWrite)
			add(m, kindDelete)
		}
	}
	return out
}

// Governing is the policy in force for a namespace and where it is set.
type Governing struct {
	Namespace string // the chain level whose standard carries the policy; "" = the default
	Policy    governance.Policy
	Owner     string // that level's owner
}

// ResolveGoverning walks ns's standards chain from ns towards "*" and
// returns the first level with a policy that applies to ns (a policy with
// inherit false applies to its own namespace only); the data dir's
// default policy, with the namespace's own owner, when there is none.
func ResolveGoverning(v GovernanceView, ns string) (Governing, error) {
	rows := map[string]*aimemoryv1.Standard{}
	var readErr error
	row := func(n string) *aimemoryv1.Standard {
		if r, ok := rows[n]; ok {
			return r
		}
		r, err := v.Standard(n)
		if err != nil && readErr == nil {
			readErr = err
		}
		rows[n] = r
		return r
	}
	chain := governance.Chain(ns, func(n string) string { return row(n).GetParent() })
	for i := len(chain) - 1; i >= 0; i-- {
		level := chain[i]
		r := row(level)
		if r.GetPolicyJson() == "" {
			continue
		}
		p, err := parseStored(r.GetPolicyJson())
		if err != nil {
			return Governing{}, fmt.Errorf("stored policy of namespace %s: %w", authz.Quote(level), err)
		}
		if !p.Inherit && level != ns {
			continue
		}
		return Governing{Namespace: level, Policy: p, Owner: OwnerOf(v.Governance(), level, r)}, nil
	}
	if readErr != nil {
		return Governing{}, readErr
	}
	// The default policy's owner is the namespace's own, if it has one.
	return Governing{Policy: v.Governance().DefaultPolicy(), Owner: OwnerOf(v.Governance(), ns, row(ns))}, nil
}

// OwnerOf is ns's owner: [governance.owners] first, else the row's.
func OwnerOf(c *governance.Config, ns string, row *aimemoryv1.Standard) string {
	if o, ok := c.ConfiguredOwner(ns); ok {
		return o
	}
	return row.GetOwner()
}

func (g Governing) level(k levelKind) governance.Level {
	switch k {
	case kindDelete:
		return g.Policy.Delete
	case kindPromote:
		return g.Policy.Promote
	}
	return g.Policy.Write
}

func (g Governing) where() string {
	if g.Namespace == "" {
		return "the default policy"
	}
	return "the policy of namespace " + authz.Quote(g.Namespace)
}

type approvalKey struct{}

// WithApproval marks ctx as executing the approved pending action id: the
// gate lets through what that approval covers ("approve" levels) and
// nothing more. Only the backend's approval path sets it.
func WithApproval(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, approvalKey{}, id)
}

// AsRequester is the context an approved pending action p executes in,
// from the approver's: as its requester (principal, session, family:
// created_by is theirs) with the approval that lets its "approve" levels
// through. Its scope is the approver's, who was allowed to decide because
// that scope covers p's namespace; the requester's own scope was applied
// when the action was queued (authorization precedes governance).
func AsRequester(approver context.Context, p *aimemoryv1.PendingAction) context.Context {
	by, _ := caller.FromContext(approver)
	ctx := caller.NewContext(approver, caller.Caller{Principal: p.RequestedBy, Session: p.RequestedSession, Family: p.RequestedFamily, Scope: by.Scope})
	return WithApproval(ctx, p.Id)
}

func approved(ctx context.Context) bool {
	id, _ := ctx.Value(approvalKey{}).(string)
	return id != ""
}

// Govern is the governance gate: every requirement of w is checked against
// the policy governing its namespace, with the caller of w. A denial beats
// a queue, a queue beats an allow.
func Govern(ctx context.Context, w Write) Verdict {
	v := w.View
	who := ""
	if w.Caller != nil {
		who = w.Caller.Principal
	}
	cfg := v.Governance()
	var queued *Verdict
	for _, r := range requirements(w) {
		if authz.IsGuarded(r.ns) {
			continue // the engine's own namespaces: the guard decides who writes there
		}
		g, err := ResolveGoverning(v, r.ns)
		if err != nil {
			return Verdict{Decision: Deny, Err: err}
		}
		deny := func(why string) Verdict {
			return Verdict{Decision: Deny, Reason: fmt.Sprintf("%s denied by governance: %s of namespace %s: %s (%s)", w.Op, r.kind, authz.Quote(r.ns), why, g.where())}
		}
		switch g.level(r.kind) {
		case governance.Any:
		case governance.Registered:
			ok, err := v.Registered(who)
			if err != nil {
				return Verdict{Decision: Deny, Err: err}
			}
			if who == "" || !ok {
				return deny(fmt.Sprintf("only registered agents; %s is not registered", authz.Quote(who)))
			}
		case governance.Owner:
			creator := r.kind != kindWrite && r.memory.GetCreatedBy() != "" && who == r.memory.GetCreatedBy()
			if who == "" || !(who == g.Owner || cfg.IsOperator(who) || creator) {
				owner := "none recorded"
				if g.Owner != "" {
					owner = authz.Quote(g.Owner)
				}
				by := "its owner"
				if r.kind != kindWrite {
					by = "its owner or the memory's creator"
				}
				return deny(fmt.Sprintf("only %s (owner: %s); caller is %s", by, owner, authz.Quote(who)))
			}
		case governance.Approve:
			if approved(ctx) {
				continue
			}
			a := g.Policy.Approver
			switch {
			case who == "":
				return deny("an approval needs a caller identity")
			case a.Kind == governance.ApproverAgent && governance.SamePrincipal(a.Agent, who):
				return deny(fmt.Sprintf("approval by %s is required, who is the requester, and nobody approves their own request", authz.Quote(a.Agent)))
			case a.Kind == governance.ApproverConsensus:
				n, err := v.RegisteredOthers(who)
				if err != nil {
					return Verdict{Decision: Deny, Err: err}
				}
				if n < a.Quorum {
					return deny(fmt.Sprintf("approval needs %d registered agents other than the requester; %d are registered", a.Quorum, n))
				}
			}
			if queued == nil {
				queued = &Verdict{Decision: Queue, Namespace: r.ns, Approver: a.String(),
					Reason: fmt.Sprintf("%s of namespace %s requires approval (approver %s; %s)", r.kind, authz.Quote(r.ns), a, g.where())}
			}
		default:
			return deny("unknown level " + authz.Quote(string(g.level(r.kind))))
		}
	}
	if queued != nil {
		return *queued
	}
	return Verdict{}
}

// Governance is the backend's governance operations (the Governance
// service): standards, pending actions, the agent registry.
type Governance interface {
	SetStandard(context.Context, *aimemoryv1.SetStandardRequest) (*aimemoryv1.SetStandardResponse, error)
	GetStandard(context.Context, *aimemoryv1.GetStandardRequest) (*aimemoryv1.GetStandardResponse, error)
	ClearStandard(context.Context, *aimemoryv1.ClearStandardRequest) (*aimemoryv1.ClearStandardResponse, error)
	ListPending(context.Context, *aimemoryv1.ListPendingRequest) (*aimemoryv1.ListPendingResponse, error)
	ApprovePending(context.Context, *aimemoryv1.DecidePendingRequest) (*aimemoryv1.ApprovePendingResponse, error)
	RejectPending(context.Context, *aimemoryv1.DecidePendingRequest) (*aimemoryv1.RejectPendingResponse, error)
	RegisterAgent(context.Context, *aimemoryv1.RegisterAgentRequest) (*aimemoryv1.RegisterAgentResponse, error)
	ListAgents(context.Context, *aimemoryv1.ListAgentsRequest) (*aimemoryv1.ListAgentsResponse, error)
}

// Limits of ListPending.
const (
	DefaultPendingLimit = 100
	MaxPendingLimit     = 1000
)

// ErrDecided: a pending action is no longer pending (decided or expired).
var ErrDecided = errors.New("pending action already decided")

// PendingNotFoundError: no pending action has the id; errors.Is(err, ErrNotFound).
type PendingNotFoundError struct{ ID string }

func (e *PendingNotFoundError) Error() string {
	return "pending action not found: " + authz.Quote(e.ID)
}

func (e *PendingNotFoundError) Is(target error) bool { return target == ErrNotFound }

// DecidedError: the pending action was decided already, or expired.
type DecidedError struct{ ID, Status, By string }

func (e *DecidedError) Error() string {
	if e.By != "" {
		return fmt.Sprintf("pending action %s is %s (by %s), not pending", e.ID, e.Status, authz.Quote(e.By))
	}
	return fmt.Sprintf("pending action %s is %s, not pending", e.ID, e.Status)
}

func (e *DecidedError) Is(target error) bool { return target == ErrDecided }

// PendingMemoryID is the existing memory a pending payload acts on (ids
// joined by commas); "" for a new one. Every backend records it alike.
func PendingMemoryID(p *aimemoryv1.PendingPayload) string {
	switch a := p.GetAction().(type) {
	case *aimemoryv1.PendingPayload_Update:
		return a.Update.GetId()
	case *aimemoryv1.PendingPayload_Delete:
		return strings.Join(a.Delete.GetIds(), ",")
	case *aimemoryv1.PendingPayload_Link:
		return a.Link.GetSourceId()
	case *aimemoryv1.PendingPayload_Unlink:
		return a.Unlink.GetSourceId()
	case *aimemoryv1.PendingPayload_Forget:
		return strings.Join(a.Forget.GetIds(), ",")
	case *aimemoryv1.PendingPayload_Promote:
		return a.Promote.GetId()
	case *aimemoryv1.PendingPayload_Restore:
		return a.Restore.GetId()
	case *aimemoryv1.PendingPayload_Consolidate:
		return strings.Join(a.Consolidate.GetIds(), ",")
	}
	return ""
}

// StatusPending is a queued action's status until it is decided.
const StatusPending = "pending"

// NewPendingAction is the pending action a queued write records: the
// write pe describes, its payload (the request as the engine received
// it), the requester from ctx's caller, expiring after gov's pending time.
func NewPendingAction(ctx context.Context, pe *PendingError, payload *aimemoryv1.PendingPayload, now int64, gov *governance.Config) *aimemoryv1.PendingAction {
	c, _ := caller.FromContext(ctx)
	return &aimemoryv1.PendingAction{
		Id:               uuid.NewString(),
		Action:           string(pe.Op),
		Namespace:        pe.Namespace,
		MemoryId:         PendingMemoryID(payload),
		Payload:          payload,
		RequestedBy:      c.Principal,
		RequestedSession: c.Session,
		RequestedFamily:  c.Family,
		RequestedAt:      now,
		ExpiresAt:        now + int64(gov.PendingFor()),
		Status:           StatusPending,
		Reason:           pe.Reason,
		Approver:         pe.Approver,
	}
}

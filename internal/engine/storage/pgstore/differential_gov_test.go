package pgstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ai-memory/ai-memory/internal/engine/audit"
	"github.com/ai-memory/ai-memory/internal/engine/governance"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// The governance part of TestDifferential's random mix: standards and
// their policies (so writes get refused and queued), decisions on the
// queued actions (approve, reject, by any of a few callers, racing the
// expiry the clock jumps bring), the agent registry, and the audit chain.

// diffGovernance: ai:op is an operator; pending actions live 20 hours, so
// the test's 7-hour clock jumps expire some, not most.
var diffGovernance = &governance.Config{Operators: []string{"ai:op"}, PendingTTL: 20 * time.Hour}

var (
	diffCallers  = []string{"", "ai:alice", "ai:bob", "ai:carol", "ai:op"}
	diffPolicies = []string{
		"",
		`{"write":"approve","delete":"approve","promote":"approve"}`,
		`{"write":"owner","delete":"owner"}`,
		`{"write":"approve","approver":{"agent":"ai:alice"}}`,
		`{"write":"approve","approver":{"consensus":2}}`,
		`{"write":"registered"}`,
		`{"write":"any","delete":"any"}`,
	}
	govNamespaces = []string{"proj", "proj/sub", "other"}
	pendingStatus = []string{"", "all", "pending", "approved", "rejected", "expired"}
)

// caller is a random identity's context and its name ("" for none).
func (d *differ) caller() (context.Context, string) {
	who := diffCallers[d.rng.IntN(len(diffCallers))]
	if who == "" {
		return storagetest.Operator(), ""
	}
	return govCaller(who), who
}

func (d *differ) nameMemory(b int, id string) {
	if _, ok := d.names[b][id]; ok {
		return
	}
	d.names[b][id] = "m" + strconv.Itoa(d.mems[b])
	d.mems[b]++
	if b == 1 {
		d.made = d.mems[1]
	}
}

// notePending names the pending action a queued write answers with.
func (d *differ) notePending(b int, err error) {
	var pe *storage.PendingError
	if errors.As(err, &pe) && pe.ID != "" {
		d.names[b][pe.ID] = "p" + strconv.Itoa(d.pends[b])
		d.pends[b]++
	}
}

// pendingLabel is a queued action's label, mostly one of the newest (the
// older ones are decided or expired); one in ten names none.
func (d *differ) pendingLabel() string {
	n := d.pends[1]
	if n == 0 || d.rng.IntN(10) == 0 {
		return "unknown"
	}
	if d.rng.IntN(4) == 0 {
		return "p" + strconv.Itoa(d.rng.IntN(n))
	}
	return "p" + strconv.Itoa(n-1-d.rng.IntN(min(n, 3)))
}

func (d *differ) govOp(which func(storage.Backend) int) (string, func(storage.Backend) answer) {
	ctx := storagetest.Operator()
	who, name := d.caller()
	ns := govNamespaces[d.rng.IntN(len(govNamespaces))]
	switch d.rng.IntN(14) {
	case 0, 1:
		label, policy := d.label(), diffPolicies[d.rng.IntN(len(diffPolicies))]
		return fmt.Sprintf("set standard of %q to %s policy %s as %q", ns, label, policy, name), func(s storage.Backend) answer {
			r, err := s.SetStandard(who, &aimemoryv1.SetStandardRequest{Namespace: ns, Id: d.idOf(which(s), label), GovernanceJson: policy})
			return answer{msg: r, err: err}
		}
	case 2:
		return fmt.Sprintf("clear standard of %q as %q", ns, name), func(s storage.Backend) answer {
			r, err := s.ClearStandard(who, &aimemoryv1.ClearStandardRequest{Namespace: ns})
			return answer{msg: r, err: err}
		}
	case 3:
		inherit := d.rng.IntN(2) == 0
		return fmt.Sprintf("get standard of %q inherit %v", ns, inherit), func(s storage.Backend) answer {
			r, err := s.GetStandard(who, &aimemoryv1.GetStandardRequest{Namespace: ns, Inherit: inherit})
			return answer{msg: r, err: err}
		}
	case 4:
		status, limit := pendingStatus[d.rng.IntN(len(pendingStatus))], uint32(d.rng.IntN(6))
		return fmt.Sprintf("list pending %q limit %d", status, limit), func(s storage.Backend) answer {
			r, err := s.ListPending(ctx, &aimemoryv1.ListPendingRequest{Status: status, Limit: limit})
			return answer{msg: r, err: err}
		}
	case 5, 6:
		label := d.pendingLabel()
		return fmt.Sprintf("approve %s as %q", label, name), func(s storage.Backend) answer {
			r, err := s.ApprovePending(who, &aimemoryv1.DecidePendingRequest{Id: d.idOf(which(s), label)})
			if err == nil && which(s) == 1 {
				d.votes++
				if r.Approved {
					d.executed++
				}
			}
			if err == nil && r.Approved && r.Action.GetPayload().GetStore() != nil {
				d.nameMemory(which(s), r.Action.ResultMemoryId) // a new memory, or the one it merged into
			}
			return answer{msg: r, err: err}
		}
	case 7:
		label := d.pendingLabel()
		return fmt.Sprintf("reject %s as %q", label, name), func(s storage.Backend) answer {
			r, err := s.RejectPending(who, &aimemoryv1.DecidePendingRequest{Id: d.idOf(which(s), label)})
			return answer{msg: r, err: err}
		}
	case 8:
		return fmt.Sprintf("register agent as %q", name), func(s storage.Backend) answer {
			r, err := s.RegisterAgent(who, &aimemoryv1.RegisterAgentRequest{AgentType: "test", Capabilities: []string{"diff"}})
			if err == nil {
				d.nameMemory(which(s), r.Agent.Id)
			}
			return answer{msg: r, err: err}
		}
	case 9:
		return "list agents", func(s storage.Backend) answer {
			r, err := s.ListAgents(ctx, &aimemoryv1.ListAgentsRequest{})
			return answer{msg: r, err: err}
		}
	case 10:
		in := &aimemoryv1.AuditRecord{AgentId: name, Event: "capability_expansion", Family: "graph", Granted: d.rng.IntN(2) == 0}
		if d.rng.IntN(8) == 0 {
			in.Event = "" // refused
		}
		return fmt.Sprintf("append audit %v", in), func(s storage.Backend) answer {
			r, err := s.AppendAudit(ctx, in)
			return answer{msg: r, err: err}
		}
	case 11:
		limit := d.rng.IntN(6)
		return fmt.Sprintf("list audit of %q limit %d", name, limit), func(s storage.Backend) answer {
			list, err := s.ListAudit(ctx, name, limit)
			return answer{msg: &aimemoryv1.ListAuditResponse{Records: list}, err: err}
		}
	case 12:
		return "export governance", func(s storage.Backend) answer {
			return d.exportGovernance(which(s), s)
		}
	default:
		return "verify audit", func(s storage.Backend) answer {
			v, err := s.VerifyAudit(ctx, audit.Head{})
			if v != nil {
				v.CheckedHeadRow = false // PostgreSQL's head row: bbolt keeps none
			}
			return answer{msg: v, err: err}
		}
	}
}

// exportGovernance is the standards and pending actions a backend exports
// (Export), each normalized, sorted:
// both export by id, and ids differ between the backends.
func (d *differ) exportGovernance(b int, s storage.Backend) answer {
	var recs []string
	keep := func(r *aimemoryv1.ExportRecord) error {
		if r.GetStandard() != nil || r.GetPending() != nil {
			recs = append(recs, d.normalize(b, answer{msg: r}))
		}
		return nil
	}
	err := s.Export(storagetest.Operator(), keep)
	slices.Sort(recs)
	return answer{err: err, text: strings.Join(recs, "\n")}
}

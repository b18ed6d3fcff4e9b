package console

import (
	"context"
	"slices"
	"strings"
	"time"
)

// The activity page: a timeline of what happened to the memories the
// principal may see, merged from what the tools report (memories stored
// and updated, by recency; removed, from the archive; approvals asked for
// and decided), the principal's webhook subscriptions with their
// deliveries, and, for an operator, the audit chain with its verification.

const timelineEach = 50 // entries read from each source

// event is one timeline entry.
type event struct {
	At, What, Who, Title, Namespace, MemoryID, Detail string
}

type subscriptionRow struct {
	ID              string `json:"id"`
	URL             string `json:"url"`
	Events          string `json:"events"`
	NamespaceFilter string `json:"namespace_filter"`
	AgentFilter     string `json:"agent_filter"`
	IncludeContent  bool   `json:"include_content"`
	Signed          bool   `json:"signed"`
	CreatedAt       string `json:"created_at"`
	DispatchCount   uint64 `json:"dispatch_count"`
	FailureCount    uint64 `json:"failure_count"`
	Pending         uint64 `json:"pending"`
	DeadLetterCount uint64 `json:"dead_letter_count"`
	DeadLetters     []struct {
		Seq       uint64 `json:"seq"`
		Event     string `json:"event"`
		MemoryID  string `json:"memory_id"`
		Attempts  uint32 `json:"attempts"`
		LastError string `json:"last_error"`
		At        string `json:"at"`
	} `json:"dead_letters"`
}

// Audit is the operator's view of the audit chain (the CLI's audit list
// and verify).
type Audit struct {
	Records []AuditRecord
	// The verification: intact or where it broke, and what was compared.
	OK          bool
	Count       uint64
	HeadHash    string
	FirstBadSeq uint64
	Problem     string
	Checks      []string
}

// AuditRecord is one guarded decision in the chain.
type AuditRecord struct {
	Seq                          uint64
	At                           string
	AgentID, Event, Family, Tool string
	Granted                      bool
	Reason, Attestation          string
	Suppressed                   uint64
}

type activityPage struct {
	Events        []event
	Subscriptions []subscriptionRow
	CanSubs       bool
	Audit         *Audit
	AuditError    string
	Errors        []string
}

func (activityPage) title() string { return "Activity" }

func (s *Server) activityPage(q *request) (string, any, error) {
	var p activityPage
	p.CanSubs = q.can("memory_list_subscriptions")
	var lists [4][]event
	var errs [5]error
	jobs := []func(){
		func() {
			var out struct {
				Memories []memory `json:"memories"`
			}
			errs[0] = q.call("memory_list", map[string]any{"order": "recent", "limit": timelineEach, "format": "json"}, &out)
			for _, m := range out.Memories {
				what := "updated"
				if m.CreatedAt == m.UpdatedAt {
					what = "stored"
				}
				lists[0] = append(lists[0], event{At: m.UpdatedAt, What: what, Who: m.UpdatedBy, Title: m.Title, Namespace: m.Namespace, MemoryID: m.ID})
			}
		},
	}
	if q.can("memory_archive_list") {
		jobs = append(jobs, func() {
			var out struct {
				Archived []archived `json:"archived"`
			}
			errs[1] = q.call("memory_archive_list", map[string]any{"limit": timelineEach}, &out)
			for _, a := range out.Archived {
				lists[1] = append(lists[1], event{At: a.ArchivedAt, What: "archived (" + a.Reason + ")", Title: a.Title, Namespace: a.Namespace, MemoryID: a.ID})
			}
		})
	}
	if q.can("memory_pending_list") {
		jobs = append(jobs, func() {
			var out struct {
				Pending []pendingRow `json:"pending"`
			}
			errs[2] = q.call("memory_pending_list", map[string]any{"status": "all", "limit": timelineEach}, &out)
			for _, a := range out.Pending {
				lists[2] = append(lists[2], event{At: a.RequestedAt, What: "approval asked (" + a.Action + ")", Who: a.RequestedBy,
					Namespace: a.Namespace, MemoryID: a.MemoryID, Detail: a.Reason})
				if a.DecidedAt != "" {
					lists[2] = append(lists[2], event{At: a.DecidedAt, What: a.Status + " (" + a.Action + ")", Who: a.DecidedBy,
						Namespace: a.Namespace, MemoryID: a.MemoryID})
				}
			}
		})
	}
	if p.CanSubs {
		jobs = append(jobs, func() {
			var out struct {
				Subscriptions []subscriptionRow `json:"subscriptions"`
			}
			errs[3] = q.call("memory_list_subscriptions", map[string]any{}, &out)
			p.Subscriptions = out.Subscriptions
		})
	}
	if operator(q.ses.p) && s.opts.Operator.Audit != nil {
		jobs = append(jobs, func() {
			ctx, cancel := context.WithTimeout(q.r.Context(), callTimeout)
			defer cancel()
			p.Audit, errs[4] = s.opts.Operator.Audit(ctx, 100)
		})
	}
	parallel(jobs)
	for i, err := range errs {
		switch {
		case err == nil:
		case i == 4:
			p.AuditError = err.Error()
		default:
			p.Errors = append(p.Errors, err.Error())
		}
	}
	for _, l := range lists {
		p.Events = append(p.Events, l...)
	}
	// Newest first, by instant (the tools write RFC 3339 with nanoseconds,
	// which do not sort as text when trailing zeros are cut).
	slices.SortStableFunc(p.Events, func(a, b event) int { return -compareTimes(a.At, b.At) })
	p.Events = p.Events[:min(len(p.Events), 2*timelineEach)]
	return "activity", p, nil
}

func compareTimes(a, b string) int {
	ta, _ := time.Parse(time.RFC3339Nano, a)
	tb, _ := time.Parse(time.RFC3339Nano, b)
	if c := ta.Compare(tb); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

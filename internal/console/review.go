package console

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// The review page: likely duplicates and contradictions among the most
// recently changed memories (the power family's own checks, each memory
// against its nearest other), short-tier memories about to expire, and the
// actions governance holds for approval.

const (
	reviewScan     = 20  // recent memories checked for duplicates and contradictions
	expiringScan   = 200 // short-tier memories read for the expiry list
	expiringShown  = 50
	pendingShown   = 100
	contradictFrom = 0.2 // nearest-neighbour similarity worth a contradiction check
)

type ref struct{ ID, Title, Namespace string }

type pairRow struct {
	A, B       ref
	Similarity float64
	Method     string
	Verdict    string
	Signals    []string
}

type pendingRow struct {
	ID          string          `json:"id"`
	Action      string          `json:"action"`
	Namespace   string          `json:"namespace"`
	MemoryID    string          `json:"memory_id"`
	Status      string          `json:"status"`
	RequestedBy string          `json:"requested_by"`
	RequestedAt string          `json:"requested_at"`
	ExpiresAt   string          `json:"expires_at"`
	Approver    string          `json:"approver"`
	Reason      string          `json:"reason"`
	Payload     json.RawMessage `json:"payload"`
	DecidedBy   string          `json:"decided_by"`
	DecidedAt   string          `json:"decided_at"`
}

// PayloadText is what the action would write, as indented JSON text.
func (p pendingRow) PayloadText() string { return indentJSON(p.Payload) }

type expiringRow struct {
	memory
	In string // how long until it expires
}

type reviewPage struct {
	NS             string
	Can            struct{ Duplicates, Pending, List bool }
	Scanned        int
	Methods        []string
	Duplicates     []pairRow
	Contradictions []pairRow
	Expiring       []expiringRow
	ExpiringMore   bool
	Pending        []pendingRow
	Errors         []string
}

func (reviewPage) title() string { return "Review" }

func (s *Server) reviewPage(q *request) (string, any, error) {
	p := reviewPage{NS: strings.TrimSpace(q.r.URL.Query().Get("ns"))}
	p.Can.Duplicates = q.can("memory_list") && q.can("memory_check_duplicate") && q.can("memory_detect_contradiction")
	p.Can.Pending, p.Can.List = q.can("memory_pending_list"), q.can("memory_list")
	var mu sync.Mutex
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		p.Errors = append(p.Errors, err.Error())
	}
	var jobs []func()
	if p.Can.Duplicates {
		jobs = append(jobs, func() { s.reviewPairs(q, &p, &mu, fail) })
	}
	if p.Can.List {
		jobs = append(jobs, func() { s.reviewExpiring(q, &p, fail) })
	}
	if p.Can.Pending {
		jobs = append(jobs, func() {
			var out struct {
				Pending []pendingRow `json:"pending"`
			}
			if err := q.call("memory_pending_list", map[string]any{"limit": pendingShown}, &out); err != nil {
				fail(err)
			}
			p.Pending = out.Pending
		})
	}
	parallel(jobs)
	return "review", p, nil
}

// reviewPairs checks each of the most recently changed memories against
// its nearest other (memory_check_duplicate with the stored memory's id),
// and a near pair that is no duplicate for a contradiction.
func (s *Server) reviewPairs(q *request, p *reviewPage, mu *sync.Mutex, fail func(error)) {
	args := map[string]any{"order": "recent", "limit": reviewScan, "format": "json"}
	if p.NS != "" {
		args["namespace"] = p.NS
	}
	var recent struct {
		Memories []memory `json:"memories"`
	}
	if err := q.call("memory_list", args, &recent); err != nil {
		fail(err)
		return
	}
	p.Scanned = len(recent.Memories)
	seen := map[string]bool{}
	pairKey := func(a, b string) string {
		if a > b {
			a, b = b, a
		}
		return a + " " + b
	}
	var jobs []func()
	for _, m := range recent.Memories {
		jobs = append(jobs, func() {
			dargs := map[string]any{"id": m.ID}
			if p.NS != "" {
				dargs["namespace"] = p.NS
			}
			var dup struct {
				Method      string `json:"method"`
				IsDuplicate bool   `json:"is_duplicate"`
				Nearest     *struct {
					ID, Title, Namespace string
					Similarity           float64
				} `json:"nearest"`
			}
			if err := q.call("memory_check_duplicate", dargs, &dup); err != nil {
				fail(err)
				return
			}
			if dup.Nearest == nil {
				return
			}
			row := pairRow{A: ref{m.ID, m.Title, m.Namespace}, B: ref{dup.Nearest.ID, dup.Nearest.Title, dup.Nearest.Namespace},
				Similarity: dup.Nearest.Similarity, Method: dup.Method}
			mu.Lock()
			if !slices.Contains(p.Methods, dup.Method) {
				p.Methods = append(p.Methods, dup.Method)
			}
			k := pairKey(m.ID, dup.Nearest.ID)
			again := seen[k]
			seen[k] = true
			if dup.IsDuplicate && !again {
				p.Duplicates = append(p.Duplicates, row)
			}
			mu.Unlock()
			if again || dup.IsDuplicate || dup.Nearest.Similarity < contradictFrom {
				return
			}
			var con struct {
				Method  string   `json:"method"`
				Verdict string   `json:"verdict"`
				Signals []string `json:"signals"`
			}
			if err := q.call("memory_detect_contradiction", map[string]any{"id_a": m.ID, "id_b": dup.Nearest.ID}, &con); err != nil {
				fail(err)
				return
			}
			if con.Verdict == "likely" || con.Verdict == "contradicts" {
				row.Method, row.Verdict, row.Signals = con.Method, con.Verdict, con.Signals
				mu.Lock()
				p.Contradictions = append(p.Contradictions, row)
				mu.Unlock()
			}
		})
	}
	parallel(jobs)
	byID := func(a, b pairRow) int { return strings.Compare(a.A.ID+a.B.ID, b.A.ID+b.B.ID) }
	mu.Lock()
	slices.SortFunc(p.Duplicates, byID) // the same page for the same store, whatever finished first
	slices.SortFunc(p.Contradictions, byID)
	mu.Unlock()
}

// reviewExpiring lists short-tier memories stored over an hour ago, the
// soonest to expire first.
func (s *Server) reviewExpiring(q *request, p *reviewPage, fail func(error)) {
	args := map[string]any{"tier": "short", "order": "recent", "limit": expiringScan, "format": "json",
		"until": now().Add(-time.Hour).UTC().Format(time.RFC3339)}
	if p.NS != "" {
		args["namespace"] = p.NS
	}
	var out struct {
		Memories []memory `json:"memories"`
	}
	if err := q.call("memory_list", args, &out); err != nil {
		fail(err)
		return
	}
	p.ExpiringMore = len(out.Memories) == expiringScan
	slices.SortFunc(out.Memories, func(a, b memory) int { return compareTimes(a.ExpiresAt, b.ExpiresAt) })
	for _, m := range out.Memories[:min(len(out.Memories), expiringShown)] {
		p.Expiring = append(p.Expiring, expiringRow{memory: m, In: untilText(m.ExpiresAt)})
	}
}

// untilText says how long until an RFC 3339 time, roughly.
func untilText(rfc3339 string) string {
	t, err := time.Parse(time.RFC3339Nano, rfc3339)
	if err != nil {
		return ""
	}
	d := t.Sub(now())
	switch {
	case d <= 0:
		return "expired, not collected yet"
	case d < time.Hour:
		return fmt.Sprintf("in %d min", int(d.Minutes())+1)
	}
	return fmt.Sprintf("in %.0f h", d.Hours())
}

// decide approves or rejects a pending action (never one's own: the
// engine refuses that, and the page says so).
func (s *Server) decide(q *request) string {
	id, decision := q.r.PathValue("id"), q.r.PathValue("decision")
	tool, done := "memory_pending_approve", "Approved: the action ran."
	switch decision {
	case "approve":
	case "reject":
		tool, done = "memory_pending_reject", "Rejected: nothing was written."
	default:
		s.sessions.addNotice(q.ses, notice{Kind: "error", Text: "decision: must be approve or reject"})
		return "review"
	}
	s.outcome(q, done, q.call(tool, map[string]any{"id": id}, nil))
	back := "review"
	if ns := q.r.PostForm.Get("ns"); ns != "" {
		back += "?ns=" + url.QueryEscape(ns)
	}
	return back + "#pending"
}

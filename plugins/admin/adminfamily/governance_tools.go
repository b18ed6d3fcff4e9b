package adminfamily

import (
	"context"
	"encoding/base64"
	"encoding/json"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/ai-memory/ai-memory/sdk"
	"github.com/ai-memory/ai-memory/sdk/record"
	"github.com/ai-memory/ai-memory/sdk/wire"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// The governance family's approval and standards tools. Every decision is
// the engine's, made with the session identity the host resolved: these
// handlers only check arguments and shape answers.

const (
	pendingListDesc    = "Actions awaiting approval, newest first."
	pendingApproveDesc = "Approve and run a pending action (not your own)."
	pendingRejectDesc  = "Reject a pending action (not your own)."
	setStandardDesc    = "Set a namespace's standard memory and policy (owner or operator)."
	getStandardDesc    = "A namespace's standard and policy in force."
	clearStandardDesc  = "Remove a namespace's standard and policy."
)

// standardNSProp: the namespace a standard is on, "*" for the global one.
const standardNSProp = `"namespace":{"type":"string","description":"Namespace or *"}`

const pendingListSchema = `{"type":"object","properties":{
"status":{"type":"string","description":"pending (default), approved, rejected, expired, all"},
"limit":{"type":"integer","description":"Default 100"}
}}`

const pendingDecideSchema = `{"type":"object","properties":{
"id":{"type":"string","description":"Pending id"}
},"required":["id"]}`

const setStandardSchema = `{"type":"object","properties":{
` + standardNSProp + `,
"id":{"type":"string","description":"Id"},
"parent":{"type":"string","description":"Parent namespace"},
"governance":{"type":"object","description":"{write (required), promote, delete: any|registered|owner|approve; approver: human|{agent}|{consensus}; inherit}"},
"owner":{"type":"string","description":"New owner"}
},"required":["namespace","id"]}`

const getStandardSchema = `{"type":"object","properties":{
` + standardNSProp + `,
"inherit":{"type":"boolean","description":"Whole chain"}
},"required":["namespace"]}`

const clearStandardSchema = `{"type":"object","properties":{
` + standardNSProp + `
},"required":["namespace"]}`

// agent_id is accepted as the reference's clients send it, but it only
// ever names the session itself (see callerArg).
var (
	pendingListArgs   = sdk.ArgNames(pendingListSchema)
	pendingDecideArgs = sdk.ArgNames(pendingDecideSchema, "agent_id")
	setStandardArgs   = sdk.ArgNames(setStandardSchema)
	getStandardArgs   = sdk.ArgNames(getStandardSchema)
	clearStandardArgs = sdk.ArgNames(clearStandardSchema)
)

// governanceTools: memory_pending_list/approve/reject, memory_namespace_set/get/clear_standard.
func (s *service) governanceTools() []sdk.Tool {
	writes := sdk.Hints{Destructive: sdk.Bool(false)}
	return []sdk.Tool{
		{Name: "memory_pending_list", Description: pendingListDesc, Schema: sdk.Schema(pendingListSchema), Hints: sdk.ReadOnly, Handler: s.pendingList},
		// An approval runs the queued action, which may be a delete.
		{Name: "memory_pending_approve", Description: pendingApproveDesc, Schema: sdk.Schema(pendingDecideSchema), Handler: s.pendingApprove},
		{Name: "memory_pending_reject", Description: pendingRejectDesc, Schema: sdk.Schema(pendingDecideSchema), Hints: writes, Handler: s.pendingReject},
		{Name: "memory_namespace_set_standard", Description: setStandardDesc, Schema: sdk.Schema(setStandardSchema), Hints: writes, Handler: s.setStandard},
		{Name: "memory_namespace_get_standard", Description: getStandardDesc, Schema: sdk.Schema(getStandardSchema), Hints: sdk.ReadOnly, Handler: s.getStandard},
		{Name: "memory_namespace_clear_standard", Description: clearStandardDesc, Schema: sdk.Schema(clearStandardSchema), Hints: writes, Handler: s.clearStandard},
	}
}

// standardNamespace reads a namespace argument that may also be "*".
func standardNamespace(a *sdk.Args, name string) (string, error) {
	if _, ok := a.Value(name); !ok {
		return "", sdk.Errorf("%s is required", name)
	}
	if ns, err := a.Str(name, ""); err != nil || ns == "*" {
		return ns, err
	}
	return a.RequiredNamespace(name)
}

// callerArg refuses an agent_id naming anyone but the session: a decision
// is always the session's own (a tool argument never decides who asks).
func callerArg(a *sdk.Args, call sdk.Call) error {
	id, err := a.Str("agent_id", "")
	if err != nil || id == "" {
		return err
	}
	if self := call.AgentID; id != self {
		return sdk.Errorf("agent_id: decisions are made as the session identity %s; agent_id cannot name %s", sdk.Quote(self), sdk.Quote(id))
	}
	return nil
}

// pendingView is a pending action as the tools show it.
type pendingView struct {
	ID          string          `json:"id"`
	Action      string          `json:"action"`
	Namespace   string          `json:"namespace,omitempty"`
	MemoryID    string          `json:"memory_id,omitempty"`
	Status      string          `json:"status"`
	RequestedBy string          `json:"requested_by"`
	RequestedAt string          `json:"requested_at"`
	ExpiresAt   string          `json:"expires_at,omitempty"`
	Approver    string          `json:"approver,omitempty"`
	Reason      string          `json:"reason,omitempty"`
	DecidedBy   string          `json:"decided_by,omitempty"`
	DecidedAt   string          `json:"decided_at,omitempty"`
	Approvals   []voteView      `json:"approvals,omitempty"`
	Result      string          `json:"result_memory_id,omitempty"`
	Payload     json.RawMessage `json:"payload,omitempty"`
}

type voteView struct {
	AgentID    string `json:"agent_id"`
	ApprovedAt string `json:"approved_at"`
}

func newPendingView(p *aimemoryv1.PendingAction) pendingView {
	v := pendingView{
		ID: p.GetId(), Action: p.GetAction(), Namespace: p.GetNamespace(), MemoryID: p.GetMemoryId(), Status: p.GetStatus(),
		RequestedBy: p.GetRequestedBy(), RequestedAt: record.FormatTime(p.GetRequestedAt()), ExpiresAt: record.FormatTime(p.GetExpiresAt()),
		Approver: p.GetApprover(), Reason: p.GetReason(), DecidedBy: p.GetDecidedBy(), DecidedAt: record.FormatTime(p.GetDecidedAt()),
		Result: p.GetResultMemoryId(), Payload: payloadJSON(p.GetPayload()),
	}
	for _, a := range p.GetApprovals() {
		v.Approvals = append(v.Approvals, voteView{AgentID: a.GetAgentId(), ApprovedAt: record.FormatTime(a.GetAt())})
	}
	return v
}

// payloadJSON is the queued request as JSON, its metadata shown as the
// JSON it is rather than protojson's base64 of the bytes.
func payloadJSON(p *aimemoryv1.PendingPayload) json.RawMessage {
	if p == nil {
		return nil
	}
	raw, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(p)
	if err != nil {
		return nil
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	out, err := json.Marshal(decodeMetadata(v))
	if err != nil {
		return nil
	}
	return out
}

func decodeMetadata(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if s, ok := x.(string); ok && k == "metadata_json" {
				if b, err := base64.StdEncoding.DecodeString(s); err == nil && json.Valid(b) {
					t[k] = json.RawMessage(b)
					continue
				}
			}
			t[k] = decodeMetadata(x)
		}
	case []any:
		for i, x := range t {
			t[i] = decodeMetadata(x)
		}
	}
	return v
}

func (s *service) pendingList(ctx context.Context, call sdk.Call) (any, error) {
	a, err := sdk.ParseArgs(call.Arguments, pendingListArgs)
	if err != nil {
		return nil, err
	}
	st, err := a.OneOf("status", "pending", "pending", "approved", "rejected", "expired", "all")
	if err != nil {
		return nil, err
	}
	limit, err := a.Integer("limit", 100, 1, 1000)
	if err != nil {
		return nil, err
	}
	resp, err := s.eng.ListPending(ctx, &aimemoryv1.ListPendingRequest{Status: st, Limit: uint32(limit)})
	if err != nil {
		return nil, sdk.EngineError(err)
	}
	out := struct {
		Count   int           `json:"count"`
		Pending []pendingView `json:"pending"`
	}{Count: len(resp.GetPending()), Pending: []pendingView{}}
	for _, p := range resp.GetPending() {
		out.Pending = append(out.Pending, newPendingView(p))
	}
	return out, nil
}

// decideArgs reads the id of an approve or reject.
func decideArgs(call sdk.Call) (string, error) {
	a, err := sdk.ParseArgs(call.Arguments, pendingDecideArgs)
	if err != nil {
		return "", err
	}
	id, err := a.Required("id")
	if err != nil {
		return "", err
	}
	if err := record.ValidateID("id", id); err != nil {
		return "", err
	}
	return id, callerArg(a, call)
}

func (s *service) pendingApprove(ctx context.Context, call sdk.Call) (any, error) {
	id, err := decideArgs(call)
	if err != nil {
		return nil, err
	}
	resp, err := s.eng.ApprovePending(ctx, &aimemoryv1.DecidePendingRequest{Id: id})
	if err != nil {
		return nil, sdk.EngineError(err)
	}
	p := resp.GetAction()
	if !resp.GetApproved() {
		return map[string]any{"approved": false, "status": "pending", "id": id, "votes": resp.GetVotes(), "quorum": resp.GetQuorum(),
			"reason": "consensus threshold not yet reached"}, nil
	}
	out := map[string]any{"approved": true, "id": id, "decided_by": p.GetDecidedBy(), "executed": true}
	if m := p.GetResultMemoryId(); m != "" {
		out["memory_id"] = m
	}
	return out, nil
}

func (s *service) pendingReject(ctx context.Context, call sdk.Call) (any, error) {
	id, err := decideArgs(call)
	if err != nil {
		return nil, err
	}
	resp, err := s.eng.RejectPending(ctx, &aimemoryv1.DecidePendingRequest{Id: id})
	if err != nil {
		return nil, sdk.EngineError(err)
	}
	return map[string]any{"rejected": true, "id": id, "decided_by": resp.GetAction().GetDecidedBy()}, nil
}

func (s *service) setStandard(ctx context.Context, call sdk.Call) (any, error) {
	a, err := sdk.ParseArgs(call.Arguments, setStandardArgs)
	if err != nil {
		return nil, err
	}
	ns, err := standardNamespace(a, "namespace")
	if err != nil {
		return nil, err
	}
	id, err := a.Required("id")
	if err != nil {
		return nil, err
	}
	if err := record.ValidateID("id", id); err != nil {
		return nil, err
	}
	req := &aimemoryv1.SetStandardRequest{Namespace: ns, Id: id}
	if _, ok := a.Value("parent"); ok {
		p, err := standardNamespace(a, "parent")
		if err != nil {
			return nil, err
		}
		if p == ns {
			return nil, sdk.Errorf("parent: must differ from namespace (a namespace cannot be its own parent)")
		}
		req.Parent = &p
	}
	if raw, ok := a.Value("governance"); ok {
		if _, err := a.Object("governance"); err != nil {
			return nil, err
		}
		req.GovernanceJson = string(raw)
	}
	if req.Owner, err = a.Str("owner", ""); err != nil {
		return nil, err
	}
	if req.Owner != "" {
		if err := record.ValidateAgentID("owner", req.Owner); err != nil {
			return nil, err
		}
	}
	// A short id, which results show, names the same memory as its full id.
	ids, err := wire.ResolveIDs(ctx, s.eng, req.Id)
	if err != nil {
		return nil, sdk.EngineError(err)
	}
	req.Id = ids[0]
	resp, err := s.eng.SetStandard(ctx, req)
	if err != nil {
		return nil, sdk.EngineError(err)
	}
	st := resp.GetStandard()
	out := map[string]any{"set": true, "namespace": ns, "standard_id": st.GetStandardId(), "owner": st.GetOwner()}
	if st.GetParentExplicit() || st.GetParent() != "" {
		out["parent"] = st.GetParent()
	}
	if pj := st.GetPolicyJson(); pj != "" {
		out["governance"] = json.RawMessage(pj)
	}
	return out, nil
}

// standardView is one level of get_standard.
type standardView struct {
	Namespace  string          `json:"namespace"`
	StandardID string          `json:"standard_id"`
	Title      string          `json:"title,omitempty"`
	Content    string          `json:"content,omitempty"`
	Priority   int32           `json:"priority,omitempty"`
	Owner      string          `json:"owner,omitempty"`
	Parent     string          `json:"parent,omitempty"`
	Governance json.RawMessage `json:"governance,omitempty"` // this level's own policy
	Warning    string          `json:"warning,omitempty"`
}

func newStandardView(l *aimemoryv1.StandardLevel) standardView {
	st, m := l.GetStandard(), l.GetMemory()
	v := standardView{Namespace: st.GetNamespace(), StandardID: st.GetStandardId(), Owner: st.GetOwner(), Parent: st.GetParent()}
	if pj := st.GetPolicyJson(); pj != "" {
		v.Governance = json.RawMessage(pj)
	}
	if m == nil {
		v.Warning = "the standard's memory no longer exists; its policy still applies"
		return v
	}
	v.Title, v.Content, v.Priority = m.GetTitle(), m.GetContent(), m.GetPriority()
	return v
}

func (s *service) getStandard(ctx context.Context, call sdk.Call) (any, error) {
	a, err := sdk.ParseArgs(call.Arguments, getStandardArgs)
	if err != nil {
		return nil, err
	}
	ns, err := standardNamespace(a, "namespace")
	if err != nil {
		return nil, err
	}
	inherit := false
	if raw, ok := a.Value("inherit"); ok {
		if err := json.Unmarshal(raw, &inherit); err != nil {
			return nil, sdk.Errorf("inherit: must be true or false")
		}
	}
	resp, err := s.eng.GetStandard(ctx, &aimemoryv1.GetStandardRequest{Namespace: ns, Inherit: inherit})
	if err != nil {
		return nil, sdk.EngineError(err)
	}
	from := resp.GetPolicyFrom()
	if from == "" {
		from = "default"
	}
	// The policy in force and where it comes from: the one the engine enforces.
	inForce := json.RawMessage(resp.GetEffectivePolicyJson())
	if inherit {
		levels := []standardView{}
		for _, l := range resp.GetLevels() {
			levels = append(levels, newStandardView(l))
		}
		return map[string]any{"namespace": ns, "chain": resp.GetChain(), "standards": levels, "count": len(levels),
			"policy_in_force": inForce, "policy_from": from}, nil
	}
	if len(resp.GetLevels()) == 0 {
		return map[string]any{"namespace": ns, "standard_id": nil, "policy_in_force": inForce, "policy_from": from}, nil
	}
	v := newStandardView(resp.GetLevels()[0])
	return struct {
		standardView
		InForce json.RawMessage `json:"policy_in_force"`
		From    string          `json:"policy_from"`
	}{v, inForce, from}, nil
}

func (s *service) clearStandard(ctx context.Context, call sdk.Call) (any, error) {
	a, err := sdk.ParseArgs(call.Arguments, clearStandardArgs)
	if err != nil {
		return nil, err
	}
	ns, err := standardNamespace(a, "namespace")
	if err != nil {
		return nil, err
	}
	resp, err := s.eng.ClearStandard(ctx, &aimemoryv1.ClearStandardRequest{Namespace: ns})
	if err != nil {
		return nil, sdk.EngineError(err)
	}
	return map[string]any{"cleared": resp.GetCleared(), "namespace": ns}, nil
}

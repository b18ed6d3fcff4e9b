// Package governance is the namespace policy: the policy document (data-model
// §11.1, parsed strictly), the standards chain a policy is inherited along
// (§12), who owns a namespace, and the data dir's governance settings. It is
// pure: the storage backend reads governance state inside each write
// transaction and asks package storage's gate, which applies these rules.
package governance

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/ai-memory/ai-memory/sdk/record"
)

// Level is what a policy requires of a caller for one kind of write.
type Level string

const (
	Any        Level = "any"        // everyone
	Registered Level = "registered" // callers in the agent registry
	Owner      Level = "owner"      // the namespace's owner (and, for delete and promote, the memory's creator)
	Approve    Level = "approve"    // queued until someone else approves
)

// Levels are the values a document may use.
var Levels = []Level{Any, Registered, Owner, Approve}

// Approver kinds.
const (
	ApproverHuman     = "human"
	ApproverAgent     = "agent"
	ApproverConsensus = "consensus"
)

// MaxConsensus bounds {"consensus": N}.
const MaxConsensus = 100

// MaxPolicyBytes bounds a policy document.
const MaxPolicyBytes = 4096

// Approver is who may approve a queued write: any caller but the requester
// (human), one named agent, or N distinct registered agents.
type Approver struct {
	Kind   string // ApproverHuman, ApproverAgent or ApproverConsensus
	Agent  string
	Quorum int
}

// String is the rule as PendingAction.approver shows it.
func (a Approver) String() string {
	switch a.Kind {
	case ApproverAgent:
		return "agent:" + a.Agent
	case ApproverConsensus:
		return fmt.Sprintf("consensus:%d", a.Quorum)
	}
	return ApproverHuman
}

// Policy is a parsed policy document with every default filled in.
type Policy struct {
	Write, Promote, Delete Level
	Approver               Approver
	// Inherit false: the policy governs its own namespace only, not the
	// namespaces below it in the chain.
	Inherit bool
}

// AllowAll is the built-in default policy of a namespace that no policy
// governs: namespaces are collaborative by default (DESIGN), and this
// default is the one enforced and the one get_standard reports.
var AllowAll = Policy{Write: Any, Promote: Any, Delete: Any, Approver: Approver{Kind: ApproverHuman}, Inherit: true}

// doc is the document's JSON shape.
type doc struct {
	Write    *string          `json:"write"`
	Promote  *string          `json:"promote"`
	Delete   *string          `json:"delete"`
	Approver *json.RawMessage `json:"approver"`
	Inherit  *bool            `json:"inherit"`
}

// Parse reads a policy document strictly: a JSON object with the keys
// write (required), promote, delete, approver and inherit and nothing
// else; omitted keys take the defaults of data-model §11.1 (promote any,
// delete owner, approver human, inherit true). Errors name the field.
func Parse(data []byte) (Policy, error) {
	if len(data) > MaxPolicyBytes {
		return Policy{}, fmt.Errorf("governance: must be at most %d bytes (got %d)", MaxPolicyBytes, len(data))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var d doc
	if err := dec.Decode(&d); err != nil {
		return Policy{}, errors.New(jsonProblem(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Policy{}, errors.New("governance: must be one JSON object")
	}
	if trimmed := bytes.TrimSpace(data); len(trimmed) == 0 || trimmed[0] != '{' {
		return Policy{}, errors.New("governance: must be a JSON object")
	}
	p := Policy{Promote: Any, Delete: Owner, Approver: Approver{Kind: ApproverHuman}, Inherit: true}
	if d.Write == nil {
		return Policy{}, errors.New("governance.write: is required (any, registered, owner or approve)")
	}
	for _, f := range []struct {
		name string
		v    *string
		dst  *Level
	}{{"write", d.Write, &p.Write}, {"promote", d.Promote, &p.Promote}, {"delete", d.Delete, &p.Delete}} {
		if f.v == nil {
			continue
		}
		l, err := parseLevel(f.name, *f.v)
		if err != nil {
			return Policy{}, err
		}
		*f.dst = l
	}
	if d.Approver != nil {
		a, err := parseApprover(*d.Approver)
		if err != nil {
			return Policy{}, err
		}
		p.Approver = a
	}
	if d.Inherit != nil {
		p.Inherit = *d.Inherit
	}
	return p, nil
}

func parseLevel(field, v string) (Level, error) {
	for _, l := range Levels {
		if string(l) == v {
			return l, nil
		}
	}
	return "", fmt.Errorf("governance.%s: must be any, registered, owner or approve (got %s)", field, record.Quote(v))
}

// parseApprover reads "human", {"agent": "<id>"} or {"consensus": N}.
func parseApprover(raw json.RawMessage) (Approver, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s != ApproverHuman {
			return Approver{}, fmt.Errorf(`governance.approver: must be "human", {"agent": "<id>"} or {"consensus": N} (got %s)`, record.Quote(s))
		}
		return Approver{Kind: ApproverHuman}, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || len(obj) != 1 {
		return Approver{}, errors.New(`governance.approver: must be "human", {"agent": "<id>"} or {"consensus": N}`)
	}
	if v, ok := obj["agent"]; ok {
		var id string
		if err := json.Unmarshal(v, &id); err != nil {
			return Approver{}, errors.New("governance.approver.agent: must be a string")
		}
		if err := record.ValidateAgentID("governance.approver.agent", id); err != nil {
			return Approver{}, err
		}
		return Approver{Kind: ApproverAgent, Agent: id}, nil
	}
	if v, ok := obj["consensus"]; ok {
		var n int
		if err := json.Unmarshal(v, &n); err != nil || n < 1 || n > MaxConsensus {
			return Approver{}, fmt.Errorf("governance.approver.consensus: must be an integer from 1 to %d", MaxConsensus)
		}
		return Approver{Kind: ApproverConsensus, Quorum: n}, nil
	}
	return Approver{}, errors.New(`governance.approver: must be "human", {"agent": "<id>"} or {"consensus": N}`)
}

// jsonProblem is a decoder error as the caller can act on it.
func jsonProblem(err error) string {
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return "governance: unknown key " + rest + " (write, promote, delete, approver, inherit)"
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		switch te.Field {
		case "":
			return "governance: must be a JSON object"
		case "inherit":
			return "governance.inherit: must be true or false"
		}
		return "governance." + te.Field + ": must be a string"
	}
	return "governance: not valid JSON: " + record.Quote(msg)
}

// MarshalJSON writes the canonical document: every key, defaults filled in.
func (p Policy) MarshalJSON() ([]byte, error) {
	var approver any = ApproverHuman
	switch p.Approver.Kind {
	case ApproverAgent:
		approver = map[string]string{"agent": p.Approver.Agent}
	case ApproverConsensus:
		approver = map[string]int{"consensus": p.Approver.Quorum}
	}
	return json.Marshal(struct {
		Write    Level `json:"write"`
		Promote  Level `json:"promote"`
		Delete   Level `json:"delete"`
		Approver any   `json:"approver"`
		Inherit  bool  `json:"inherit"`
	}{p.Write, p.Promote, p.Delete, approver, p.Inherit})
}

// Canonical is p's canonical JSON.
func (p Policy) Canonical() string {
	b, _ := p.MarshalJSON()
	return string(b)
}

package governance

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		doc, want, err string
	}{
		{doc: `{"write":"any"}`, want: `{"write":"any","promote":"any","delete":"owner","approver":"human","inherit":true}`},
		{doc: `{"write":"approve","approver":{"agent":"ai:alice"},"inherit":false}`, want: `{"write":"approve","promote":"any","delete":"owner","approver":{"agent":"ai:alice"},"inherit":false}`},
		{doc: `{"write":"owner","delete":"registered","promote":"approve","approver":{"consensus":3}}`, want: `{"write":"owner","promote":"approve","delete":"registered","approver":{"consensus":3},"inherit":true}`},
		{doc: `{}`, err: "governance.write: is required"},
		{doc: `{"write":"sometimes"}`, err: "governance.write: must be any, registered, owner or approve (got \"sometimes\")"},
		{doc: `{"write":"any","extra":1}`, err: `governance: unknown key "extra"`},
		{doc: `{"write":1}`, err: "governance.write: must be a string"},
		{doc: `{"write":"any","inherit":"yes"}`, err: "governance.inherit: must be true or false"},
		{doc: `{"write":"any","approver":"robot"}`, err: "governance.approver: must be"},
		{doc: `{"write":"any","approver":{"consensus":0}}`, err: "governance.approver.consensus: must be an integer from 1 to 100"},
		{doc: `{"write":"any","approver":{"agent":"has space"}}`, err: "governance.approver.agent: may contain only"},
		{doc: `{"write":"any","approver":{"agent":"a","consensus":2}}`, err: "governance.approver: must be"},
		{doc: `["write"]`, err: "governance: must be a JSON object"},
		{doc: `{"write":"any"} {}`, err: "governance: must be one JSON object"},
		{doc: `null`, err: "governance: must be a JSON object"},
		{doc: strings.Repeat(" ", MaxPolicyBytes+1), err: "governance: must be at most 4096 bytes"},
	} {
		p, err := Parse([]byte(tc.doc))
		switch {
		case tc.err != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.err)):
			t.Errorf("Parse(%.40s) = %v, want error %q", tc.doc, err, tc.err)
		case tc.err == "" && err != nil:
			t.Errorf("Parse(%.40s): %v", tc.doc, err)
		case tc.err == "" && p.Canonical() != tc.want:
			t.Errorf("Parse(%.40s) = %s, want %s", tc.doc, p.Canonical(), tc.want)
		}
	}
}

// FuzzParse: no input panics; whatever parses writes a canonical document
// that parses back to the same policy.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"write":"any"}`, `{"write":"approve","approver":{"consensus":2}}`, `{"write":"owner","approver":{"agent":"x"},"inherit":false}`, `{`, `null`, `{"write":"any","write":"owner"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(data)
		if err != nil {
			if len(err.Error()) > 400 {
				t.Errorf("error of %d bytes", len(err.Error()))
			}
			return
		}
		q, err := Parse([]byte(p.Canonical()))
		if err != nil || q != p {
			t.Errorf("canonical %s parses to %v, %v", p.Canonical(), q, err)
		}
	})
}

func TestChain(t *testing.T) {
	parents := map[string]string{"ai": "org", "org": "*", "loop-a": "loop-b", "loop-b": "loop-a"}
	parent := func(n string) string { return parents[n] }
	for ns, want := range map[string]string{
		"ai/memory/tests": "* org ai ai/memory ai/memory/tests",
		"plain":           "* plain",
		"loop-a/x":        "* loop-b loop-a loop-a/x",
		"*":               "*",
	} {
		if got := strings.Join(Chain(ns, parent), " "); got != want {
			t.Errorf("Chain(%s) = %s, want %s", ns, got, want)
		}
	}
	if got := strings.Join(ParentCandidates("ai-memory-tests"), " "); got != "ai-memory ai" {
		t.Errorf("ParentCandidates = %s", got)
	}
}

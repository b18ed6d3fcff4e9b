package audit

import (
	"bytes"
	"testing"

	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// TestUnkeyedHashIsTheOldRule: records written before logs were keyed
// keep verifying: UnkeyedHash is, byte for byte, the hash the earlier
// release computed (values from its chain.go), with and without the
// fields it hashed only when set.
func TestUnkeyedHashIsTheOldRule(t *testing.T) {
	r := &aimemoryv1.AuditRecord{Seq: 7, At: 1_700_000_000_123_456_789, AgentId: "ai:alice", Event: "call_denied", Family: "graph", Tool: "memory_kg_query", Reason: "allowlist rule default", PrevHash: "ab"}
	if got := UnkeyedHash(r); got != "909aa58a89df2022a31599af7578298e6001c304cb12da12f2bd3b328803de5b" {
		t.Errorf("unkeyed hash = %s", got)
	}
	r.Attestation, r.Granted = "token", true
	if got := UnkeyedHash(r); got != "3cf2e4a3724439b564bf04ce14472ea9c0f9ced28497a91b1afca2e34522d870" {
		t.Errorf("unkeyed hash with attestation = %s", got)
	}
}

// TestKeyedHashNeedsTheKey: the keyed hash is not the unkeyed one and
// differs under another key, so only the key's holder can make a record
// KindOf calls Keyed; every field counts, suppressed included.
func TestKeyedHashNeedsTheKey(t *testing.T) {
	a, b := Ephemeral(), Ephemeral()
	r, err := a.Next(nil, &aimemoryv1.AuditRecord{AgentId: "ai:alice", Event: "access_denied", Suppressed: 3}, 42)
	if err != nil {
		t.Fatal(err)
	}
	if a.KindOf(r) != Keyed || b.KindOf(r) != Foreign || r.Hash == UnkeyedHash(r) || r.Hash == b.Hash(r) {
		t.Fatalf("kinds: own %v, other key %v", a.KindOf(r), b.KindOf(r))
	}
	r.Suppressed = 4
	if a.KindOf(r) != Foreign {
		t.Error("a changed suppressed count kept the hash")
	}
	r.Suppressed = 3
	r.Hash = UnkeyedHash(r)
	if a.KindOf(r) != Unkeyed {
		t.Error("a recomputed unkeyed hash is not recognised as unkeyed")
	}
	if _, err := NewChain(bytes.Repeat([]byte{1}, 31)); err == nil {
		t.Error("a 31-byte key was accepted")
	}
	if a.Fingerprint() == b.Fingerprint() || len(a.Fingerprint()) != 16 {
		t.Errorf("fingerprints %q %q", a.Fingerprint(), b.Fingerprint())
	}
}

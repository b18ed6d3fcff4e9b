// Package audit is the rule of the engine's audit log, whatever stores it:
// records are only appended, each carries the hash of the one before, and
// verification recomputes the chain so an edited, removed or reordered
// record is found.
package audit

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"

	"google.golang.org/protobuf/proto"

	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
	"github.com/ai-memory/ai-memory/sdk/record"
)

// Hash chains a record to its predecessor: SHA-256 over the previous hash
// and every field, each length-prefixed so no two records collide.
func Hash(r *aimemoryv1.AuditRecord) string {
	h := sha256.New()
	field := func(b []byte) {
		h.Write(binary.AppendUvarint(nil, uint64(len(b))))
		h.Write(b)
	}
	field([]byte(r.GetPrevHash()))
	field(binary.BigEndian.AppendUint64(nil, r.GetSeq()))
	field(binary.BigEndian.AppendUint64(nil, uint64(r.GetAt())))
	for _, s := range []string{r.GetAgentId(), r.GetEvent(), r.GetFamily(), r.GetTool(), r.GetReason()} {
		field([]byte(s))
	}
	if r.GetGranted() {
		field([]byte{1})
	} else {
		field([]byte{0})
	}
	// Added with HTTP principals; absent from older records, whose hashes
	// must not change.
	if a := r.GetAttestation(); a != "" {
		field([]byte(a))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Validate checks a record a caller asks to append.
func Validate(in *aimemoryv1.AuditRecord) error {
	if in.GetEvent() == "" {
		return &record.FieldError{Field: "event", Rule: "must not be empty"}
	}
	return nil
}

// Next is in as the record after last (nil: the first), with seq, time,
// prev_hash and hash assigned; in is not changed.
func Next(last, in *aimemoryv1.AuditRecord, at int64) *aimemoryv1.AuditRecord {
	r := proto.Clone(in).(*aimemoryv1.AuditRecord)
	r.Seq, r.PrevHash = 1, ""
	if last != nil {
		r.Seq, r.PrevHash = last.GetSeq()+1, last.GetHash()
	}
	r.At = at
	r.Hash = Hash(r)
	return r
}

// Verifier recomputes a chain fed to it in storage order. It reports the
// head hash and count so an operator who pinned them notices a truncated
// tail too.
type Verifier struct {
	prev *aimemoryv1.AuditRecord
	resp *aimemoryv1.VerifyAuditResponse
}

// NewVerifier starts at the beginning of a chain.
func NewVerifier() *Verifier {
	return &Verifier{prev: &aimemoryv1.AuditRecord{}, resp: &aimemoryv1.VerifyAuditResponse{Ok: true}}
}

// Add checks the next stored record: storedSeq is the seq it is stored
// under, r the record (nil when it could not be read).
func (v *Verifier) Add(storedSeq uint64, r *aimemoryv1.AuditRecord) {
	problem := ""
	switch {
	case r == nil:
		problem, r = "unreadable record", &aimemoryv1.AuditRecord{}
	case storedSeq != r.GetSeq():
		problem = fmt.Sprintf("stored under seq %d but says %d", storedSeq, r.GetSeq())
	case r.GetSeq() != v.prev.GetSeq()+1:
		problem = fmt.Sprintf("follows record %d: record(s) removed", v.prev.GetSeq())
	case r.GetPrevHash() != v.prev.GetHash():
		problem = "prev_hash does not match the record before it"
	case Hash(r) != r.GetHash():
		problem = "hash does not match its contents: the record was edited"
	}
	if problem != "" && v.resp.Ok {
		v.resp.Ok, v.resp.FirstBadSeq, v.resp.Problem = false, r.GetSeq(), problem
		if v.resp.FirstBadSeq == 0 {
			v.resp.FirstBadSeq = v.prev.GetSeq() + 1
		}
	}
	v.resp.Count++
	v.resp.HeadHash = r.GetHash()
	v.prev = r
}

// Result is the verdict on the records added so far.
func (v *Verifier) Result() *aimemoryv1.VerifyAuditResponse { return v.resp }

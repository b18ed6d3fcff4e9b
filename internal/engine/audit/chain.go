// Package audit is the rule of the engine's audit log, whatever stores it:
// records are only appended, and each carries an HMAC-SHA-256 of itself
// and of the one before it under the data dir's audit key (audit.key,
// never in the database). Verification recomputes the chain, so an edited,
// removed or reordered record is found even by whoever can write the
// database; cutting records off the end, the one change that leaves a
// shorter chain intact, each engine catches against the head it pinned in
// its data dir (Log, pin.go).
//
// Logs written before the key existed are chained with unkeyed SHA-256.
// The first engine to find such a log appends a keyed record after it
// (Seal), which freezes everything before it; from then on an unkeyed
// record anywhere after a keyed one, or an unkeyed log with no keyed
// record at its end, is a broken chain.
package audit

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"

	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/keyfile"
	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// KeyFile holds the audit key in the data dir, beside the database and
// never inside it: whoever can write the database cannot recompute a
// record's hash. Every engine of one shared database needs the same one.
const KeyFile = "audit.key"

// EventKeyed is the record that starts the keyed part of a log that
// began unkeyed (Log's seal at open). Only the engine writes it.
const EventKeyed = "audit_keyed"

// Chain computes and checks record hashes under one audit key.
type Chain struct {
	key         []byte
	fingerprint string
}

// OpenChain loads the data dir's audit key, creating it on first use.
func OpenChain(dataDir string) (*Chain, error) {
	key, err := keyfile.LoadOrCreate(dataDir, KeyFile, "audit key")
	if err != nil {
		return nil, err
	}
	return NewChain(key)
}

// NewChain keys a chain with key (keyfile.Size bytes).
func NewChain(key []byte) (*Chain, error) {
	if len(key) != keyfile.Size {
		return nil, fmt.Errorf("audit key: must be %d bytes (got %d)", keyfile.Size, len(key))
	}
	sum := sha256.Sum256(append([]byte("ai-memory audit.key fingerprint\x00"), key...))
	return &Chain{key: append([]byte(nil), key...), fingerprint: hex.EncodeToString(sum[:8])}, nil
}

// Ephemeral is a chain under a random key: it verifies only while the
// process that made it runs (stores opened without a data dir's key).
func Ephemeral() *Chain {
	key := make([]byte, keyfile.Size)
	rand.Read(key)
	c, _ := NewChain(key)
	return c
}

// Fingerprint names the key without giving it away.
func (c *Chain) Fingerprint() string { return c.fingerprint }

// Hash is r's keyed hash: HMAC-SHA-256 over the previous hash and every field.
func (c *Chain) Hash(r *aimemoryv1.AuditRecord) string {
	return digest(hmac.New(sha256.New, c.key), r)
}

// UnkeyedHash is the hash records had before logs were keyed: plain SHA-256
// over the same fields, which anyone can recompute.
func UnkeyedHash(r *aimemoryv1.AuditRecord) string { return digest(sha256.New(), r) }

// digest writes every field of r into h, each length-prefixed so no two
// records collide, and returns the sum in hex.
func digest(h hash.Hash, r *aimemoryv1.AuditRecord) string {
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
	// Fields added later are hashed only when set, so the records written
	// before them keep their hashes.
	if a := r.GetAttestation(); a != "" {
		field([]byte(a))
	}
	if n := r.GetSuppressed(); n != 0 {
		field([]byte("suppressed"))
		field(binary.BigEndian.AppendUint64(nil, n))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Kind is how a stored record's hash checks out.
type Kind int

const (
	// Foreign: neither rule gives its hash: edited, or keyed with another key.
	Foreign Kind = iota
	// Keyed under this chain's key.
	Keyed
	// Unkeyed: written before the log was keyed (UnkeyedHash).
	Unkeyed
)

// KindOf checks r's hash against both rules.
func (c *Chain) KindOf(r *aimemoryv1.AuditRecord) Kind {
	switch got := r.GetHash(); {
	case hmac.Equal([]byte(got), []byte(c.Hash(r))):
		return Keyed
	case got == UnkeyedHash(r):
		return Unkeyed
	}
	return Foreign
}

// Validate checks a record a caller asks to append.
func Validate(in *aimemoryv1.AuditRecord) error {
	if in.GetEvent() == "" {
		return &record.FieldError{Field: "event", Rule: "must not be empty"}
	}
	return nil
}

// HeadError: the log's last record does not verify under this chain's key,
// so nothing is appended after it (an append would vouch for it).
type HeadError struct {
	Seq     uint64
	Problem string
}

func (e *HeadError) Error() string {
	return fmt.Sprintf("audit log: record %d, the last, %s: nothing is appended after it (ai-memory audit verify says more)", e.Seq, e.Problem)
}

// Next is in as the record after last (nil: the first), with seq, time,
// prev_hash and keyed hash assigned; in is not changed. It refuses to
// chain onto a last record this key does not verify: an unkeyed one takes
// only the seal (EventKeyed), and a foreign one nothing.
func (c *Chain) Next(last, in *aimemoryv1.AuditRecord, at int64) (*aimemoryv1.AuditRecord, error) {
	r := proto.Clone(in).(*aimemoryv1.AuditRecord)
	r.Seq, r.PrevHash = 1, ""
	if last != nil {
		switch c.KindOf(last) {
		case Unkeyed:
			if in.GetEvent() != EventKeyed {
				return nil, &HeadError{Seq: last.GetSeq(), Problem: "is unkeyed and was not sealed when the engine started"}
			}
		case Foreign:
			return nil, &HeadError{Seq: last.GetSeq(), Problem: fmt.Sprintf("does not verify under this engine's %s (fingerprint %s): if several engines share this database, copy %s from one already serving it", KeyFile, c.fingerprint, KeyFile)}
		}
		r.Seq, r.PrevHash = last.GetSeq()+1, last.GetHash()
	}
	r.At = at
	r.Hash = c.Hash(r)
	return r, nil
}

// Head names one record of a chain by seq and hash; the zero Head, none.
type Head struct {
	Seq  uint64
	Hash string
}

// HeadOf is r's Head.
func HeadOf(r *aimemoryv1.AuditRecord) Head { return Head{Seq: r.GetSeq(), Hash: r.GetHash()} }

// Verifier recomputes a chain fed to it in storage order, and holds it
// against the head its engine pinned: the chain must still hold that
// record, so a truncated tail or a rewritten log is found too.
type Verifier struct {
	chain *Chain
	pin   Head
	prev  *aimemoryv1.AuditRecord
	keyed bool // a keyed record was seen: no unkeyed one may follow
	resp  *aimemoryv1.VerifyAuditResponse
}

// Verifier starts at the beginning of a chain; pin is the head the
// engine pinned (zero: none).
func (c *Chain) Verifier(pin Head) *Verifier {
	return &Verifier{chain: c, pin: pin, prev: &aimemoryv1.AuditRecord{}, resp: &aimemoryv1.VerifyAuditResponse{
		Ok: true, KeyFingerprint: c.fingerprint, PinnedSeq: pin.Seq, PinnedHash: pin.Hash}}
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
	default:
		problem = v.hashProblem(r)
	}
	if problem == "" && r.GetSeq() == v.pin.Seq && r.GetHash() != v.pin.Hash {
		problem = fmt.Sprintf("is not the record this engine pinned (hash %.16s…): the log was rewritten", v.pin.Hash)
	}
	seq := r.GetSeq()
	if seq == 0 {
		seq = v.prev.GetSeq() + 1
	}
	v.Fail(seq, problem)
	v.resp.Count++
	v.resp.HeadHash = r.GetHash()
	v.prev = r
}

func (v *Verifier) hashProblem(r *aimemoryv1.AuditRecord) string {
	switch v.chain.KindOf(r) {
	case Keyed:
		v.keyed = true
	case Unkeyed:
		if v.keyed {
			return "unkeyed record after keyed ones: written without the audit key"
		}
		v.resp.Unkeyed++
	default:
		return fmt.Sprintf("hash does not match its contents under %s (fingerprint %s): the record was edited, or written with another key", KeyFile, v.chain.fingerprint)
	}
	return ""
}

// Fail records problem at seq unless an earlier problem was found ("" is none).
func (v *Verifier) Fail(seq uint64, problem string) {
	if problem != "" && v.resp.Ok {
		v.resp.Ok, v.resp.FirstBadSeq, v.resp.Problem = false, seq, problem
	}
}

// Last is the last record added (nil: none).
func (v *Verifier) Last() *aimemoryv1.AuditRecord {
	if v.resp.Count == 0 {
		return nil
	}
	return v.prev
}

// Result is the verdict on the records added so far.
func (v *Verifier) Result() *aimemoryv1.VerifyAuditResponse {
	n := v.resp.Count
	if v.resp.Unkeyed > 0 && !v.keyed {
		v.Fail(1, fmt.Sprintf("records 1-%d are unkeyed and no keyed record follows them: the log was rewritten without the audit key, or no engine has opened it since it was written", v.resp.Unkeyed))
	}
	if v.pin.Seq > n {
		v.Fail(n+1, fmt.Sprintf("the log ends at record %d but this engine pinned record %d: records were removed from its end", n, v.pin.Seq))
	}
	return v.resp
}

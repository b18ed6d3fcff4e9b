package audit

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Store is what a backend keeps of the log (storage.Audit): it chains
// appends with the Chain it was opened with.
type Store interface {
	AppendAudit(ctx context.Context, r *aimemoryv1.AuditRecord) (*aimemoryv1.AuditRecord, error)
	ListAudit(ctx context.Context, agentID string, limit int) ([]*aimemoryv1.AuditRecord, error)
	// AuditRecordAt is the record stored under seq; nil when there is none.
	AuditRecordAt(ctx context.Context, seq uint64) (*aimemoryv1.AuditRecord, error)
	// VerifyAudit recomputes the whole chain (Verifier) against pin.
	VerifyAudit(ctx context.Context, pin Head) (*aimemoryv1.VerifyAuditResponse, error)
}

// Log is one engine's audit log: its backend's chain, and the head this
// engine pinned in its data dir, moved forward by its appends and verifies
// and only over a chain that still holds the old pin.
type Log struct {
	st  Store
	dir string // where the pin is kept; "" keeps it in memory only
	log *slog.Logger

	mu     sync.Mutex // orders pin moves and their writes
	pin    Head
	pinErr error // the pin file is unreadable: it is neither trusted nor replaced
}

// Unpinned is a Log that keeps its pin in memory only (tests, and servers
// without a data dir).
func Unpinned(st Store) *Log { return &Log{st: st, log: slog.New(slog.DiscardHandler)} }

// Open is the engine's log over st (opened with c) and its data dir dir.
// It seals a log that began unkeyed: when the last record is unkeyed and
// dir holds no pin, it appends EventKeyed, keyed, which freezes every
// record before it. A data dir with a pin has seen this log keyed, so an
// unkeyed last record there means a rewrite, and it is reported, never
// sealed: sealing cannot launder what an engine has pinned.
func Open(ctx context.Context, st Store, c *Chain, dir string, log *slog.Logger) (*Log, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	l := &Log{st: st, dir: dir, log: log}
	l.pin, l.pinErr = LoadPin(dir)
	if l.pinErr != nil {
		log.Error("audit pin unreadable: audit verify fails until it is repaired", "err", l.pinErr)
	}
	last, err := st.ListAudit(ctx, "", 1)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	if len(last) == 0 {
		if l.pin.Seq > 0 {
			log.Error("audit log is empty but this engine pinned a record of it: audit verify will fail", "pinned_seq", l.pin.Seq)
		}
		return l, nil
	}
	head := last[0]
	switch c.KindOf(head) {
	case Keyed:
		if l.pin.Seq > 0 && !l.holds(ctx, l.pin) {
			log.Error("audit log no longer holds the record this engine pinned: audit verify will fail", "pinned_seq", l.pin.Seq)
		}
	case Unkeyed:
		if l.pin.Seq > 0 || l.pinErr != nil {
			log.Error("audit log's last record is unkeyed though this engine pinned a keyed log: not sealed, audit verify will fail", "seq", head.GetSeq())
			break
		}
		r, err := l.Append(ctx, &aimemoryv1.AuditRecord{AgentId: "engine", Event: EventKeyed, Granted: true,
			Reason: fmt.Sprintf("records 1-%d were chained with unkeyed SHA-256; from here on HMAC-SHA-256 under %s (fingerprint %s)", head.GetSeq(), KeyFile, c.Fingerprint())})
		if err != nil {
			return nil, fmt.Errorf("audit log: sealing its unkeyed records: %w", err)
		}
		log.Info("audit log keyed", "unkeyed_records", head.GetSeq(), "seal_seq", r.GetSeq(), "key_fingerprint", c.Fingerprint())
	default:
		log.Error("audit log's last record does not verify under this engine's audit key: audit appends are refused", "err", &HeadError{Seq: head.GetSeq(), Problem: "does not verify under " + KeyFile + " (fingerprint " + c.Fingerprint() + ")"})
	}
	return l, nil
}

// holds reports whether the stored chain still has h's record.
func (l *Log) holds(ctx context.Context, h Head) bool {
	r, err := l.st.AuditRecordAt(ctx, h.Seq)
	return err == nil && r != nil && r.GetHash() == h.Hash
}

// Append appends in and moves the pin to it.
func (l *Log) Append(ctx context.Context, in *aimemoryv1.AuditRecord) (*aimemoryv1.AuditRecord, error) {
	r, err := l.st.AppendAudit(ctx, in)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	pin := l.pin
	l.mu.Unlock()
	// r follows the pin directly (one engine), or other engines appended
	// in between and the pinned record must still be there.
	if pin.Seq == 0 || (r.GetSeq() == pin.Seq+1 && r.GetPrevHash() == pin.Hash) || l.holds(ctx, pin) {
		l.advance(HeadOf(r))
	} else {
		l.log.Error("audit log no longer holds the record this engine pinned: the pin stays, audit verify will fail", "pinned_seq", pin.Seq)
	}
	return r, nil
}

// Pin is the head this engine has pinned (zero: none).
func (l *Log) Pin() Head {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.pin
}

// List is up to limit records, newest first, of one agent or all ("").
func (l *Log) List(ctx context.Context, agentID string, limit int) ([]*aimemoryv1.AuditRecord, error) {
	return l.st.ListAudit(ctx, agentID, limit)
}

// Verify recomputes the chain against the pin and, when it holds, pins
// its head. The pin is read before the chain, so a record this engine
// appended and pinned meanwhile is in what is read.
func (l *Log) Verify(ctx context.Context) (*aimemoryv1.VerifyAuditResponse, error) {
	l.mu.Lock()
	pin, pinErr := l.pin, l.pinErr
	l.mu.Unlock()
	v, err := l.st.VerifyAudit(ctx, pin)
	if err != nil {
		return nil, err
	}
	if pinErr != nil && v.Ok {
		v.Ok, v.FirstBadSeq, v.Problem = false, 0, pinErr.Error()
	}
	if v.Ok && v.Count > 0 {
		l.advance(Head{Seq: v.Count, Hash: v.HeadHash})
	}
	return v, nil
}

// advance moves the pin forward to h, unless it is past h already; an
// unreadable pin file is left for verify to report.
func (l *Log) advance(h Head) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pinErr != nil || h.Seq <= l.pin.Seq {
		return
	}
	l.pin = h
	if l.dir == "" {
		return
	}
	if err := SavePin(l.dir, h); err != nil {
		l.log.Error("audit pin not saved", "err", err)
	}
}

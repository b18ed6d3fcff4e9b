// Package migration copies every record of one store into another through
// their Transfer interfaces (export, import), and the audit log as it was
// (seq, times and keyed hashes kept), resumably and verified: it is
// `ai-memory migrate --to postgres`.
//
// Resumable: import writes nothing of a record already there and
// identical (outcome unchanged), so a run interrupted anywhere is
// continued by running it again, and never duplicates a record. Verified:
// at the end both stores are exported again and compared kind by kind, by
// count and by a checksum (SHA-256 over the sorted SHA-256s of each
// record's deterministic wire encoding), so the order each backend keeps
// records in does not matter and one changed field does; and the audit
// chain must verify on the target, with the data dir's key and pin.
package migration

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/audit"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Kinds are the record kinds, in the order export writes them.
var Kinds = ops.ExportKinds

// KindOf is r's kind and the stored record in it; "" for an empty record.
func KindOf(r *aimemoryv1.ExportRecord) (string, proto.Message) {
	switch x := r.GetRecord().(type) {
	case *aimemoryv1.ExportRecord_Memory:
		return "memory", x.Memory
	case *aimemoryv1.ExportRecord_Archived:
		return "archived", x.Archived
	case *aimemoryv1.ExportRecord_Version:
		return "version", x.Version
	case *aimemoryv1.ExportRecord_Link:
		return "link", x.Link
	case *aimemoryv1.ExportRecord_ArchivedLink:
		return "archived_link", x.ArchivedLink
	case *aimemoryv1.ExportRecord_Entity:
		return "entity", x.Entity
	case *aimemoryv1.ExportRecord_Standard:
		return "standard", x.Standard
	case *aimemoryv1.ExportRecord_Pending:
		return "pending", x.Pending
	case *aimemoryv1.ExportRecord_Subscription:
		return "subscription", x.Subscription
	}
	return "", nil
}

// DefaultBatch is how many records one import transaction takes.
const DefaultBatch = 1000

// maxRefusals bounds the refusals a report lists (all are counted).
const maxRefusals = 100

// Options tune a copy.
type Options struct {
	Batch int // records per import transaction; DefaultBatch when 0
	// Started is told how many records the source has, before the copy;
	// Progress how many more it has copied (created or found there).
	Started  func(total int64)
	Progress func(n int)
	// AuditPin is the head the data dir's engine pinned (audit.Log.Pin):
	// both chains are verified against it.
	AuditPin audit.Head
}

// AuditKind is the audit log's row in a Report, after Kinds.
const AuditKind = "audit"

// reported are the rows of a Report.
var reported = slices.Concat(Kinds, []string{AuditKind})

// Source is a store to copy from: its records and its audit log.
type Source interface {
	storage.Transfer
	storage.Audit
}

// Target is a store to copy into: it also takes an audit log as it was.
type Target interface {
	Source
	storage.AuditImporter
}

// Tally is one record kind's account.
type Tally struct {
	Kind                        string
	Source, Target              int // records of the kind in each store, at the end
	Created, Unchanged, Refused int // this run's import outcomes
	SourceSum, TargetSum        string
}

// Same: the target holds exactly the source's records of the kind.
func (t Tally) Same() bool { return t.Source == t.Target && t.SourceSum == t.TargetSum }

// Report is what a copy did and found.
type Report struct {
	Kinds    []Tally  // in Kinds order, then AuditKind
	Refusals []string // the first maxRefusals, "kind: why"
	// The audit chain verified on each store, at the end.
	SourceChain, TargetChain *aimemoryv1.VerifyAuditResponse
	Took                     time.Duration
}

// Verified: every kind is the same in both stores, nothing was refused,
// and the audit chain verifies on the target.
func (r *Report) Verified() bool {
	for _, t := range r.Kinds {
		if !t.Same() || t.Refused > 0 {
			return false
		}
	}
	return r.TargetChain.GetOk()
}

// Copy copies every record of src into dst, in export order, batch by
// batch (each batch one transaction of dst), then the audit log the same
// way, then verifies. src must not change meanwhile (the caller holds it
// exclusively); dst should be empty or hold an earlier run's copy:
// records of its own count against verification. Both must be opened
// with the data dir's audit key. An error stops the copy where it is;
// running it again continues it.
func Copy(ctx context.Context, src Source, dst Target, opts Options) (*Report, error) {
	start := time.Now()
	if opts.Batch <= 0 {
		opts.Batch = DefaultBatch
	}
	before, err := summarizeAll(ctx, src)
	if err != nil {
		return nil, fmt.Errorf("read the source: %w", err)
	}
	if opts.Started != nil {
		var total int64
		for _, s := range before {
			total += int64(s.Count)
		}
		opts.Started(total)
	}
	rep := &Report{}
	tallies := map[string]*Tally{}
	for _, k := range reported {
		tallies[k] = &Tally{Kind: k}
	}
	tally := func(kind string, r *aimemoryv1.ImportResult) {
		t := tallies[kind]
		switch r.GetOutcome() {
		case "created":
			t.Created++
		case "unchanged":
			t.Unchanged++
		default:
			t.Refused++
			if len(rep.Refusals) < maxRefusals {
				rep.Refusals = append(rep.Refusals, kind+": "+r.GetError())
			}
		}
	}
	err = inBatches(ctx, opts, src.Export, func(batch []*aimemoryv1.ExportRecord) error {
		results, err := dst.Import(ctx, batch)
		if err != nil {
			return fmt.Errorf("import: %w", err)
		}
		for i, r := range results {
			kind, _ := KindOf(batch[i])
			tally(kind, r)
		}
		return nil
	}, func(r *aimemoryv1.ExportRecord) bool { kind, _ := KindOf(r); return kind != "" })
	if err != nil {
		return nil, err
	}
	err = inBatches(ctx, opts, src.ExportAudit, func(batch []*aimemoryv1.AuditRecord) error {
		results, err := dst.ImportAudit(ctx, batch)
		if err != nil {
			return fmt.Errorf("import the audit log: %w", err)
		}
		for _, r := range results {
			tally(AuditKind, r)
		}
		return nil
	}, func(*aimemoryv1.AuditRecord) bool { return true })
	if err != nil {
		return nil, err
	}
	after, err := summarizeAll(ctx, dst)
	if err != nil {
		return nil, fmt.Errorf("read the target back: %w", err)
	}
	for _, k := range reported {
		t := tallies[k]
		t.Source, t.SourceSum = before[k].Count, before[k].Sum
		t.Target, t.TargetSum = after[k].Count, after[k].Sum
		rep.Kinds = append(rep.Kinds, *t)
	}
	if rep.SourceChain, err = src.VerifyAudit(ctx, opts.AuditPin); err != nil {
		return nil, fmt.Errorf("verify the source's audit log: %w", err)
	}
	if rep.TargetChain, err = dst.VerifyAudit(ctx, opts.AuditPin); err != nil {
		return nil, fmt.Errorf("verify the target's audit log: %w", err)
	}
	rep.Took = time.Since(start)
	return rep, nil
}

// inBatches feeds what export yields (and keep accepts) to flush in
// batches of opts.Batch, reporting progress after each.
func inBatches[T any](ctx context.Context, opts Options, export func(context.Context, func(T) error) error, flush func([]T) error, keep func(T) bool) error {
	var batch []T
	send := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := flush(batch); err != nil {
			return err
		}
		if opts.Progress != nil {
			opts.Progress(len(batch))
		}
		batch = batch[:0]
		return nil
	}
	err := export(ctx, func(r T) error {
		if !keep(r) {
			return nil
		}
		batch = append(batch, r)
		if len(batch) < opts.Batch {
			return nil
		}
		if err := send(); err != nil {
			return err
		}
		return ctx.Err()
	})
	if err != nil {
		return err
	}
	return send()
}

// Summary is one kind's records in a store: how many, and their checksum.
type Summary struct {
	Count int
	Sum   string
}

// Summarize exports s and sums it up by kind.
func Summarize(ctx context.Context, s storage.Transfer) (map[string]Summary, error) {
	hashes := map[string][][sha256.Size]byte{}
	err := s.Export(ctx, func(r *aimemoryv1.ExportRecord) error {
		kind, msg := KindOf(r)
		if kind == "" {
			return nil
		}
		return addHash(hashes, kind, msg)
	})
	if err != nil {
		return nil, err
	}
	out := map[string]Summary{}
	for _, k := range Kinds {
		out[k] = sum(hashes[k])
	}
	return out, nil
}

// summarizeAll is Summarize plus the audit log, under AuditKind.
func summarizeAll(ctx context.Context, s Source) (map[string]Summary, error) {
	out, err := Summarize(ctx, s)
	if err != nil {
		return nil, err
	}
	hashes := map[string][][sha256.Size]byte{}
	if err := s.ExportAudit(ctx, func(r *aimemoryv1.AuditRecord) error { return addHash(hashes, AuditKind, r) }); err != nil {
		return nil, err
	}
	out[AuditKind] = sum(hashes[AuditKind])
	return out, nil
}

// addHash adds the SHA-256 of msg's deterministic encoding to kind's.
func addHash(hashes map[string][][sha256.Size]byte, kind string, msg proto.Message) error {
	raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(msg)
	if err != nil {
		return err
	}
	hashes[kind] = append(hashes[kind], sha256.Sum256(raw))
	return nil
}

// sum is a kind's Summary: its count, and SHA-256 over its sorted hashes.
func sum(hs [][sha256.Size]byte) Summary {
	slices.SortFunc(hs, func(a, b [sha256.Size]byte) int { return bytes.Compare(a[:], b[:]) })
	h := sha256.New()
	for _, x := range hs {
		h.Write(x[:])
	}
	return Summary{Count: len(hs), Sum: hex.EncodeToString(h.Sum(nil))}
}

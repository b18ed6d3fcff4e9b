// Package migration copies every record of one store into another through
// their Transfer interfaces (export, import), resumably and verified: it
// is `ai-memory migrate --to postgres`.
//
// Resumable: import writes nothing of a record already there and
// identical (outcome unchanged), so a run interrupted anywhere is
// continued by running it again, and never duplicates a record. Verified:
// at the end both stores are exported again and compared kind by kind, by
// count and by a checksum (SHA-256 over the sorted SHA-256s of each
// record's deterministic wire encoding), so the order each backend keeps
// records in does not matter and one changed field does.
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

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// Kinds are the record kinds, in the order export writes them.
var Kinds = []string{"memory", "archived", "version", "link", "archived_link", "entity", "standard", "pending", "subscription"}

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
	Kinds    []Tally  // in Kinds order
	Refusals []string // the first maxRefusals, "kind: why"
	Took     time.Duration
}

// Verified: every kind is the same in both stores and nothing was refused.
func (r *Report) Verified() bool {
	for _, t := range r.Kinds {
		if !t.Same() || t.Refused > 0 {
			return false
		}
	}
	return true
}

// Copy copies every record of src into dst, in export order, batch by
// batch (each batch one transaction of dst), then verifies. src must not
// change meanwhile (the caller holds it exclusively); dst should be empty
// or hold an earlier run's copy: records of its own count against
// verification. An error stops the copy where it is; running it again
// continues it.
func Copy(ctx context.Context, src, dst storage.Transfer, opts Options) (*Report, error) {
	start := time.Now()
	if opts.Batch <= 0 {
		opts.Batch = DefaultBatch
	}
	before, err := Summarize(ctx, src)
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
	for _, k := range Kinds {
		tallies[k] = &Tally{Kind: k}
	}
	var batch []*aimemoryv1.ExportRecord
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		results, err := dst.Import(ctx, batch)
		if err != nil {
			return fmt.Errorf("import: %w", err)
		}
		for i, r := range results {
			kind, _ := KindOf(batch[i])
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
		if opts.Progress != nil {
			opts.Progress(len(batch))
		}
		batch = batch[:0]
		return nil
	}
	err = src.Export(ctx, func(r *aimemoryv1.ExportRecord) error {
		if kind, _ := KindOf(r); kind == "" {
			return nil
		}
		batch = append(batch, r)
		if len(batch) < opts.Batch {
			return nil
		}
		if err := flush(); err != nil {
			return err
		}
		return ctx.Err()
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return nil, err
	}
	after, err := Summarize(ctx, dst)
	if err != nil {
		return nil, fmt.Errorf("read the target back: %w", err)
	}
	for _, k := range Kinds {
		t := tallies[k]
		t.Source, t.SourceSum = before[k].Count, before[k].Sum
		t.Target, t.TargetSum = after[k].Count, after[k].Sum
		rep.Kinds = append(rep.Kinds, *t)
	}
	rep.Took = time.Since(start)
	return rep, nil
}

// Summary is one kind's records in a store: how many, and their checksum.
type Summary struct {
	Count int
	Sum   string
}

// Summarize exports s and sums it up by kind.
func Summarize(ctx context.Context, s storage.Transfer) (map[string]Summary, error) {
	hashes := map[string][][sha256.Size]byte{}
	enc := proto.MarshalOptions{Deterministic: true}
	err := s.Export(ctx, func(r *aimemoryv1.ExportRecord) error {
		kind, msg := KindOf(r)
		if kind == "" {
			return nil
		}
		raw, err := enc.Marshal(msg)
		if err != nil {
			return err
		}
		hashes[kind] = append(hashes[kind], sha256.Sum256(raw))
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := map[string]Summary{}
	for _, k := range Kinds {
		hs := hashes[k]
		slices.SortFunc(hs, func(a, b [sha256.Size]byte) int { return bytes.Compare(a[:], b[:]) })
		h := sha256.New()
		for _, x := range hs {
			h.Write(x[:])
		}
		out[k] = Summary{Count: len(hs), Sum: hex.EncodeToString(h.Sum(nil))}
	}
	return out, nil
}

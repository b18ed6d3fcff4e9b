package records

import (
	"context"
	"errors"

	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	"github.com/ai-memory/ai-memory/internal/engine/storage/seam"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// One read of an export reads at most this many records or about this
// many bytes of them, whichever comes first: a batch.
const (
	ExportBatchRecords = 1000
	exportBatchBytes   = 4 << 20
)

// errFull stops a read whose batch is full; the next read resumes there.
var errFull = errors.New("export batch full")

// scanBatches sends what fill reads, a batch per read of the backend's
// Scan, after that read ends (bbolt: its transaction is over, so a slow
// consumer holds none). fill adds each record with its size; add answers
// false, not taking it, once the batch is full, and fill stops there
// (returning errFull) to resume at it in the next read. A read that fills
// no batch is the last.
func scanBatches[T any](ctx context.Context, s *Store, fill func(t seam.Tx, add func(r T, size int) bool) error, send func(T) error) error {
	return s.b.Scan(ctx, func(read func(func(seam.Tx) error) error) error {
		for {
			var batch []T
			full := false
			err := read(func(t seam.Tx) error {
				batch, full = nil, false
				size := 0
				err := fill(t, func(r T, n int) bool {
					if len(batch) == ExportBatchRecords || size >= exportBatchBytes {
						full = true
						return false
					}
					batch, size = append(batch, r), size+n
					return true
				})
				if errors.Is(err, errFull) {
					return nil
				}
				return err
			})
			if err != nil {
				return err
			}
			for _, r := range batch {
				if err := send(r); err != nil {
					return err
				}
			}
			if err := ctx.Err(); err != nil || !full {
				return err
			}
		}
	})
}

// Export calls each with every record, as stored, in the order Import
// needs: memories, archived memories, superseded versions, links, archived
// links, each entity's aliases, standards, pending actions, webhook
// subscriptions (ops.ExportKinds). Index rows are derived again on import;
// vectors are not carried (reindex rebuilds them).
//
// It reads in batches (scanBatches: bbolt a read transaction per batch,
// ended before each sees it, so a slow consumer never pins the file's
// pages against a writer that must grow it; PostgreSQL one snapshot).
// What that gives, where the batches are not one snapshot:
//   - A record that stays where it is (same kind, same key) for the whole
//     export is sent exactly once; no key of a kind is sent twice.
//   - A record written or deleted during the export may or may not be
//     sent, as of some moment during the export. One that moves between
//     kinds meanwhile (archived, restored) may be sent in one form or,
//     when it moves behind both walks, in neither: a second export has it.
//   - The stream is closed under reference, so Import into an empty store
//     refuses none of it (exportState): a link or entity is sent only when
//     its memories were; an archived memory already sent as live is not
//     sent again; an archived link only when its ends were sent, one of
//     them archived; an alias only once per namespace.
//
// The cost of that closure is a map of the memory ids sent (with their
// namespaces), held for the export's length.
func (s *Store) Export(ctx context.Context, each func(*aimemoryv1.ExportRecord) error) error {
	e := exportState{live: map[string]string{}, archived: map[string]bool{}, aliases: map[string]bool{}, names: map[string]string{}}
	keep := map[string]func(*aimemoryv1.ExportRecord) bool{
		ops.KindMemory: e.keepMemory, ops.KindArchived: e.keepArchived, ops.KindLink: e.keepLink,
		ops.KindArchivedLink: e.keepArchivedLink, ops.KindEntity: e.keepEntity,
	}
	for _, kind := range ops.ExportKinds {
		send := each
		if k := keep[kind]; k != nil {
			send = func(r *aimemoryv1.ExportRecord) error {
				if !k(r) {
					return nil
				}
				return each(r)
			}
		}
		after := ""
		err := scanBatches(ctx, s, func(t seam.Tx, add func(*aimemoryv1.ExportRecord, int) bool) error {
			return t.EachRecord(kind, after, ExportBatchRecords+1, func(key string, r *aimemoryv1.ExportRecord) error {
				if !add(r, proto.Size(r)) {
					return errFull
				}
				after = key
				return nil
			})
		}, send)
		if err != nil {
			return err
		}
	}
	return nil
}

// exportState is what Export has sent, for the references of what
// follows: live memory ids with their namespaces (interned in names),
// archived ids, and aliases by folded form and namespace.
type exportState struct {
	live     map[string]string
	archived map[string]bool
	aliases  map[string]bool
	names    map[string]string
}

func (e exportState) keepMemory(r *aimemoryv1.ExportRecord) bool {
	ns := r.GetMemory().GetNamespace()
	if in, ok := e.names[ns]; ok {
		ns = in
	} else {
		e.names[ns] = ns
	}
	e.live[r.GetMemory().GetId()] = ns
	return true
}

// keepArchived drops a memory archived after it was sent as live.
func (e exportState) keepArchived(r *aimemoryv1.ExportRecord) bool {
	id := r.GetArchived().GetMemory().GetId()
	if _, live := e.live[id]; live {
		return false
	}
	e.archived[id] = true
	return true
}

func (e exportState) keepLink(r *aimemoryv1.ExportRecord) bool {
	_, src := e.live[r.GetLink().GetSourceId()]
	_, dst := e.live[r.GetLink().GetTargetId()]
	return src && dst
}

// keepArchivedLink keeps an archived link whose ends were both sent, one
// of them archived, as the archive keeps them.
func (e exportState) keepArchivedLink(r *aimemoryv1.ExportRecord) bool {
	archived := false
	for _, id := range []string{r.GetArchivedLink().GetSourceId(), r.GetArchivedLink().GetTargetId()} {
		if e.archived[id] {
			archived = true
		} else if _, live := e.live[id]; !live {
			return false
		}
	}
	return archived
}

// keepEntity keeps an entity whose memory was sent, with the aliases no
// entity sent before holds in its namespace (an alias freed and taken
// again during the export).
func (e exportState) keepEntity(r *aimemoryv1.ExportRecord) bool {
	ent := r.GetEntity()
	ns, live := e.live[ent.GetId()]
	if !live {
		return false
	}
	kept := ent.Aliases[:0]
	for _, a := range ent.GetAliases() {
		k := rules.FoldAlias(a.GetAlias()) + "\x00" + ns
		if !e.aliases[k] {
			e.aliases[k] = true
			kept = append(kept, a)
		}
	}
	ent.Aliases = kept
	return len(kept) > 0
}

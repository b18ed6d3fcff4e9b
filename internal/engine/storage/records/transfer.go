package records

import (
	"context"
	"errors"

	"github.com/ai-memory/ai-memory/internal/engine/storage/seam"
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

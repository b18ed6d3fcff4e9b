package boltstore

import (
	"path/filepath"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// archivedStore is a fresh store whose n memories were all deleted into
// the archive (1,000 per transaction); it returns their ids.
func archivedStore(b *testing.B, n int) (*Store, []string) {
	b.Helper()
	s, err := Open(storagetest.Operator(), filepath.Join(b.TempDir(), "a.db"), Options{Logger: benchLog})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	bulkLoad(b, s, newCorpus(uint64(n)), n)
	var ids []string
	err = s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMemories).ForEach(func(k, _ []byte) error {
			ids = append(ids, string(k))
			return nil
		})
	})
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < len(ids); i += 1000 {
		if _, err := records.New(s).DeleteMemories(storagetest.Operator(), &aimemoryv1.DeleteMemoriesRequest{Ids: ids[i:min(i+1000, len(ids))], Archive: true}); err != nil {
			b.Fatal(err)
		}
	}
	return s, ids
}

// BenchmarkPurgeArchive10k: one purge by cut-off of 10k archived rows
// (one transaction), and a dry run of it.
func BenchmarkPurgeArchive10k(b *testing.B) {
	var dry, purge latencies
	for b.Loop() {
		b.StopTimer()
		s, _ := archivedStore(b, 10_000)
		req := &aimemoryv1.PurgeArchiveRequest{Before: time.Now().Add(time.Hour).UnixNano()}
		b.StartTimer()
		dry.time(func() {
			req.DryRun = true
			if r, err := records.New(s).PurgeArchive(storagetest.Operator(), req); err != nil || r.Purged != 10_000 {
				b.Fatal(r, err)
			}
		})
		purge.time(func() {
			req.DryRun = false
			if r, err := records.New(s).PurgeArchive(storagetest.Operator(), req); err != nil || r.Purged != 10_000 {
				b.Fatal(r, err)
			}
		})
	}
	b.ReportMetric(float64(dry[0].Milliseconds()), "dry-run-ms")
	b.ReportMetric(float64(purge[0].Milliseconds()), "purge-ms")
}

// BenchmarkRestoreArchive10k: restoring 10k archived rows one call each,
// 32 in flight (group commit shares the fsyncs), and each call's p50/p95.
func BenchmarkRestoreArchive10k(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		s, ids := archivedStore(b, 10_000)
		b.StartTimer()
		start := time.Now()
		lat := make([]latencies, 32)
		var wg sync.WaitGroup
		for g := range 32 {
			wg.Go(func() {
				for i := g; i < len(ids); i += 32 {
					lat[g].time(func() {
						if _, err := records.New(s).RestoreMemory(storagetest.Operator(), &aimemoryv1.RestoreMemoryRequest{Id: ids[i]}); err != nil {
							b.Error(err)
						}
					})
				}
			})
		}
		wg.Wait()
		total := time.Since(start)
		var all latencies
		for _, l := range lat {
			all = append(all, l...)
		}
		all.report(b)
		b.ReportMetric(float64(total.Milliseconds()), "total-ms")
		b.ReportMetric(float64(len(ids))/total.Seconds(), "restores/s")
	}
}

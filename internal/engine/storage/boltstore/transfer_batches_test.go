package boltstore

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	"github.com/ai-memory/ai-memory/internal/testwait"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// importedMemory is an export record of a memory with a chosen id (ids
// order the memories bucket, so a test knows which the export has sent).
func importedMemory(id string, content string) *aimemoryv1.ExportRecord {
	return &aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_Memory{Memory: &aimemoryv1.Memory{
		Id: id, Title: "note " + id, Content: content, Namespace: "t", Tier: "long", Priority: 5, Confidence: 1,
		CreatedAt: 1, UpdatedAt: 1, CreatedBy: "ai:seed"}}}
}

// seedMemories imports memories m00000.. m<n-1> in one transaction.
func seedMemories(t *testing.T, s *Store, n int) {
	t.Helper()
	var recs []*aimemoryv1.ExportRecord
	for i := range n {
		recs = append(recs, importedMemory(fmt.Sprintf("m%05d", i), "small"))
	}
	for i, o := range outcomes(t, s, recs) {
		if o != "created " {
			t.Fatalf("seed %d: %s", i, o)
		}
	}
}

// exportRun is an Export in the background that stops in each at one
// record: paused is closed there, and it goes on once Resume is called;
// done carries its error.
type exportRun struct {
	paused chan struct{}
	resume chan struct{}
	Resume func()
	done   chan error
	recs   []*aimemoryv1.ExportRecord // read after done
}

// pausedExport starts an export that stops at the record numbered at
// (0-based). A failing test resumes it, so the store can close.
func pausedExport(t *testing.T, s *Store, at int) *exportRun {
	r := &exportRun{paused: make(chan struct{}), resume: make(chan struct{}), done: make(chan error, 1)}
	r.Resume = sync.OnceFunc(func() { close(r.resume) })
	t.Cleanup(r.Resume)
	go func() {
		r.done <- records.New(s).Export(storagetest.Operator(), func(rec *aimemoryv1.ExportRecord) error {
			if len(r.recs) == at {
				close(r.paused)
				<-r.resume
			}
			r.recs = append(r.recs, rec)
			return nil
		})
	}()
	return r
}

// growPastItsMapping imports large memories until the file is past twice
// its size now, and so past its mapping too (bbolt maps the next power of
// two): bbolt had to remap it, which waits for every open read
// transaction. The channel carries nil then, or why the writes stopped.
func growPastItsMapping(t *testing.T, s *Store) <-chan error {
	t.Helper()
	before, err := os.Stat(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	wrote := make(chan error, 1)
	go func() {
		big := strings.Repeat("x", 60_000)
		for i := 0; ; i++ {
			fi, err := os.Stat(s.Path())
			if err != nil || fi.Size() > 2*before.Size() {
				wrote <- err
				return
			}
			if i == 10_000 {
				wrote <- errors.New("the file did not grow")
				return
			}
			res, err := records.New(s).Import(storagetest.Operator(), []*aimemoryv1.ExportRecord{importedMemory(fmt.Sprintf("big%05d", i), big)})
			if err == nil && res[0].GetOutcome() != "created" {
				err = fmt.Errorf("big write %d: %s %s", i, res[0].GetOutcome(), res[0].GetError())
			}
			if err != nil {
				wrote <- err
				return
			}
		}
	}()
	return wrote
}

// TestExportPausedLetsWritersGrowTheFile: an export whose consumer stops
// mid-stream holds no read transaction, so a writer that must grow (and
// remap) the file commits meanwhile; the export then ends with every
// record that was there throughout.
func TestExportPausedLetsWritersGrowTheFile(t *testing.T) {
	s, _ := openTest(t, Options{})
	seedMemories(t, s, 2*records.ExportBatchRecords+1)
	run := pausedExport(t, s, records.ExportBatchRecords/2)
	testwait.Recv(t, run.paused, "the export to pause")

	wrote := growPastItsMapping(t, s)
	select {
	case err := <-wrote:
		if err != nil {
			t.Fatal(err)
		}
	case <-run.done:
		t.Fatal("the export ended while its consumer was stopped")
	case <-time.After(testwait.Deadline):
		t.Fatalf("writes growing the file did not commit within %s while the export was paused", testwait.Deadline)
	}
	run.Resume()
	if err := testwait.Recv(t, run.done, "the resumed export to end"); err != nil {
		t.Fatal(err)
	}
	sent := map[string]int{}
	for _, r := range run.recs {
		sent[r.GetMemory().GetId()]++
	}
	for i := range 2*records.ExportBatchRecords + 1 {
		if id := fmt.Sprintf("m%05d", i); sent[id] != 1 {
			t.Fatalf("memory %s sent %d times", id, sent[id])
		}
	}
}

// TestExportDuringWritesImportsWithoutRefusals: records written, archived
// and deleted while an export is paused between batches leave a stream
// that imports into an empty store with nothing refused: no link to a
// memory the stream lacks, no memory both live and archived, no archived
// link with both ends live.
func TestExportDuringWritesImportsWithoutRefusals(t *testing.T) {
	src, _ := openTest(t, Options{})
	ctx := storagetest.Operator()
	n := 2*records.ExportBatchRecords + 1
	seedMemories(t, src, n)
	link := func(from, to string) {
		t.Helper()
		if _, err := records.New(src).PutLink(ctx, &aimemoryv1.PutLinkRequest{SourceId: from, TargetId: to, Relation: "related_to"}); err != nil {
			t.Fatal(err)
		}
	}
	link("m00002", "m00003")
	link("m01500", "m01501")
	// Paused on the last record of the first batch: m00000..m00999 read,
	// the second batch not yet.
	run := pausedExport(t, src, records.ExportBatchRecords-1)
	testwait.Recv(t, run.paused, "the export to pause")

	// A new memory ahead of the walk, linked from one already sent.
	if out := outcomes(t, src, []*aimemoryv1.ExportRecord{importedMemory("a-new", "late")}); out[0] != "created " {
		t.Fatal(out)
	}
	link("m00001", "a-new")
	// One sent as live, archived with its link; one not yet sent, deleted with its link.
	if _, err := records.New(src).DeleteMemories(ctx, &aimemoryv1.DeleteMemoriesRequest{Ids: []string{"m00002"}, Archive: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := records.New(src).DeleteMemories(ctx, &aimemoryv1.DeleteMemoriesRequest{Ids: []string{"m01500"}}); err != nil {
		t.Fatal(err)
	}
	// Both ends will be in the stream.
	link("m00004", "m01502")
	run.Resume()
	if err := testwait.Recv(t, run.done, "the resumed export to end"); err != nil {
		t.Fatal(err)
	}

	kinds := map[string]int{}
	for _, r := range run.recs {
		switch {
		case r.GetMemory() != nil:
			kinds["memory"]++
		case r.GetLink() != nil:
			kinds["link "+r.GetLink().GetSourceId()+">"+r.GetLink().GetTargetId()]++
		default:
			kinds[fmt.Sprintf("%T", r.GetRecord())]++
		}
	}
	want := map[string]int{"memory": n - 1, "link m00004>m01502": 1}
	if fmt.Sprint(kinds) != fmt.Sprint(want) {
		t.Fatalf("exported %v, want %v", kinds, want)
	}
	dst, _ := openTest(t, Options{})
	for i, o := range outcomes(t, dst, run.recs) {
		if o != "created " {
			t.Fatalf("record %d: %s", i, o)
		}
	}
}

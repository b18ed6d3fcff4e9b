package audit_test

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/audit"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/boltstore"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// dataDir is a data dir with its audit key.
func dataDir(t *testing.T) (string, *audit.Chain) {
	t.Helper()
	dir := t.TempDir()
	c, err := audit.OpenChain(dir)
	if err != nil {
		t.Fatal(err)
	}
	return dir, c
}

// openStore opens dir's bbolt file with c, closed at the end of the test
// (or earlier by the returned func).
func openStore(t testing.TB, dir string, c *audit.Chain) (*records.Store, func()) {
	t.Helper()
	s, err := boltstore.Open(context.Background(), filepath.Join(dir, "memory.db"), storage.Options{Audit: c})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	closeIt := func() {
		if !closed {
			closed = true
			s.Close()
		}
	}
	t.Cleanup(closeIt)
	return records.New(s), closeIt
}

// writeRaw puts records into dir's bbolt file as an older release (or
// someone holding the file) would.
func writeRaw(t testing.TB, dir string, rs ...*aimemoryv1.AuditRecord) {
	t.Helper()
	db, err := bolt.Open(filepath.Join(dir, "memory.db"), 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte("audit"))
		if err != nil {
			return err
		}
		for _, r := range rs {
			raw, _ := proto.Marshal(r)
			if err := b.Put(binaryKey(r.GetSeq()), raw); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func binaryKey(seq uint64) []byte { return binary.BigEndian.AppendUint64(nil, seq) }

func openLog(t *testing.T, s audit.Store, c *audit.Chain, dir string) *audit.Log {
	t.Helper()
	l, err := audit.Open(context.Background(), s, c, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestOpenSealsAnUnkeyedLog: an engine opening a log an older release
// wrote (unkeyed) in a data dir with no pin appends the keyed seal, which
// fixes the old records: the log verifies, says how many are unkeyed, and
// an old record edited and its tail recomputed is caught at the seal.
func TestOpenSealsAnUnkeyedLog(t *testing.T) {
	ctx := context.Background()
	dir, c := dataDir(t)
	old := storagetest.UnkeyedAudit(3)
	writeRaw(t, dir, old...)
	s, closeStore := openStore(t, dir, c)
	l := openLog(t, s, c, dir)
	v, err := l.Verify(ctx)
	if err != nil || !v.GetOk() || v.GetCount() != 4 || v.GetUnkeyed() != 3 {
		t.Fatalf("sealed log: %v, %v", v, err)
	}
	seal, _ := s.AuditRecordAt(ctx, 4)
	if seal.GetEvent() != audit.EventKeyed || c.KindOf(seal) != audit.Keyed || !strings.Contains(seal.GetReason(), c.Fingerprint()) {
		t.Fatalf("seal = %v", seal)
	}
	if pin, err := audit.LoadPin(dir); err != nil || pin != audit.HeadOf(seal) {
		t.Fatalf("pin after the seal = %v, %v", pin, err)
	}
	// Opening again seals nothing more.
	if openLog(t, s, c, dir); mustCount(t, s) != 4 {
		t.Fatal("a second open sealed again")
	}

	closeStore()
	edited := append([]*aimemoryv1.AuditRecord(nil), old...)
	edited[1] = proto.Clone(old[1]).(*aimemoryv1.AuditRecord)
	edited[1].Reason = "granted after all"
	storagetest.Rechain(edited, 1)
	writeRaw(t, dir, edited...)
	s, _ = openStore(t, dir, c)
	v, err = openLog(t, s, c, dir).Verify(ctx)
	if err != nil || v.GetOk() || v.GetFirstBadSeq() != 4 || !strings.Contains(v.GetProblem(), "prev_hash") {
		t.Fatalf("old record edited after the seal: %v, %v", v, err)
	}
}

// TestOpenDoesNotSealWhenPinned: a data dir whose engine pinned the log
// has seen it keyed, so a log found unkeyed there was rewritten: it is not
// sealed, appends are refused, and verify says so. Sealing cannot launder
// a rewrite past a pin.
func TestOpenDoesNotSealWhenPinned(t *testing.T) {
	ctx := context.Background()
	dir, c := dataDir(t)
	s, closeStore := openStore(t, dir, c)
	l := openLog(t, s, c, dir)
	var genuine []*aimemoryv1.AuditRecord
	for range 3 {
		r, err := l.Append(ctx, &aimemoryv1.AuditRecord{AgentId: "ai:a", Event: "call_denied"})
		if err != nil {
			t.Fatal(err)
		}
		genuine = append(genuine, r)
	}
	closeStore()
	rewritten := storagetest.UnkeyedAudit(3) // the whole log, unkeyed
	writeRaw(t, dir, rewritten...)
	s, _ = openStore(t, dir, c)
	l = openLog(t, s, c, dir)
	if n := mustCount(t, s); n != 3 {
		t.Fatalf("a pinned data dir sealed a rewritten log: %d records", n)
	}
	if _, err := l.Append(ctx, &aimemoryv1.AuditRecord{AgentId: "ai:a", Event: "call_denied"}); err == nil {
		t.Fatal("an append chained onto the rewritten log")
	}
	v, err := l.Verify(ctx)
	if err != nil || v.GetOk() || v.GetPinnedSeq() != 3 || v.GetPinnedHash() != genuine[2].GetHash() {
		t.Fatalf("verify of the rewritten log: %v, %v", v, err)
	}
}

// TestPinFollowsAppendsAndVerify: the pin in the data dir moves with the
// engine's appends and verifies, catches a cut tail after a restart, and
// when it is removed verify says there was none to compare with (and the
// log still verifies: a missing pin is no evidence of tampering, only the
// loss of the means to see a cut).
func TestPinFollowsAppendsAndVerify(t *testing.T) {
	ctx := context.Background()
	dir, c := dataDir(t)
	s, closeStore := openStore(t, dir, c)
	l := openLog(t, s, c, dir)
	var last *aimemoryv1.AuditRecord
	for range 4 {
		var err error
		if last, err = l.Append(ctx, &aimemoryv1.AuditRecord{AgentId: "ai:a", Event: "call_denied"}); err != nil {
			t.Fatal(err)
		}
		if pin, err := audit.LoadPin(dir); err != nil || pin != audit.HeadOf(last) {
			t.Fatalf("pin after append %d = %v, %v", last.GetSeq(), pin, err)
		}
	}
	closeStore()

	db, err := bolt.Open(filepath.Join(dir, "memory.db"), 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error { return tx.Bucket([]byte("audit")).Delete(binaryKey(4)) }); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s, closeStore = openStore(t, dir, c)
	v, err := openLog(t, s, c, dir).Verify(ctx)
	if err != nil || v.GetOk() || v.GetFirstBadSeq() != 4 || v.GetPinnedSeq() != 4 {
		t.Fatalf("cut tail after a restart: %v, %v", v, err)
	}
	if pin, _ := audit.LoadPin(dir); pin != audit.HeadOf(last) {
		t.Fatalf("a failed verify moved the pin to %v", pin)
	}
	// An append onto the cut log does not move the pin either.
	l = openLog(t, s, c, dir)
	if _, err := l.Append(ctx, &aimemoryv1.AuditRecord{AgentId: "ai:a", Event: "call_denied"}); err != nil {
		t.Fatal(err)
	}
	if pin, _ := audit.LoadPin(dir); pin != audit.HeadOf(last) {
		t.Fatalf("an append onto a cut log moved the pin to %v", pin)
	}
	closeStore()

	if err := os.Remove(filepath.Join(dir, audit.PinFile)); err != nil {
		t.Fatal(err)
	}
	s, _ = openStore(t, dir, c)
	l = openLog(t, s, c, dir)
	v, err = l.Verify(ctx)
	if err != nil || !v.GetOk() || v.GetPinnedSeq() != 0 || v.GetCount() != 4 {
		t.Fatalf("verify without a pin: %v, %v", v, err)
	}
	if pin, _ := audit.LoadPin(dir); pin.Seq != 4 {
		t.Fatalf("verify without a pin pinned %v", pin)
	}

	if err := os.WriteFile(filepath.Join(dir, audit.PinFile), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	v, err = openLog(t, s, c, dir).Verify(ctx)
	if err != nil || v.GetOk() || !strings.Contains(v.GetProblem(), audit.PinFile) {
		t.Fatalf("verify with an unreadable pin: %v, %v", v, err)
	}
}

func mustCount(t *testing.T, s *records.Store) int {
	t.Helper()
	rs, err := s.ListAudit(context.Background(), "", 100)
	if err != nil {
		t.Fatal(err)
	}
	return len(rs)
}

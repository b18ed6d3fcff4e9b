package boltstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/ai-memory/ai-memory/internal/engine/audit"
	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	"github.com/ai-memory/ai-memory/internal/engine/storage/vecset"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// oldRelease is a data dir written by release 5d21ae6 (schema 1); its
// README says what is in it.
const oldRelease = "../../../../e2e/testdata/datadir-5d21ae6/memory.db"

// schemaOf reads a closed file's schema version.
func schemaOf(t *testing.T, path string) uint32 {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v uint32
	db.View(func(tx *bolt.Tx) error {
		v = binary.BigEndian.Uint32(tx.Bucket(bucketMeta).Get(keySchemaVersion))
		return nil
	})
	return v
}

// TestUpgradeFromRelease5d21ae6 opens a copy of the old data dir: the
// migration stamps created_by from metadata.agent_id, and every memory,
// link, entity alias and the audit chain read back as they were.
func TestUpgradeFromRelease5d21ae6(t *testing.T) {
	ctx := storagetest.Operator()
	raw, err := os.ReadFile(oldRelease)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "memory.db")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if v := schemaOf(t, path); v != 1 {
		t.Fatalf("test data has schema %d, want 1", v)
	}

	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{"1c0220c5-80e8-426f-a231-dcd6b8f3b4b8", "a4f34e8d-c255-43af-bb87-293148cad2bc", "52b18a9b-0bab-4f4c-a988-cb7ef7f8d9d4", "2c5113f5-98fd-4bda-82f8-04fa96f97314", "34da793f-0317-4088-b9e8-5a09a77afaed"}
	want := []struct{ title, ns, author string }{
		{"Build uses make", "proj/alpha", "ai:claude-code"},
		{"Database is bbolt", "proj/alpha", "ai:codex"},
		{"Deploy on Fridays is banned", "proj/alpha/ops", "ai:legacy-agent"},
		{"Scratch note", "proj/beta", "ai:gemini"},
		{"Unicode título ✓", "global", "ai:legacy-agent"},
	}
	got, err := records.New(s).GetMemories(ctx, &aimemoryv1.GetMemoriesRequest{Ids: ids, IncludeLinks: true})
	if err != nil || len(got.Memories) != 5 || len(got.NotFound) != 0 {
		t.Fatalf("get = %v, %v", got, err)
	}
	recalled := 0
	for i, m := range got.Memories {
		w := want[i]
		if m.Id != ids[i] || m.Title != w.title || m.Namespace != w.ns || m.Tier != "long" || m.CreatedBy != w.author || m.UpdatedBy != "" || m.CreatedAt == 0 {
			t.Errorf("memory %d = %v, want %+v created_by from metadata.agent_id", i, m, w)
		}
		if m.AccessCount > 0 {
			recalled++
		}
	}
	if recalled == 0 {
		t.Error("the recall's access counts were lost")
	}
	var links []string
	for _, l := range got.Links {
		links = append(links, l.SourceId[:8]+" "+l.Relation+" "+l.TargetId[:8])
	}
	slices.Sort(links)
	if !slices.Equal(links, []string{"1c0220c5 related_to a4f34e8d", "52b18a9b derived_from 1c0220c5"}) {
		t.Errorf("links = %q", links)
	}
	for _, alias := range []string{"bbolt", "BoltDB", "bolt"} {
		e, err := records.New(s).GetEntityByAlias(ctx, &aimemoryv1.GetEntityByAliasRequest{Alias: alias, Namespace: "proj/alpha"})
		if err != nil || e.Entity == nil || e.Entity.CanonicalName != "bbolt" || len(e.Entity.Aliases) != 3 {
			t.Errorf("alias %q = %v, %v", alias, e, err)
		}
	}
	if st, _ := s.Stats(ctx); st.Total != 6 || st.Links != 2 { // five memories and the entity
		t.Errorf("stats = %v", st)
	}
	// The chain verifies and goes on. (This data dir holds no audit
	// records, whatever its README says: the session's expansion was of a
	// family its profile had loaded already.)
	v, err := records.New(s).VerifyAudit(ctx, audit.Head{})
	if err != nil || !v.Ok {
		t.Errorf("audit chain = %v, %v", v, err)
	}
	if _, err := records.New(s).AppendAudit(ctx, &aimemoryv1.AuditRecord{AgentId: "ai:upgrade", Event: "capability_expansion", Family: "graph", Granted: true}); err != nil {
		t.Fatal(err)
	}
	if v2, err := records.New(s).VerifyAudit(ctx, audit.Head{}); err != nil || !v2.Ok || v2.Count != v.Count+1 {
		t.Errorf("audit chain after an append = %v, %v", v2, err)
	}
	// Searching the migrated index still finds by stemmed words.
	r, err := s.SearchMemories(ctx, &aimemoryv1.SearchMemoriesRequest{Query: "deploys friday", Limit: 5}, nil)
	if err != nil || len(r.Results) != 1 || r.Results[0].Memory.Id != ids[2] {
		t.Errorf("search after migration = %v, %v", r, err)
	}
	checkConsistent(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if v := schemaOf(t, path); v != SchemaVersion {
		t.Errorf("schema after open = %d, want %d", v, SchemaVersion)
	}

	// Opening again migrates nothing and reads the same.
	s2, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	again, err := records.New(s2).GetMemories(ctx, &aimemoryv1.GetMemoriesRequest{Ids: ids})
	if err != nil || len(again.Memories) != 5 || again.Memories[0].CreatedBy != "ai:claude-code" {
		t.Errorf("second open = %v, %v", again, err)
	}
}

// TestMigrateAuthorsCoversArchive: schema 1→2 stamps archived memories
// too, and leaves a memory without metadata.agent_id unattributed.
func TestMigrateAuthorsCoversArchive(t *testing.T) {
	ctx := storagetest.Operator()
	s, clk := openTest(t, Options{})
	// Written without a principal, as schema 1 wrote everything.
	unnamed := caller.NewContext(context.Background(), caller.Caller{Scope: caller.AllNamespaces})
	store := func(m *aimemoryv1.Memory) *aimemoryv1.Memory {
		resp, err := records.New(s).StoreMemory(unnamed, &aimemoryv1.StoreMemoryRequest{Memory: m})
		if err != nil {
			t.Fatal(err)
		}
		return resp.Memory
	}
	gone := store(storagetest.Mem("Short", "x", storagetest.Tier("short"), func(m *aimemoryv1.Memory) { m.MetadataJson = []byte(`{"agent_id":"ai:old"}`) }))
	kept := store(storagetest.Mem("Kept", "x", func(m *aimemoryv1.Memory) { m.MetadataJson = []byte(`{"agent_id":"ai:keeper"}`) }))
	anon := store(storagetest.Mem("Anonymous", "x"))
	clk.Add(7 * time.Hour)
	if _, err := records.New(s).CollectGarbage(ctx, &aimemoryv1.CollectGarbageRequest{Archive: true}); err != nil {
		t.Fatal(err)
	}
	if err := s.db.Update(func(tx *bolt.Tx) error {
		if err := layoutV4(tx); err != nil {
			return err
		}
		return tx.Bucket(bucketMeta).Put(keySchemaVersion, binary.BigEndian.AppendUint32(nil, 1))
	}); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s, Options{})
	if m := get(t, s, kept.Id); m.CreatedBy != "ai:keeper" || m.UpdatedBy != "" {
		t.Errorf("kept = %v", m)
	}
	if m := get(t, s, anon.Id); m.CreatedBy != "" {
		t.Errorf("a memory without metadata.agent_id got created_by %q", m.CreatedBy)
	}
	if a, err := records.New(s).Archived(ctx, gone.Id); err != nil || a.Memory.CreatedBy != "ai:old" {
		t.Errorf("archived = %v, %v", a, err)
	}
	checkConsistent(t, s)
}

func get(t testing.TB, s *Store, id string) *aimemoryv1.Memory {
	t.Helper()
	resp, err := records.New(s).GetMemories(storagetest.Operator(), &aimemoryv1.GetMemoriesRequest{Ids: []string{id}})
	if err != nil || len(resp.Memories) != 1 {
		t.Fatalf("get %s = %v, %v", id, resp, err)
	}
	return resp.Memories[0]
}

// layoutV4 turns the live rows back into schema 4's (before 5 and
// earlier): the bare Memory in memories, its term list in terms.
func layoutV4(tx *bolt.Tx) error {
	terms, err := tx.CreateBucket(bucketTermsV4)
	if err != nil {
		return err
	}
	mems := tx.Bucket(bucketMemories)
	type kv struct{ k, list, rec []byte }
	var rows []kv
	if err := mems.ForEach(func(k, v []byte) error {
		list, rec, err := splitLive(v)
		rows = append(rows, kv{bytes.Clone(k), bytes.Clone(list), bytes.Clone(rec)})
		return err
	}); err != nil {
		return err
	}
	for _, r := range rows {
		if err := mems.Put(r.k, r.rec); err != nil {
			return err
		}
		if err := terms.Put(r.k, r.list); err != nil {
			return err
		}
	}
	return nil
}

// TestUpgradeFromSchema4 opens a copy of a file schema 4 wrote
// (testdata/schema4, its README says what is in it, with an index log
// left as by a kill -9): the term lists move into the rows, the terms
// bucket goes, and every memory, the archive, the link and search read
// back as they were.
func TestUpgradeFromSchema4(t *testing.T) {
	ctx := storagetest.Operator()
	raw, err := os.ReadFile("testdata/schema4/memory.db")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "memory.db")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if v := schemaOf(t, path); v != 4 {
		t.Fatalf("test data has schema %d, want 4", v)
	}
	if db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true}); err != nil {
		t.Fatal(err)
	} else {
		db.View(func(tx *bolt.Tx) error {
			if n, l := tx.Bucket(bucketTermsV4).Stats().KeyN, tx.Bucket(bucketIndexLog).Stats().KeyN; n != 4 || l != 3 {
				t.Errorf("test data has %d term lists and %d log entries, want 4 and 3", n, l)
			}
			return nil
		})
		db.Close()
	}
	const (
		a = "7aab27f1-18a4-41fe-975b-278f815814d9"
		b = "255bfa86-7ef1-4ad3-8faf-9048f4b72cdc"
		d = "b5bcc51c-6177-4fcc-9c57-c50fc23cc36e"
		e = "beed363f-f8ff-4383-9d79-5db267c6f1cb"
		f = "c2e43561-57f2-4017-9abc-afc3250f91d5"
	)
	clk := storagetest.NewClock() // the time the file was written at
	s, err := Open(ctx, path, Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	got, err := records.New(s).GetMemories(ctx, &aimemoryv1.GetMemoriesRequest{Ids: []string{a, b, d, f, e}, IncludeLinks: true})
	if err != nil || len(got.Memories) != 4 || !slices.Equal(got.NotFound, []string{e}) {
		t.Fatalf("get = %v, %v", got, err)
	}
	if m := got.Memories[1]; m.Title != "Rollback plan" || m.Namespace != "team/x" || m.Content != "Revert the release tag and redeploy the previous build" {
		t.Errorf("updated memory = %v", m)
	}
	if len(got.Links) != 1 || got.Links[0].SourceId != a || got.Links[0].TargetId != b {
		t.Errorf("links = %v", got.Links)
	}
	if ar, err := records.New(s).Archived(ctx, e); err != nil || ar.Memory.Title != "Old decision" {
		t.Errorf("archived = %v, %v", ar, err)
	}
	for q, want := range map[string][]string{
		"redeploy":       {b},
		"keyword memory": {f},
		"migrations":     {a},
		"hour":           {d},
		"sqlite":         nil,
	} {
		r, err := s.SearchMemories(ctx, &aimemoryv1.SearchMemoriesRequest{Query: q, Limit: 5}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, h := range r.Results {
			ids = append(ids, h.Memory.Id)
		}
		if !slices.Equal(ids, want) {
			t.Errorf("search %q = %v, want %v", q, ids, want)
		}
	}
	checkConsistent(t, s)
	if err := s.db.View(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketTermsV4) != nil {
			t.Error("the terms bucket is still there")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if v := schemaOf(t, path); v != SchemaVersion {
		t.Errorf("schema after open = %d, want %d", v, SchemaVersion)
	}
	s2, err := Open(ctx, path, Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if s2.rebuilt {
		t.Error("the second open rebuilt the index")
	}
	checkConsistent(t, s2)
}

// TestUpgradeFromSchema4Answers: at a few thousand memories (more than
// one of the migration's chunks), a schema 4 layout of a store answers
// searches exactly as the store did, and updates and deletes after the
// upgrade find the term lists the migration moved.
func TestUpgradeFromSchema4Answers(t *testing.T) {
	ctx := storagetest.Operator()
	s, _ := openTest(t, Options{})
	c := newCorpus(3)
	bulkLoad(t, s, c, 3000)
	qs := newCorpus(99).queries(50)
	answers := func(s *Store) [][]string {
		var out [][]string
		for _, q := range qs {
			r, err := s.SearchMemories(ctx, &aimemoryv1.SearchMemoriesRequest{Query: q, Limit: 10, Match: aimemoryv1.MatchMode_MATCH_MODE_ANY}, nil)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, h := range r.Results {
				ids = append(ids, h.Memory.Id)
			}
			out = append(out, ids)
		}
		return out
	}
	before := answers(s)
	if err := s.db.Update(func(tx *bolt.Tx) error {
		if err := layoutV4(tx); err != nil {
			return err
		}
		return tx.Bucket(bucketMeta).Put(keySchemaVersion, binary.BigEndian.AppendUint32(nil, 4))
	}); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s, Options{})
	if !s.rebuilt {
		t.Error("the index was not rebuilt after the upgrade")
	}
	if after := answers(s); !slices.EqualFunc(before, after, slices.Equal) {
		t.Error("searches answer differently after the upgrade")
	}
	ids := s.idx.IDs()
	slices.Sort(ids)
	if _, err := records.New(s).UpdateMemory(ctx, &aimemoryv1.UpdateMemoryRequest{Id: ids[0], Content: new(string("zebra crossing"))}); err != nil {
		t.Fatal(err)
	}
	if _, err := records.New(s).DeleteMemories(ctx, &aimemoryv1.DeleteMemoriesRequest{Ids: ids[1:3]}); err != nil {
		t.Fatal(err)
	}
	checkConsistent(t, s)
}

// TestUpgradeFromSchema5: float32 vectors (schema 5) are rewritten 8-bit
// at open; they rank as before and the store stays consistent.
func TestUpgradeFromSchema5(t *testing.T) {
	ctx := storagetest.Operator() // reads fail closed without a principal
	s, _ := openTest(t, Options{})
	vecs := map[string][]float32{"near": {0.9, 0.1, 0, 0}, "far": {0, 0.2, 1, 0}}
	ids := storagetest.StoreWithVectors(t, records.New(s), vecs)
	// Back to schema 5: each vector as its float32 value.
	if err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketVectors)
		for title, id := range ids {
			e, err := vecset.Decode(b.Get([]byte(id)))
			if err != nil {
				return err
			}
			v5 := binary.AppendUvarint(nil, uint64(len(e.Model)))
			v5 = append(v5, e.Model...)
			v5 = binary.BigEndian.AppendUint64(v5, e.Hash)
			v5 = binary.AppendUvarint(v5, uint64(len(vecs[title])))
			for _, x := range vecset.Normalize(vecs[title]) {
				v5 = binary.LittleEndian.AppendUint32(v5, math.Float32bits(x))
			}
			if err := b.Put([]byte(id), v5); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketMeta).Put(keySchemaVersion, binary.BigEndian.AppendUint32(nil, 5))
	}); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s, Options{})
	res, err := s.Nearest(ctx, &aimemoryv1.Filter{}, []float32{1, 0, 0, 0}, "m", 2)
	if err != nil || len(res) != 2 || res[0].Memory.Id != ids["near"] || math.Abs(res[0].Score-0.9939) > 0.01 {
		t.Fatalf("nearest after the upgrade: %v %v", res, err)
	}
	checkConsistent(t, s)
	if err := s.db.View(func(tx *bolt.Tx) error {
		if v := binary.BigEndian.Uint32(tx.Bucket(bucketMeta).Get(keySchemaVersion)); v != SchemaVersion {
			t.Errorf("schema after open = %d, want %d", v, SchemaVersion)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

package boltstore

import (
	"bytes"
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/ai-memory/ai-memory/internal/engine/index"
	"github.com/ai-memory/ai-memory/internal/engine/keyword"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// SchemaVersion is the layout this build reads and writes. Bump it with a
// migration in migration whenever a bucket's keys or values change meaning.
//
//	1  release 5d21ae6 and before
//	2  Memory.created_by / updated_by, stamped by the engine from the caller
//	3  index_snapshot and index_log (snapshot.go): every write logs there,
//	   so a build that does not must not write the file
//	4  archived_links_out/in and versions (op_archive.go): an archived
//	   memory's links move there; vectors (vectors.go): embeddings beside
//	   the records, removed with them; events_log (events_log.go) and the
//	   webhook buckets (subscriptions.go): every commit logs its events. A
//	   build that knows none of them must not write the file
//	5  a memory's term list in its row of memories (codec.go, encodeLive)
//	   instead of a terms bucket: one value per write, not two
//	6  vectors 8-bit (vecset.Entry.Encode) instead of float32
const SchemaVersion = 6

// Buckets. Keys and values are described in codec.go.
var (
	bucketMeta     = []byte("meta")      // "schema_version" → uint32
	bucketMemories = []byte("memories")  // id → term list and Memory (encodeLive)
	bucketTitles   = []byte("titles")    // namespace NUL title → id
	bucketExpiry   = []byte("expiry")    // expires_at(8, big-endian) id → ""
	bucketLinksOut = []byte("links_out") // source NUL target NUL relation → Link
	bucketLinksIn  = []byte("links_in")  // target NUL source NUL relation → ""
	bucketArchive  = []byte("archive")   // id → archived memory
	// The archive's links and superseded versions (op_archive.go).
	bucketArchivedLinksOut = []byte("archived_links_out") // as links_out, for links with an archived end
	bucketArchivedLinksIn  = []byte("archived_links_in")  // as links_in
	bucketVersions         = []byte("versions")           // id NUL archived_at(8, big-endian) → archived memory

	// Entities (graph_entities.go).
	bucketAliases       = []byte("aliases")        // fold(alias) NUL namespace → entity id
	bucketEntityAliases = []byte("entity_aliases") // entity id NUL fold(alias) → alias row

	// Durable events and webhooks (events_log.go, subscriptions.go).
	bucketEventsLog    = []byte("events_log")    // seq(8, big-endian) → Event
	bucketSubs         = []byte("webhook_subs")  // subscription id → storage.Subscription (JSON)
	bucketWebhookQueue = []byte("webhook_queue") // subscription id NUL next_at(8) seq(8) → Delivery (JSON)
	bucketWebhookDead  = []byte("webhook_dead")  // subscription id NUL seq(8) → DeadLetter
)

var allBuckets = [][]byte{
	bucketMeta, bucketMemories, bucketTitles,
	bucketExpiry, bucketLinksOut, bucketLinksIn, bucketArchive,
	bucketAliases, bucketEntityAliases,
	bucketIndexSnapshot, bucketIndexLog,
	bucketArchivedLinksOut, bucketArchivedLinksIn, bucketVersions,
	bucketStandards, bucketPending, bucketPendingTime,
	bucketVectors,
	bucketEventsLog, bucketSubs, bucketWebhookQueue, bucketWebhookDead,
}

var keySchemaVersion = []byte("schema_version")

// migration upgrades a database from schema from to from+1; nil if none.
func migration(from uint32) func(*bolt.Tx) error {
	switch from {
	case 1:
		return migrateAuthors
	case 2, 3:
		return func(*bolt.Tx) error { return nil } // the new buckets exist already
	case 4:
		return migrateTermsIntoRows
	case 5:
		return migrateVectorsTo8Bit
	}
	return nil
}

// migrateVectorsTo8Bit (5→6) rewrites every vector 8-bit.
func migrateVectorsTo8Bit(tx *bolt.Tx) error {
	return rewrite(tx.Bucket(bucketVectors), func(raw []byte) ([]byte, error) {
		e, err := decodeVectorV5(raw)
		if err != nil {
			return nil, err
		}
		return e.Encode(), nil
	})
}

// bucketTermsV4 is schema 4's id → term list bucket, read and dropped by
// migrateTermsIntoRows.
var bucketTermsV4 = []byte("terms")

// migrateTermsIntoRows (4→5) moves each memory's term list from the terms
// bucket into its row (encodeLive) and drops the bucket. A memory without
// a list (none should lack one) gets it from its text. The index is
// rebuilt from the rows at open (migrate drops the snapshot).
func migrateTermsIntoRows(tx *bolt.Tx) error {
	terms := tx.Bucket(bucketTermsV4)
	var an *keyword.Analyzer
	mems := tx.Bucket(bucketMemories)
	// bbolt forbids writes during a walk: rewrite in chunks, seeking back.
	const chunk = 1024
	type kv struct{ k, v []byte }
	var next []byte
	for first := true; first || next != nil; first = false {
		var rows []kv
		c := mems.Cursor()
		k, v := c.First()
		if next != nil {
			k, v = c.Seek(next)
		}
		next = nil
		for ; k != nil; k, v = c.Next() {
			if len(rows) == chunk {
				next = bytes.Clone(k)
				break
			}
			var list []byte
			if terms != nil {
				list = terms.Get(k)
			}
			if list == nil {
				m, err := decodeMemory(v)
				if err != nil {
					return fmt.Errorf("record %s: %w", k, err)
				}
				if an == nil {
					an = keyword.NewAnalyzer(0)
				}
				tf, _ := an.Document(m.GetTitle(), m.GetContent(), m.GetTags())
				list = encodeTerms(tf)
			}
			rows = append(rows, kv{bytes.Clone(k), append(liveHead(list, len(v)), v...)})
		}
		for _, r := range rows {
			if err := mems.Put(r.k, r.v); err != nil {
				return err
			}
		}
	}
	if terms != nil {
		return tx.DeleteBucket(bucketTermsV4)
	}
	return nil
}

// migrateAuthors (1→2) gives every memory, live or archived, created_by
// from its metadata.agent_id: the author as the release before recorded
// it (claimed, but the best there is). updated_by stays "" (unknown).
// Nothing else changes, so the term lists and indexes stay valid.
func migrateAuthors(tx *bolt.Tx) error {
	if err := rewrite(tx.Bucket(bucketMemories), func(raw []byte) ([]byte, error) {
		m, err := decodeMemory(raw)
		if err != nil || !stampCreatedBy(m) {
			return nil, err
		}
		return encodeMemory(m)
	}); err != nil {
		return err
	}
	return rewrite(tx.Bucket(bucketArchive), func(raw []byte) ([]byte, error) {
		a, err := decodeArchived(raw)
		if err != nil || !stampCreatedBy(a.Memory) {
			return nil, err
		}
		return encodeArchived(a)
	})
}

// stampCreatedBy sets an unstamped memory's created_by from metadata.agent_id.
func stampCreatedBy(m *aimemoryv1.Memory) bool {
	agent, _ := index.MetadataAgentScope(m.GetMetadataJson())
	if m.CreatedBy != "" || agent == "" {
		return false
	}
	m.CreatedBy = agent
	return true
}

// rewrite replaces each value of b by fn's answer (nil = keep). bbolt
// forbids writes during ForEach, so the changes are collected first.
func rewrite(b *bolt.Bucket, fn func(raw []byte) ([]byte, error)) error {
	type kv struct{ k, v []byte }
	var changed []kv
	if err := b.ForEach(func(k, v []byte) error {
		nv, err := fn(v)
		if err != nil {
			return fmt.Errorf("record %s: %w", k, err)
		}
		if nv != nil {
			changed = append(changed, kv{bytes.Clone(k), nv})
		}
		return nil
	}); err != nil {
		return err
	}
	for _, c := range changed {
		if err := b.Put(c.k, c.v); err != nil {
			return err
		}
	}
	return nil
}

// migrate creates missing buckets, stamps a new file with SchemaVersion and
// brings an older file up to it.
func migrate(tx *bolt.Tx) error {
	meta, err := tx.CreateBucketIfNotExists(bucketMeta)
	if err != nil {
		return err
	}
	version := uint32(SchemaVersion)
	if raw := meta.Get(keySchemaVersion); raw != nil {
		if len(raw) != 4 {
			return fmt.Errorf("corrupt schema version %x", raw)
		}
		version = binary.BigEndian.Uint32(raw)
	}
	if version > SchemaVersion {
		return &storage.SchemaTooNewError{Found: version, Known: SchemaVersion}
	}
	for _, b := range allBuckets {
		if _, err := tx.CreateBucketIfNotExists(b); err != nil {
			return err
		}
	}
	if version < SchemaVersion {
		// A migration may change what the index holds: rebuild it.
		if err := dropSnapshot(tx); err != nil {
			return err
		}
	}
	for ; version < SchemaVersion; version++ {
		step := migration(version)
		if step == nil {
			return fmt.Errorf("no migration from schema version %d", version)
		}
		if err := step(tx); err != nil {
			return fmt.Errorf("migrate schema %d→%d: %w", version, version+1, err)
		}
	}
	return meta.Put(keySchemaVersion, binary.BigEndian.AppendUint32(nil, version))
}

// dropSnapshot deletes the index snapshot and its log.
func dropSnapshot(tx *bolt.Tx) error {
	if err := tx.Bucket(bucketMeta).Delete(keySnapshotSeq); err != nil {
		return err
	}
	for _, name := range [][]byte{bucketIndexSnapshot, bucketIndexLog} {
		if err := tx.DeleteBucket(name); err != nil {
			return err
		}
		if _, err := tx.CreateBucket(name); err != nil {
			return err
		}
	}
	return nil
}

package boltstore

import (
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
)

// SchemaVersion is the layout this build reads and writes. Bump it with a
// migration in migrations whenever a bucket's keys or values change meaning.
const SchemaVersion = 1

// Buckets. Keys and values are described in codec.go.
var (
	bucketMeta     = []byte("meta")      // "schema_version" → uint32
	bucketMemories = []byte("memories")  // id → Memory
	bucketTitles   = []byte("titles")    // namespace NUL title → id
	bucketTerms    = []byte("terms")     // id → the memory's term list
	bucketExpiry   = []byte("expiry")    // expires_at(8, big-endian) id → ""
	bucketLinksOut = []byte("links_out") // source NUL target NUL relation → Link
	bucketLinksIn  = []byte("links_in")  // target NUL source NUL relation → ""
	bucketArchive  = []byte("archive")   // id → archived memory

	// Entities (graph_entities.go).
	bucketAliases       = []byte("aliases")        // fold(alias) NUL namespace → entity id
	bucketEntityAliases = []byte("entity_aliases") // entity id NUL fold(alias) → alias row
)

var allBuckets = [][]byte{
	bucketMeta, bucketMemories, bucketTitles, bucketTerms,
	bucketExpiry, bucketLinksOut, bucketLinksIn, bucketArchive,
	bucketAliases, bucketEntityAliases,
}

var keySchemaVersion = []byte("schema_version")

// migration upgrades a database from schema from to from+1; nil if none.
// Schema 1 is the first: there is nothing to migrate yet.
func migration(from uint32) func(*bolt.Tx) error {
	switch from {
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

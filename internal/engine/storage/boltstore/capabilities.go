package boltstore

import "github.com/ai-memory/ai-memory/internal/engine/storage"

var _ storage.Capabilities = (*Store)(nil)

// Capabilities are the embedded backend's flags (the reference the
// PostgreSQL backend's differences are named against).
func (s *Store) Capabilities() []storage.Capability {
	return []storage.Capability{
		{Name: "single_process", On: true, Detail: "one engine owns the bbolt file; the engine runs every background task itself"},
		{Name: "shared_database", On: false, Detail: "one data dir, one machine"},
		{Name: "vector_index_pgvector", On: false, Detail: "vectors are searched exactly, in the engine"},
	}
}

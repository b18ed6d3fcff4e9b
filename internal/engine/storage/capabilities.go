package storage

// Capability is one named backend difference (issue 16: every difference
// between backends sits behind a flag that doctor reports).
type Capability struct {
	Name   string // e.g. "vector_index_pgvector"
	On     bool
	Detail string // why, or what it means here
}

// Capabilities is implemented by a backend that reports its flags.
type Capabilities interface {
	Capabilities() []Capability
}

// Package storage is the engine's storage seam: the interfaces a backend
// implements (one per engine service: Memories, Graph, Audit, together
// Backend), the errors every backend returns, the write policy it asks,
// and the options it opens with. The engine's gRPC layer (package server)
// depends only on this package; packages boltstore and pgstore are the
// backends, and package storagetest is the conformance suite both pass.
package storage

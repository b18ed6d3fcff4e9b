// Package storage is the engine's storage seam: the interfaces a backend
// implements (one per engine service: Memories, Graph, Audit, together
// Backend), the errors every backend returns, the write policy it asks,
// and the options it opens with. The engine's gRPC layer (package server)
// depends only on this package; package boltstore is today's backend, and
// package storagetest is the conformance suite any backend must pass.
package storage

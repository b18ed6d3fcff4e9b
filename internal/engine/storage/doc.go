// Package storage is the engine's storage contract: the interfaces its
// services use (one per service: Memories, Graph, Audit, ..., together
// Backend), the errors every backend returns, the write policy it asks,
// and the options it opens with. The engine's gRPC layer (package server)
// depends only on this package. Package records implements Backend once
// over a backend's seam (package seam); packages boltstore and pgstore
// are the backends, and package storagetest is the conformance suite the
// engine passes over each.
package storage

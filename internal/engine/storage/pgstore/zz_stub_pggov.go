package pgstore

// TEMPORARY stubs of names other helpers provide (PG_CONTRACT.md), so
// pending actions of every kind compile here; deleted at merge.

import (
	"errors"

	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

var errStubPggov = errors.New("stub")

// pggraph's.
func (w *writeTx) putLink(req *aimemoryv1.PutLinkRequest, rel, observedBy string, resp *aimemoryv1.PutLinkResponse) error {
	return errStubPggov
}
func (w *writeTx) invalidateLink(req *aimemoryv1.InvalidateLinkRequest, by string, resp *aimemoryv1.InvalidateLinkResponse) error {
	return errStubPggov
}

package pgstore

// TEMPORARY stubs of names other helpers provide (PG_CONTRACT.md), so
// transfer.go builds; deleted at merge. Each exports nothing and refuses
// every record of its kind.

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

var errStub = errors.New("stub")

func init() {
	StubbedKinds = []string{"subscription"}
}

// pgevents.
func exportSubscriptions(ctx context.Context, q pgx.Tx, each func(*aimemoryv1.ExportRecord) error) error {
	return nil
}
func (w *writeTx) importSubscription(s *aimemoryv1.WebhookSubscription) (string, error) {
	return "", refusal{errStub}
}

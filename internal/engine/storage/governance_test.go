package storage

import (
	"context"
	"errors"
	"testing"

	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/engine/governance"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// failingView is a governance view whose store cannot be read.
type failingView struct{ err error }

func (v failingView) Standard(string) (*aimemoryv1.Standard, error) { return nil, v.err }
func (v failingView) Registered(string) (bool, error)               { return false, v.err }
func (v failingView) RegisteredOthers(string) (int, error)          { return 0, v.err }
func (v failingView) Governance() *governance.Config                { return nil }

// A read the governance check needs that fails is that error, kept in the
// chain (so a backend can say its store is unreachable), never a denial.
func TestGovernanceReadFailureIsNotADenial(t *testing.T) {
	gone := errors.New("the database system is shutting down")
	ctx := caller.NewContext(context.Background(), caller.Caller{Principal: "ai:a", Scope: caller.AllNamespaces})
	err := Authorize(ctx, nil, Write{Op: OpStore, New: &aimemoryv1.Memory{Namespace: "proj"}, View: failingView{gone}})
	if !errors.Is(err, gone) || errors.Is(err, ErrDenied) {
		t.Fatalf("Authorize = %v; want the read error, not a denial", err)
	}
}

package ops

import (
	"errors"
	"fmt"
	"slices"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// ImportRefusal is an import record refused, with the reason: nothing of
// it is written, and the rest of the import goes on.
type ImportRefusal struct{ error }

// Refuse is err as a refusal.
func Refuse(err error) ImportRefusal { return ImportRefusal{err} }

// Refusef is a refusal with a formatted reason.
func Refusef(format string, a ...any) ImportRefusal { return ImportRefusal{fmt.Errorf(format, a...)} }

func (r ImportRefusal) Unwrap() error { return r.error }

// IsRefusal: err turns one import record down (an ImportRefusal anywhere
// in its chain) rather than aborting the batch.
func IsRefusal(err error) bool {
	var r ImportRefusal
	return errors.As(err, &r)
}

// ImportedSubscription checks an exported subscription and returns it as
// stored, without FromSeq (the backend sets it past the import's own
// events) and with no delivery history. Refusals are ImportRefusal.
func ImportedSubscription(in *aimemoryv1.WebhookSubscription) (*storage.Subscription, error) {
	if err := record.ValidateID("id", in.GetId()); err != nil {
		return nil, ImportRefusal{err}
	}
	if in.GetUrl() == "" || len(in.GetEvents()) == 0 {
		return nil, ImportRefusal{fmt.Errorf("subscription %s: url and events must be set", in.GetId())}
	}
	if err := record.ValidateAgentID("created_by", in.GetCreatedBy()); err != nil {
		return nil, ImportRefusal{err}
	}
	return SubscriptionOf(in), nil
}

// SubscriptionOf is the subscription an export record's stands for.
func SubscriptionOf(in *aimemoryv1.WebhookSubscription) *storage.Subscription {
	return &storage.Subscription{ID: in.GetId(), URL: in.GetUrl(), Events: in.GetEvents(), NamespaceFilter: in.GetNamespaceFilter(),
		AgentFilter: in.GetAgentFilter(), IncludeContent: in.GetIncludeContent(), SealedSecret: in.GetSealedSecret(),
		CreatedBy: in.GetCreatedBy(), CreatedAt: in.GetCreatedAt(), Family: in.GetFamily(), Scope: in.GetScope()}
}

// ImportOverExisting is the outcome of importing sub where old has its id:
// "unchanged" when they have the same target and filters, whatever the
// sealed bytes (each sealing draws a fresh nonce); else a refusal, since
// import does not overwrite.
func ImportOverExisting(old, sub *storage.Subscription) (string, error) {
	if old.URL == sub.URL && slices.Equal(old.Events, sub.Events) && old.NamespaceFilter == sub.NamespaceFilter &&
		old.AgentFilter == sub.AgentFilter && old.IncludeContent == sub.IncludeContent && old.CreatedBy == sub.CreatedBy &&
		old.CreatedAt == sub.CreatedAt && (len(old.SealedSecret) > 0) == (len(sub.SealedSecret) > 0) {
		return "unchanged", nil
	}
	return "", ImportRefusal{fmt.Errorf("subscription %s exists with another target or filters; import does not overwrite", sub.ID)}
}

// ExportedSubscription is sub as an export record.
func ExportedSubscription(sub *storage.Subscription) *aimemoryv1.ExportRecord {
	return &aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_Subscription{Subscription: &aimemoryv1.WebhookSubscription{
		Id: sub.ID, Url: sub.URL, Events: sub.Events, NamespaceFilter: sub.NamespaceFilter, AgentFilter: sub.AgentFilter,
		IncludeContent: sub.IncludeContent, SealedSecret: sub.SealedSecret, CreatedBy: sub.CreatedBy, CreatedAt: sub.CreatedAt,
		Family: sub.Family, Scope: sub.Scope}}}
}

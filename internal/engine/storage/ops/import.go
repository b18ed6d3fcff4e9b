package ops

import aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"

// The kinds of exported records, in the order Export sends them and
// Import needs them (a link after its memories).
const (
	KindMemory       = "memory"
	KindArchived     = "archived"
	KindVersion      = "version"
	KindLink         = "link"
	KindArchivedLink = "archived_link"
	KindEntity       = "entity"
	KindStandard     = "standard"
	KindPending      = "pending"
	KindSubscription = "subscription"
)

// ExportKinds are the kinds in export order. Subscriptions come last:
// imported after every memory, they are sent none of the import's writes.
var ExportKinds = []string{KindMemory, KindArchived, KindVersion, KindLink, KindArchivedLink, KindEntity, KindStandard, KindPending, KindSubscription}

// Importer is what an import run (package records) writes each kind of
// exported record with. Each answers its outcome ("created", "unchanged")
// or an ImportRefusal; any other error aborts the batch.
type Importer interface {
	ImportMemory(*aimemoryv1.Memory) (string, error)
	ImportLink(*aimemoryv1.Link) (string, error)
	ImportEntity(*aimemoryv1.EntityAliases) (string, error)
	ImportArchived(*aimemoryv1.ArchivedMemory) (string, error)
	ImportArchivedLink(*aimemoryv1.Link) (string, error)
	ImportVersion(*aimemoryv1.SupersededVersion) (string, error)
	ImportStandard(*aimemoryv1.Standard) (string, error)
	ImportPending(*aimemoryv1.PendingAction) (string, error)
	ImportSubscription(*aimemoryv1.WebhookSubscription) (string, error)
}

// ImportRecord writes r with x by its kind.
func ImportRecord(x Importer, r *aimemoryv1.ExportRecord) (string, error) {
	switch k := r.GetRecord().(type) {
	case *aimemoryv1.ExportRecord_Memory:
		return x.ImportMemory(k.Memory)
	case *aimemoryv1.ExportRecord_Link:
		return x.ImportLink(k.Link)
	case *aimemoryv1.ExportRecord_Entity:
		return x.ImportEntity(k.Entity)
	case *aimemoryv1.ExportRecord_Archived:
		return x.ImportArchived(k.Archived)
	case *aimemoryv1.ExportRecord_ArchivedLink:
		return x.ImportArchivedLink(k.ArchivedLink)
	case *aimemoryv1.ExportRecord_Version:
		return x.ImportVersion(k.Version)
	case *aimemoryv1.ExportRecord_Standard:
		return x.ImportStandard(k.Standard)
	case *aimemoryv1.ExportRecord_Pending:
		return x.ImportPending(k.Pending)
	case *aimemoryv1.ExportRecord_Subscription:
		return x.ImportSubscription(k.Subscription)
	}
	return "", Refusef("empty record")
}

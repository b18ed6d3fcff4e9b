package storage

// The event types: what the event log, watch streams and webhooks call
// each change to memory. They are the engine's own vocabulary, fixed
// whatever tools the families declare (a subscription filters on them);
// several share the name of the tool that usually asks for the change,
// which is why they are declared here once (the host's no-tool-name check
// knows this file).
const (
	EventStore             = "memory_store"
	EventUpdate            = "memory_update"
	EventDelete            = "memory_delete"
	EventGC                = "memory_gc"
	EventPromote           = "memory_promote"
	EventForget            = "memory_forget"
	EventRestore           = "memory_restore"
	EventTouch             = "memory_touch"
	EventImport            = "memory_import"
	EventConsolidated      = "memory_consolidated"
	EventLinkCreated       = "memory_link_created"
	EventLinkInvalidated   = "memory_link_invalidated"
	EventApprovalRequested = "approval_requested"
)

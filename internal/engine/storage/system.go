package storage

import "context"

type systemKey struct{}

// AsSystem returns ctx for the engine's own housekeeping (the scheduled
// archive purge): it reads every namespace, inboxes included. Only engine
// code sets it; no request can.
func AsSystem(ctx context.Context) context.Context {
	return context.WithValue(ctx, systemKey{}, true)
}

// IsSystem reports whether ctx is the engine's own (AsSystem).
func IsSystem(ctx context.Context) bool {
	v, _ := ctx.Value(systemKey{}).(bool)
	return v
}

// ArchiveReasons are the reasons a row can carry, for filters.
var ArchiveReasons = []string{ArchiveReasonTTL, ArchiveReasonForget, ArchiveReasonDelete, ArchiveReasonSuperseded}

// ReadableArchive reports whether ctx may see archive rows of ns: as
// Readable, and everything for the engine itself (AsSystem).
func ReadableArchive(ctx context.Context, ns string) bool {
	return IsSystem(ctx) || Readable(ctx, ns)
}

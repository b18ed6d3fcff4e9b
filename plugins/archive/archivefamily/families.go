// Package archivefamily is the archive tool family: memory_archive_list,
// memory_archive_restore, memory_archive_purge and memory_archive_stats
// (spec/family-archive.md with issue 10's fixes). It holds no data: the
// archive is the engine's, reached through the Engine API with the
// caller's identity.
package archivefamily

import (
	"time"

	"github.com/ai-memory/ai-memory/sdk"
	"github.com/ai-memory/ai-memory/sdk/wire"
)

// service is what the handlers share.
type service struct {
	eng wire.Engine
	now func() time.Time // purge's older_than_days counts back from it
}

// Families returns the families this plugin serves.
func Families(eng wire.Engine) []sdk.Family {
	s := &service{eng: eng, now: time.Now}
	return []sdk.Family{{Name: "archive", Tools: []sdk.Tool{
		{Name: "memory_archive_list", Description: listDesc, Schema: sdk.Schema(listSchema), Hints: sdk.ReadOnly, Handler: s.list},
		{Name: "memory_archive_restore", Description: restoreDesc, Schema: sdk.Schema(restoreSchema), Hints: sdk.Hints{Destructive: sdk.Bool(false)}, Handler: s.restore},
		{Name: "memory_archive_purge", Description: purgeDesc, Schema: sdk.Schema(purgeSchema), Handler: s.purge},
		{Name: "memory_archive_stats", Description: statsDesc, Schema: sdk.Schema(statsSchema), Hints: sdk.ReadOnly, Handler: s.stats},
	}}}
}

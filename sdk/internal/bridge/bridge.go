// Package bridge hands sdktest what package sdk builds from an author's
// declarations (the Family server, an Engine over a test connection)
// without package sdk exporting protocol types. Package sdk fills it in.
package bridge

import (
	"github.com/ai-memory/ai-memory/sdk/wire"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

var (
	// Server builds the Family server of families ([]sdk.Family).
	Server func(name, version string, families any) (aimemoryv1.FamilyServer, error)
	// Engine wraps a protocol client as an *sdk.Engine.
	Engine func(wire.Engine) any
)

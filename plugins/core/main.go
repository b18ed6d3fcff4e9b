// Command core is the plugin binary of the core and meta families. The
// ai-memory host starts it; run by hand it only explains that.
package main

import (
	"github.com/ai-memory/ai-memory/internal/proctune"
	"github.com/ai-memory/ai-memory/internal/version"
	"github.com/ai-memory/ai-memory/plugins/core/corefamily"
	"github.com/ai-memory/ai-memory/plugins/core/metafamily"
	"github.com/ai-memory/ai-memory/sdk"
)

func main() {
	proctune.Plugin("core")
	// meta is served here beside core (DESIGN: plugins/core serves core, meta).
	sdk.Main("core", version.String(), func(e *sdk.Engine) []sdk.Family {
		eng := e.Protocol()
		return append(corefamily.Families(eng), metafamily.Families(eng, metafamily.Sources{
			Standards: metafamily.EngineStandards{Eng: eng}, Inbox: metafamily.EngineInbox{Eng: eng}})...)
	})
}

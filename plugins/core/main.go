// Command core is the plugin binary of the core family. The ai-memory host
// starts it; run by hand it only explains that.
package main

import (
	"fmt"
	"os"

	"github.com/ai-memory/ai-memory/internal/version"
	"github.com/ai-memory/ai-memory/plugins/core/corefamily"
	"github.com/ai-memory/ai-memory/plugins/core/metafamily"
	"github.com/ai-memory/ai-memory/sdk"
)

func main() {
	eng, err := sdk.DialEngine() // lazy: a missing engine shows up on the first call
	if err != nil {
		fmt.Fprintln(os.Stderr, "core:", err)
		os.Exit(1)
	}
	// meta is served here beside core (DESIGN: plugins/core serves core, meta).
	families := append(corefamily.Families(eng), metafamily.Families(eng, metafamily.Sources{Standards: metafamily.EngineStandards{Eng: eng}, Inbox: metafamily.EngineInbox{Eng: eng}})...)
	sdk.Serve("core", version.String(), families...)
}

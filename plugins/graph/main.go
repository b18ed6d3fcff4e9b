// Command graph is the plugin binary of the graph family. The ai-memory
// host starts it; run by hand it only explains that.
package main

import (
	"github.com/ai-memory/ai-memory/internal/proctune"
	"github.com/ai-memory/ai-memory/internal/version"
	"github.com/ai-memory/ai-memory/plugins/graph/graphfamily"
	"github.com/ai-memory/ai-memory/sdk"
)

func main() {
	proctune.Plugin("graph")
	sdk.Main("graph", version.String(), func(e *sdk.Engine) []sdk.Family { return graphfamily.Families(e.Protocol()) })
}

// Command power is the plugin binary of the power family. The ai-memory
// host starts it; run by hand it only explains that.
package main

import (
	"github.com/ai-memory/ai-memory/internal/proctune"
	"github.com/ai-memory/ai-memory/internal/version"
	"github.com/ai-memory/ai-memory/plugins/power/powerfamily"
	"github.com/ai-memory/ai-memory/sdk"
)

func main() {
	proctune.Plugin("power")
	sdk.Main("power", version.String(), func(e *sdk.Engine) []sdk.Family { return powerfamily.Families(e.Protocol()) })
}

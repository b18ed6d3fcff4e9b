// Command admin is the plugin binary of the lifecycle, governance and other
// families. The ai-memory host starts it; run by hand it only explains that.
package main

import (
	"github.com/ai-memory/ai-memory/internal/proctune"
	"github.com/ai-memory/ai-memory/internal/version"
	"github.com/ai-memory/ai-memory/plugins/admin/adminfamily"
	"github.com/ai-memory/ai-memory/sdk"
)

func main() {
	proctune.Plugin("admin")
	sdk.Main("admin", version.String(), func(e *sdk.Engine) []sdk.Family { return adminfamily.Families(e.Protocol()) })
}

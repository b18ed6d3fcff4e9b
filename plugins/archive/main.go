// Command archive is the plugin binary of the archive family. The
// ai-memory host starts it; run by hand it only explains that.
package main

import (
	"github.com/ai-memory/ai-memory/internal/proctune"
	"github.com/ai-memory/ai-memory/internal/version"
	"github.com/ai-memory/ai-memory/plugins/archive/archivefamily"
	"github.com/ai-memory/ai-memory/sdk"
)

func main() {
	proctune.Plugin("archive")
	sdk.Main("archive", version.String(), func(e *sdk.Engine) []sdk.Family { return archivefamily.Families(e.Protocol()) })
}

// Command power is the plugin binary of the power family. The ai-memory
// host starts it; run by hand it only explains that.
package main

import (
	"fmt"
	"os"

	"github.com/ai-memory/ai-memory/internal/version"
	"github.com/ai-memory/ai-memory/plugins/power/powerfamily"
	"github.com/ai-memory/ai-memory/sdk"
)

func main() {
	eng, err := sdk.DialEngine() // lazy: a missing engine shows up on the first call
	if err != nil {
		fmt.Fprintln(os.Stderr, "power:", err)
		os.Exit(1)
	}
	sdk.Serve("power", version.String(), powerfamily.Families(eng)...)
}

// Command graph is the plugin binary of the graph family. The ai-memory
// host starts it; run by hand it only explains that.
package main

import (
	"fmt"
	"os"

	"github.com/ai-memory/ai-memory/internal/version"
	"github.com/ai-memory/ai-memory/plugins/graph/graphfamily"
	"github.com/ai-memory/ai-memory/sdk"
)

func main() {
	eng, err := sdk.DialEngine() // lazy: a missing engine shows up on the first call
	if err != nil {
		fmt.Fprintln(os.Stderr, "graph:", err)
		os.Exit(1)
	}
	sdk.Serve("graph", version.String(), graphfamily.Families(eng)...)
}

// Command ai-memory is the MCP host (and, as `ai-memory engine`, the
// storage engine it spawns).
package main

import (
	"os"

	"github.com/ai-memory/ai-memory/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:]))
}

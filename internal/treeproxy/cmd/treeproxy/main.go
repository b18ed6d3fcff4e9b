// Command treeproxy writes this checkout's modules as a module proxy
// directory at the release version (internal/version), for trying what a
// published release resolves to (docs/releasing.md):
//
//	go run ./internal/treeproxy/cmd/treeproxy DIR
//	GOWORK=off GOPROXY=file://DIR,https://proxy.golang.org GONOSUMDB=github.com/ai-memory go install github.com/ai-memory/ai-memory/cmd/ai-memory@v0.7.0
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/ai-memory/ai-memory/internal/treeproxy"
	"github.com/ai-memory/ai-memory/internal/version"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: treeproxy DIR (run from the repository root)")
		os.Exit(2)
	}
	out, err := filepath.Abs(os.Args[1])
	if err == nil {
		var mods []treeproxy.Module
		if mods, err = treeproxy.Build(".", out, "v"+version.Number); err == nil {
			for _, m := range mods {
				fmt.Printf("%s@v%s\n", m.Path, version.Number)
			}
			fmt.Printf("GOPROXY=file://%s\n", out)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "treeproxy:", err)
		os.Exit(1)
	}
}

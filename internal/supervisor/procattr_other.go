//go:build !linux

package supervisor

import "os/exec"

// dieWithParent has no kernel support here; the plugin's parent watch
// (wire.Serve) ends it once the host is gone.
func dieWithParent(*exec.Cmd) {}

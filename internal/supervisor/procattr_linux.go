package supervisor

import (
	"os/exec"
	"syscall"
)

// dieWithParent asks the kernel to kill the plugin when the host dies, even
// by SIGKILL. It follows the spawning thread; the plugin's own parent watch
// (wire.Serve) covers the case where that thread went away first.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

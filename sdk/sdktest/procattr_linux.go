package sdktest

import "syscall"

// engineProcAttr asks the kernel to end the engine if the test dies.
func engineProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}

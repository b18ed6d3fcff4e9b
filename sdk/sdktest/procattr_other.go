//go:build !linux

package sdktest

import "syscall"

// engineProcAttr: without Pdeathsig the engine's idle timeout ends it.
func engineProcAttr() *syscall.SysProcAttr { return nil }

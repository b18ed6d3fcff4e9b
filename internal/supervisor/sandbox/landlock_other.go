//go:build !linux

package sandbox

import "errors"

// Supported: no launcher here; plugins start directly, unconfined.
const Supported = false

// ABI is 0: no Landlock outside Linux.
func ABI() int { return 0 }

// Status says plugins run unconfined here.
func Status() (active bool, detail string) {
	return false, "no confinement on this OS: plugins run with the host's rights, see docs/plugins.md"
}

// Exec is not available here.
func Exec(Policy) error { return errors.New("plugin-exec: plugins are not confined on this OS") }

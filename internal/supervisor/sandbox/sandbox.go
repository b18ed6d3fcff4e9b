// Package sandbox confines plugin processes where the OS allows it (Linux
// Landlock): a plugin may read the system's libraries and settings and the
// paths the operator names, write only its own temporary directory, and
// execute nothing but its own binary. The host builds a Policy; a small
// launcher (`ai-memory plugin-exec POLICY`, Exec) checks the binary against
// its pinned SHA-256 on the very descriptor it then executes, applies the
// policy to itself and execve()s the plugin in its place: Go cannot run
// code between fork and exec, and the policy must be in force before the
// plugin's first instruction.
package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Policy is what one plugin process may touch.
type Policy struct {
	Binary string   `json:"binary"` // the plugin: the one program it may run
	SHA256 string   `json:"sha256"` // its pinned checksum (hex)
	Read   []string `json:"read"`   // readable: files, or directories and all below
	Write  []string `json:"write"`  // readable and writable (its temporary directory)
}

// Command is the launcher's subcommand of the ai-memory binary.
const Command = "plugin-exec"

// Args are the launcher's arguments for p.
func (p Policy) Args() []string {
	raw, _ := json.Marshal(p)
	return []string{Command, string(raw)}
}

// ParsePolicy reads the launcher's argument.
func ParsePolicy(arg string) (Policy, error) {
	var p Policy
	if err := json.Unmarshal([]byte(arg), &p); err != nil {
		return Policy{}, fmt.Errorf("plugin-exec: policy: %v", err)
	}
	if !filepath.IsAbs(p.Binary) || len(p.SHA256) != 64 {
		return Policy{}, fmt.Errorf("plugin-exec: policy: needs an absolute binary path and its SHA-256")
	}
	return p, nil
}

// SystemReadable is what every plugin may read: programs' libraries and
// the system's settings (time zones, certificates, name resolution), and
// the devices a runtime opens.
func SystemReadable() []string {
	paths := []string{"/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/etc", "/dev/urandom", "/dev/random", "/dev/zero"}
	// A resolv.conf managed elsewhere (systemd-resolved's stub under /run).
	if p, err := filepath.EvalSymlinks("/etc/resolv.conf"); err == nil && !within(p, "/etc") {
		paths = append(paths, p)
	}
	return paths
}

// SystemWritable: the null device.
func SystemWritable() []string { return []string{"/dev/null"} }

// Readable is paths narrowed so that none reaches a protected path (the
// data dir, the config dir, key files): a path inside a protected one is
// dropped, and one that contains a protected path is replaced by its
// entries, recursively, leaving the protected path out (Landlock grants
// whole trees and cannot subtract). Paths are compared with symlinks
// resolved; missing ones are dropped.
func Readable(paths, protected []string) []string {
	var prot []string
	for _, p := range protected {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			prot = append(prot, r)
		} else if abs, err := filepath.Abs(p); err == nil {
			prot = append(prot, filepath.Clean(abs)) // not there yet: guard its name
		}
	}
	var out []string
	var add func(p string)
	add = func(p string) {
		r, err := filepath.EvalSymlinks(p)
		if err != nil {
			return
		}
		contains := false
		for _, q := range prot {
			if within(r, q) {
				return
			}
			contains = contains || within(q, r)
		}
		if !contains {
			out = append(out, r)
			return
		}
		entries, err := os.ReadDir(r)
		if err != nil {
			return
		}
		for _, e := range entries {
			add(filepath.Join(r, e.Name()))
		}
	}
	for _, p := range paths {
		add(p)
	}
	return out
}

// within reports whether path is dir or lies below it.
func within(path, dir string) bool {
	return path == dir || dir == "/" || strings.HasPrefix(path, dir+"/")
}

// Package version is the one place the release number lives. Every binary
// (the host and each first-party plugin) reports String(); the Makefile,
// the SDK packages and CHANGELOG.md are checked against Number by this
// package's test.
package version

import (
	"runtime/debug"
	"strings"
)

// Number is the release this tree is, or is becoming (semantic versioning).
// Tagging vNumber (and sdk/vNumber) publishes it.
const Number = "0.7.0"

// build is what `make build` knows and the Go toolchain cannot stamp in
// workspace mode: "release" for a clean checkout of the tag vNumber, else
// "dev+<commit>[.dirty]" (-ldflags "-X .../internal/version.build=...").
var build string

// String is the version a binary reports: Number for a build of the tagged
// release (go install ...@vNumber, or make build at the tag), else
// Number-dev+<commit>[.dirty], or Number-dev when nothing says which commit
// (a source tree without .git).
func String() string {
	info, _ := debug.ReadBuildInfo()
	return resolve(build, info)
}

func resolve(build string, info *debug.BuildInfo) string {
	switch build {
	case "release":
		return Number
	case "":
	default:
		return Number + "-" + build
	}
	if info == nil {
		return Number + "-dev"
	}
	// The module system's own version: v0.7.0 from a proxy, or (Go 1.24 and
	// later, outside a workspace) the tag a checkout's HEAD carries.
	if v := strings.TrimPrefix(info.Main.Version, "v"); v == Number || v == Number+"+dirty" {
		return v
	}
	var rev string
	dirty := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return Number + "-dev"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += ".dirty"
	}
	return Number + "-dev+" + rev
}

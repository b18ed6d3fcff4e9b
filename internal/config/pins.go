package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// SetPin writes `"bin" = "sum"` into config.toml's [plugins] table, replacing
// any pin of the same path. RemovePin takes it out; it reports whether there
// was one. Both edit the file as text so that the operator's comments and
// layout survive, check that the result still loads with the pin as meant,
// and replace the file atomically.
func SetPin(path, bin, sum string) error {
	_, err := editPins(path, bin, `"`+tomlEscape(bin)+`" = "`+sum+`"`)
	return err
}

// RemovePin: see SetPin.
func RemovePin(path, bin string) (bool, error) { return editPins(path, bin, "") }

func editPins(path, bin, line string) (bool, error) {
	raw, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	lines := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
	if len(raw) == 0 {
		lines = nil
	}
	var out []string
	in, header, found := false, -1, false
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "[") {
			in = t == "[plugins]"
			if in {
				header = len(out)
			}
		} else if in && pinKey(t) == bin {
			found = true
			continue // the old pin of this path
		}
		out = append(out, l)
	}
	if line != "" {
		if header < 0 {
			if len(out) > 0 {
				out = append(out, "")
			}
			out = append(out, "[plugins]")
			header = len(out) - 1
		}
		out = append(out[:header+1], append([]string{line}, out[header+1:]...)...)
	}
	text := strings.Join(out, "\n") + "\n"
	var check Config
	if _, err := toml.Decode(text, &check); err != nil {
		return false, fmt.Errorf("config %s: editing [plugins] would leave it unreadable: %w", path, err)
	}
	if want := strings.TrimSpace(line); want != "" && check.Plugins[bin] == "" {
		return false, fmt.Errorf("config %s: the pin of %s did not read back", path, bin)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return false, err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(text), 0o600); err != nil {
		return false, err
	}
	return found, os.Rename(tmp, path)
}

// pinKey is the key of a `key = value` line of [plugins], "" for any other line.
func pinKey(line string) string {
	var m map[string]string
	if _, err := toml.Decode(line, &m); err != nil || len(m) != 1 {
		return ""
	}
	for k := range m {
		return k
	}
	return ""
}

func tomlEscape(s string) string {
	q := strconv.Quote(s) // a TOML basic string accepts Go's escapes for printable text
	return q[1 : len(q)-1]
}

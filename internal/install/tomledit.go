package install

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/BurntSushi/toml"
)

// inlineServers finds `mcp_servers = {...}`, which TOML forbids extending.
var inlineServers = regexp.MustCompile(`(?m)^[ \t]*"?mcp_servers"?[ \t]*=`)

// TOML has no maintained format-preserving editor in Go, so Codex's
// config.toml is edited as text: our server is one block of lines between
// two marker comments, appended at the end of the file, and nothing else in
// the file is touched. The result is decoded before it is written, so a
// clash with the user's own tables is refused rather than written.

func beginMarker(name string) string { return "# " + name + ":begin" }
func endMarker(name string) string   { return "# " + name + ":end" }

// tomlBlock finds our block's byte range [start, end) including its lines'
// newlines; ok is false when there is none.
func tomlBlock(text []byte, name string) (start, end int, ok bool, err error) {
	start = -1
	off := 0
	for _, line := range bytes.SplitAfter(text, []byte("\n")) {
		t := strings.TrimSpace(string(line))
		switch {
		case strings.HasPrefix(t, beginMarker(name)) && start < 0:
			start = off
		case t == endMarker(name) && start >= 0:
			return start, off + len(line), true, nil
		}
		off += len(line)
	}
	if start >= 0 {
		return 0, 0, false, fmt.Errorf("found %q without its %q line; fix the file by hand", beginMarker(name), endMarker(name))
	}
	return 0, 0, false, nil
}

// tomlServer decodes text and returns mcp_servers.<name>, if any.
func tomlServer(text []byte, name string) (map[string]any, bool, error) {
	var doc map[string]any
	if _, err := toml.Decode(string(text), &doc); err != nil {
		return nil, false, fmt.Errorf("not valid TOML: %w", err)
	}
	servers, _ := doc["mcp_servers"].(map[string]any)
	s, ok := servers[name].(map[string]any)
	return s, ok, nil
}

// tomlWithout removes our block and the blank line we put before it.
func tomlWithout(text []byte, name string) ([]byte, bool, error) {
	start, end, ok, err := tomlBlock(text, name)
	if err != nil || !ok {
		return text, false, err
	}
	if start >= 2 && text[start-1] == '\n' && text[start-2] == '\n' {
		start--
	} else if start == 1 && text[0] == '\n' {
		start = 0
	}
	out := append(append([]byte{}, text[:start]...), text[end:]...)
	if len(bytes.TrimSpace(out)) == 0 {
		out = nil
	}
	return out, true, nil
}

// tomlWith puts block in place of ours, or appends it after a blank line.
func tomlWith(text []byte, name string, block []byte) ([]byte, error) {
	start, end, ok, err := tomlBlock(text, name)
	if err != nil {
		return nil, err
	}
	var out []byte
	if ok {
		out = append(append(append([]byte{}, text[:start]...), block...), text[end:]...)
	} else {
		out = append([]byte{}, text...)
		if len(out) > 0 {
			if out[len(out)-1] != '\n' {
				out = append(out, '\n')
			}
			out = append(out, '\n')
		}
		out = append(out, block...)
	}
	if inlineServers.Match(text) {
		return nil, fmt.Errorf("mcp_servers is an inline table, which a [mcp_servers.%s] table cannot extend; write it as [mcp_servers.<name>] tables", name)
	}
	if _, _, err := tomlServer(out, name); err != nil {
		return nil, fmt.Errorf("adding [mcp_servers.%s] would make the file invalid (%v); is mcp_servers an inline table?", name, err)
	}
	return out, nil
}

// tomlRender writes fields as the lines of one [mcp_servers.<name>] table.
func tomlRender(name, harness string, fields ordered) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s (written by `ai-memory install %s`; `--uninstall` removes this block)\n", beginMarker(name), harness)
	fmt.Fprintf(&b, "[mcp_servers.%s]\n", tomlKey(name))
	for _, f := range fields {
		fmt.Fprintf(&b, "%s = %s\n", f.k, tomlValue(f.v))
	}
	b.WriteString(endMarker(name) + "\n")
	return b.Bytes()
}

// tomlValue renders a string, a list of strings, or an inline table of
// them (JSON strings are valid TOML basic strings).
func tomlValue(v any) string {
	switch x := v.(type) {
	case []string:
		parts := make([]string, len(x))
		for i, s := range x {
			parts[i] = tomlValue(s)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case ordered:
		parts := make([]string, len(x))
		for i, f := range x {
			parts[i] = tomlKey(f.k) + " = " + tomlValue(f.v)
		}
		return "{ " + strings.Join(parts, ", ") + " }"
	}
	q, _ := json.Marshal(v)
	return string(q)
}

func tomlKey(k string) string {
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			q, _ := json.Marshal(k)
			return string(q)
		}
	}
	return k
}

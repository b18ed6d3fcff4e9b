package sdk

import (
	"bytes"
	"encoding/json"
	"slices"
)

// Schema compacts a JSON Schema literal written over several lines for
// people. An invalid literal is left as is for NewFamilyServer to refuse
// loudly.
func Schema(literal string) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(literal)); err != nil {
		return json.RawMessage(literal)
	}
	return b.Bytes()
}

// ArgNames lists a schema literal's properties, plus extra (hidden
// arguments a handler also accepts), sorted: the names to give ParseArgs.
func ArgNames(literal string, extra ...string) []string {
	var v struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal([]byte(literal), &v) // a bad literal fails Schema's check in NewFamilyServer
	names := slices.Clone(extra)
	for name := range v.Properties {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

package sdk

import (
	"bytes"
	"encoding/json"
)

// MarshalCompact encodes v as compact JSON without HTML escaping, which
// would cost tokens and mangle text such as <name>: how a handler's result
// is sent.
func MarshalCompact(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

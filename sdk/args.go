package sdk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ai-memory/ai-memory/sdk/record"
)

// Args is one call's arguments, read strictly: every getter checks the JSON
// type, and names the tool does not know are refused up front. The reference
// silently dropped wrong-typed values; we answer with the field and the rule.
type Args struct {
	raw map[string]json.RawMessage
}

// ParseArgs decodes a JSON object and rejects any argument not in known, so
// a typo ("namspace") is an error instead of a silently ignored filter, and
// any string that is not valid UTF-8, which encoding/json would silently
// have turned into U+FFFD; both errors name the argument.
func ParseArgs(data []byte, known []string) (*Args, error) {
	data = bytes.Trim(data, " \t\r\n") // JSON's whitespace only
	if len(data) == 0 || bytes.Equal(data, []byte("null")) {
		return &Args{raw: map[string]json.RawMessage{}}, nil
	}
	if data[0] != '{' {
		return nil, Errorf("arguments: must be a JSON object (got %s)", jsonType(data))
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, Errorf("arguments: invalid JSON: %v", err)
	}
	// Checked on the raw bytes: the decoded strings already carry U+FFFD.
	if err := badText(data); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(raw))
	for name := range raw {
		names = append(names, name)
	}
	slices.Sort(names) // the same unknown name is reported on every run
	for _, name := range names {
		if !slices.Contains(known, name) {
			return nil, Errorf("unknown argument %s; valid: %s", Quote(name), strings.Join(known, ", "))
		}
	}
	return &Args{raw: raw}, nil
}

// jsonType names the JSON type of a raw value for error messages.
func jsonType(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// Value returns the raw value of name; null counts as absent because some
// clients send null for every optional argument they leave unset.
func (a *Args) Value(name string) (json.RawMessage, bool) {
	v, ok := a.raw[name]
	if !ok || jsonType(v) == "null" {
		return nil, false
	}
	return v, true
}

func typeErr(name, want string, raw []byte) error {
	return Errorf("%s: must be %s (got %s)", name, want, jsonType(raw))
}

// Str returns an optional string argument, or def when it is absent.
func (a *Args) Str(name, def string) (string, error) {
	v, ok := a.Value(name)
	if !ok {
		return def, nil
	}
	if jsonType(v) != "string" {
		return "", typeErr(name, "a string", v)
	}
	// Without escapes a string is its bytes between the quotes: ParseArgs
	// checked the document (valid JSON, valid UTF-8), and decoding each
	// string again by reflection was most of a store's argument work.
	if len(v) >= 2 && v[len(v)-1] == '"' && bytes.IndexByte(v, '\\') < 0 {
		return string(v[1 : len(v)-1]), nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", Errorf("%s: invalid string: %v", name, err)
	}
	return s, nil
}

// Required returns a string argument that must be present and not blank.
func (a *Args) Required(name string) (string, error) {
	if _, ok := a.Value(name); !ok {
		return "", Errorf("%s is required", name)
	}
	s, err := a.Str(name, "")
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(s) == "" {
		return "", Errorf("%s: must not be empty", name)
	}
	return s, nil
}

// Query returns a required query text (record.ValidateQuery).
func (a *Args) Query(name string) (string, error) {
	q, err := a.Required(name)
	if err != nil {
		return "", err
	}
	return q, record.ValidateQuery(name, q)
}

// TargetID returns a required id of a memory the tool changes or removes
// (record.ValidateTargetID: at least the 8-character short id).
func (a *Args) TargetID(name string) (string, error) {
	id, err := a.Required(name)
	if err != nil {
		return "", err
	}
	return id, record.ValidateTargetID(name, id)
}

// Namespace returns a namespace argument, or def when it is absent. Every
// tool reads namespaces through these getters, so one rule
// (record.ValidateNamespace) applies to the value exactly as sent.
func (a *Args) Namespace(name, def string) (string, error) {
	ns, err := a.Str(name, def)
	if err != nil {
		return "", err
	}
	return ns, record.ValidateNamespace(name, ns)
}

// RequiredNamespace returns a namespace argument that must be present.
func (a *Args) RequiredNamespace(name string) (string, error) {
	if _, ok := a.Value(name); !ok {
		return "", Errorf("%s is required", name)
	}
	return a.Namespace(name, "")
}

// NamespaceFilter returns an optional namespace filter or prefix: absent
// or "" means every namespace; anything else must be a valid namespace, so
// " " or "a/" is an error rather than a filter silently widened.
func (a *Args) NamespaceFilter(name string) (string, error) {
	ns, err := a.Str(name, "")
	if err != nil {
		return "", err
	}
	return ns, record.ValidateNamespaceFilter(name, ns)
}

// OneOf returns an optional string argument that must be one of values.
func (a *Args) OneOf(name, def string, values ...string) (string, error) {
	s, err := a.Str(name, def)
	if err != nil {
		return "", err
	}
	if !slices.Contains(values, s) {
		return "", Errorf("%s: must be one of %s (got %s)", name, strings.Join(values, ", "), Quote(s))
	}
	return s, nil
}

// Integer returns an optional integer argument within [lo, hi]. A fraction
// is an error, never truncated; a value beyond int64 is a range error, never
// an overflow.
func (a *Args) Integer(name string, def, lo, hi int64) (int64, error) {
	v, ok := a.Value(name)
	if !ok {
		return def, nil
	}
	if jsonType(v) != "number" {
		return 0, typeErr(name, "an integer", v)
	}
	text := string(v)
	rangeErr := Errorf("%s: must be an integer from %d to %d (got %s)", name, lo, hi, shortNumber(text))
	if n, err := strconv.ParseInt(text, 10, 64); err == nil {
		if n < lo || n > hi {
			return 0, rangeErr
		}
		return n, nil
	} else if errors.Is(err, strconv.ErrRange) {
		return 0, rangeErr
	}
	// Fraction or exponent: 1e2 is the integer 100, 5.5 is no integer.
	f, err := strconv.ParseFloat(text, 64)
	switch {
	case errors.Is(err, strconv.ErrRange):
		return 0, rangeErr
	case err != nil:
		return 0, Errorf("%s: must be an integer (got %s)", name, shortNumber(text))
	case f != math.Trunc(f) || (f == 0 && hasNonZeroMantissa(text)):
		return 0, Errorf("%s: must be an integer (got %s)", name, shortNumber(text))
	case f < float64(lo) || f > float64(hi):
		return 0, rangeErr
	}
	return int64(f), nil
}

// shortNumber is a number's text for an error message: JSON numbers are
// ASCII and unbounded, so a long one is cut like a quoted string.
func shortNumber(text string) string {
	if len(text) <= record.MaxQuotedChars {
		return text
	}
	return fmt.Sprintf("%s… (%d bytes)", text[:record.MaxQuotedChars], len(text))
}

// hasNonZeroMantissa catches values like 1e-400 that ParseFloat rounds to 0.
func hasNonZeroMantissa(num string) bool {
	if i := strings.IndexAny(num, "eE"); i >= 0 {
		num = num[:i]
	}
	return strings.ContainsAny(num, "123456789")
}

// Number returns an optional JSON number argument.
func (a *Args) Number(name string, def float64) (float64, error) {
	v, ok := a.Value(name)
	if !ok {
		return def, nil
	}
	if jsonType(v) != "number" {
		return 0, typeErr(name, "a number", v)
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, Errorf("%s: must be a number (got %s)", name, shortNumber(string(v)))
	}
	return f, nil // ±Inf from ErrRange is left to the caller's range rule
}

// Bool returns an optional boolean argument, or def when it is absent; a
// string such as "true" is an error, not a guess.
func (a *Args) Bool(name string, def bool) (bool, error) {
	v, ok := a.Value(name)
	if !ok {
		return def, nil
	}
	if jsonType(v) != "boolean" {
		return false, typeErr(name, "a boolean", v)
	}
	return string(v) == "true", nil
}

// StringList returns an optional array-of-strings argument; any other element
// is an error naming its index.
func (a *Args) StringList(name string) ([]string, error) {
	v, ok := a.Value(name)
	if !ok {
		return nil, nil
	}
	if jsonType(v) != "array" {
		return nil, typeErr(name, "an array of strings", v)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(v, &items); err != nil {
		return nil, Errorf("%s: invalid array: %v", name, err)
	}
	out := make([]string, 0, len(items))
	for i, item := range items {
		if jsonType(item) != "string" {
			return nil, typeErr(fmt.Sprintf("%s[%d]", name, i), "a string", item)
		}
		var s string
		if err := json.Unmarshal(item, &s); err != nil {
			return nil, Errorf("%s[%d]: invalid string: %v", name, i, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// Object returns an optional JSON object argument, numbers kept exact.
func (a *Args) Object(name string) (map[string]any, error) {
	v, ok := a.Value(name)
	if !ok {
		return nil, nil
	}
	if jsonType(v) != "object" {
		return nil, typeErr(name, "a JSON object", v)
	}
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, Errorf("%s: invalid object: %v", name, err)
	}
	return m, nil
}

// Time reads an RFC 3339 timestamp argument as Unix nanoseconds (UTC); ok
// is false when it is absent or blank. A year outside 1678–2261 is an error.
func (a *Args) Time(name string) (ns int64, ok bool, err error) {
	return a.timeArg(name, record.ParseTime)
}

// TimeBound reads an RFC 3339 timestamp used as a range bound (since,
// until): beyond what Unix nanoseconds hold, it is an open bound on that
// side rather than an error.
func (a *Args) TimeBound(name string) (ns int64, ok bool, err error) {
	return a.timeArg(name, record.ParseTimeBound)
}

func (a *Args) timeArg(name string, parse func(field, s string) (int64, error)) (int64, bool, error) {
	s, err := a.Str(name, "")
	if err != nil || strings.TrimSpace(s) == "" {
		return 0, false, err
	}
	ns, err := parse(name, s)
	return ns, err == nil, err
}

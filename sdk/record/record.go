// Package record holds the rules of the memory record that every writer
// must keep: limits, tiers, sources, scopes, namespaces and agent ids
// (data-model §2–§6). The engine enforces them on every write; plugins use
// them to answer bad arguments before a round trip.
package record

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Limits from data-model §3.
const (
	MaxTitleChars    = 512
	MaxContentBytes  = 65536
	MaxNamespaceLen  = 512
	MaxNamespaceSegs = 8
	MaxTags          = 50
	MaxTagBytes      = 128
	MaxMetadataBytes = 65536
	MaxMetadataDepth = 32
	MaxIDBytes       = 128
	MaxAgentIDBytes  = 128
	MaxSourceBytes   = 64
	MinPriority      = 1
	MaxPriority      = 10
	DefaultPriority  = 5
	DefaultNamespace = "global"
	DefaultTier      = "mid"
	DefaultSource    = "claude"

	// MaxMessageBytes bounds every gRPC message on every hop (host and
	// plugin, plugin and engine). It sits far above the record limits (and
	// a list of 200 full records), so an oversized value always reaches a
	// validator and gets its field's own error, never a transport error
	// such as ResourceExhausted. The host's MCP message cap must be smaller.
	MaxMessageBytes = 64 << 20
)

// Tiers in rank order.
var Tiers = []string{"short", "mid", "long"}

// TierRank orders tiers: short 0 < mid 1 < long 2; -1 for an unknown tier.
func TierRank(tier string) int {
	for i, t := range Tiers {
		if t == tier {
			return i
		}
	}
	return -1
}

// Sources accepted for a memory's source.
var Sources = []string{"user", "claude", "hook", "api", "cli", "import", "consolidation", "system", "chaos", "notify"}

// Scopes of data-model §5.1, in widening order.
var Scopes = []string{"private", "team", "unit", "org", "collective"}

// FieldError says which field broke which rule.
type FieldError struct {
	Field string
	Rule  string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Rule }

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Rule: fmt.Sprintf(format, args...)}
}

// hasBadControl reports control characters other than \n and \t.
func hasBadControl(s string) bool {
	for _, r := range s {
		if unicode.IsControl(r) && r != '\n' && r != '\t' {
			return true
		}
	}
	return false
}

// ValidateTitle: non-empty after trim, ≤ 512 characters, no control
// characters but \n and \t, no format characters but the joiners (text.go).
func ValidateTitle(s string) error {
	switch {
	case strings.TrimSpace(s) == "":
		return fieldErr("title", "must not be empty")
	case !utf8.ValidString(s):
		return fieldErr("title", "must be valid UTF-8")
	case utf8.RuneCountInString(s) > MaxTitleChars:
		return fieldErr("title", "must be at most %d characters (got %d)", MaxTitleChars, utf8.RuneCountInString(s))
	case hasBadControl(s):
		return fieldErr("title", "must not contain control characters other than newline and tab")
	case hasFormatChar(s):
		return fieldErr("title", "must not contain format characters (Unicode Cf: zero-width spaces, direction marks) other than the joiners U+200C and U+200D")
	}
	return nil
}

// ValidateContent: non-empty after trim, ≤ 65,536 bytes, same control rule as the title (so no \r).
func ValidateContent(s string) error {
	switch {
	case strings.TrimSpace(s) == "":
		return fieldErr("content", "must not be empty")
	case len(s) > MaxContentBytes:
		return fieldErr("content", "must be at most %d bytes (got %d)", MaxContentBytes, len(s))
	case !utf8.ValidString(s):
		return fieldErr("content", "must be valid UTF-8")
	case hasBadControl(s):
		return fieldErr("content", "must not contain control characters other than newline and tab (\\r included: use \\n line endings)")
	}
	return nil
}

// ValidateNamespace applies data-model §3 and the identity rule (text.go)
// to a namespace value of field.
// It is the one namespace rule: every tool checks namespace arguments with
// it (through sdk.Args) on the value as sent, never trimmed or stripped
// first, so " " and "a/" are errors in every tool.
func ValidateNamespace(field, ns string) error {
	switch {
	case strings.TrimSpace(ns) == "":
		return fieldErr(field, "must not be empty")
	case !utf8.ValidString(ns):
		return fieldErr(field, "must be valid UTF-8")
	case utf8.RuneCountInString(ns) > MaxNamespaceLen:
		return fieldErr(field, "must be at most %d characters", MaxNamespaceLen)
	case strings.HasPrefix(ns, "/") || strings.HasSuffix(ns, "/"):
		return fieldErr(field, "must not start or end with '/'")
	}
	for _, r := range ns {
		if r == ' ' || r == '\\' || r == 0 || unicode.IsControl(r) || unicode.IsSpace(r) {
			return fieldErr(field, "must not contain spaces, backslashes or control characters")
		}
	}
	segs := strings.Split(ns, "/")
	if len(segs) > MaxNamespaceSegs {
		return fieldErr(field, "must have at most %d '/'-separated segments (got %d)", MaxNamespaceSegs, len(segs))
	}
	for _, s := range segs {
		switch s {
		case "":
			return fieldErr(field, "must not contain an empty segment ('//')")
		case ".", "..":
			return fieldErr(field, "must not contain a '.' or '..' segment")
		}
	}
	if rule := identityRule(ns); rule != "" {
		return fieldErr(field, "%s (got %s)", rule, Quote(ns))
	}
	return nil
}

// ValidateNamespaceFilter checks an optional namespace filter or prefix:
// "" means every namespace (the argument was not given); anything else must
// be a valid namespace. A blank or slash-ended value is an error, never a
// filter silently widened to everything or to a neighbour.
func ValidateNamespaceFilter(field, ns string) error {
	if ns == "" {
		return nil
	}
	return ValidateNamespace(field, ns)
}

// ValidateTags: ≤ 50 entries, each non-empty after trim, ≤ 128 bytes, no control characters.
func ValidateTags(field string, tags []string) error {
	if len(tags) > MaxTags {
		return fieldErr(field, "must have at most %d entries (got %d)", MaxTags, len(tags))
	}
	for i, t := range tags {
		switch {
		case strings.TrimSpace(t) == "":
			return fieldErr(fmt.Sprintf("%s[%d]", field, i), "must not be empty")
		case len(t) > MaxTagBytes:
			return fieldErr(fmt.Sprintf("%s[%d]", field, i), "must be at most %d bytes", MaxTagBytes)
		case !utf8.ValidString(t) || hasBadControl(t):
			return fieldErr(fmt.Sprintf("%s[%d]", field, i), "must be valid UTF-8 without control characters")
		}
	}
	return nil
}

// ValidatePriority: integer 1–10.
func ValidatePriority(p int64) error {
	if p < MinPriority || p > MaxPriority {
		return fieldErr("priority", "must be an integer from %d to %d (got %d)", MinPriority, MaxPriority, p)
	}
	return nil
}

// ValidateConfidence: finite, 0.0–1.0.
func ValidateConfidence(c float64) error {
	if math.IsNaN(c) || math.IsInf(c, 0) || c < 0 || c > 1 {
		return fieldErr("confidence", "must be a number from 0.0 to 1.0 (got %v)", c)
	}
	return nil
}

// ValidateTier: one of short, mid, long (case-sensitive).
func ValidateTier(field, tier string) error {
	if TierRank(tier) < 0 {
		return fieldErr(field, "must be one of short, mid, long (got %s)", Quote(tier))
	}
	return nil
}

// ValidateSource: one of Sources.
func ValidateSource(s string) error {
	for _, v := range Sources {
		if s == v {
			return nil
		}
	}
	return fieldErr("source", "must be one of %s (got %s)", strings.Join(Sources, ", "), Quote(s))
}

// ValidateScope: one of Scopes.
func ValidateScope(s string) error {
	for _, v := range Scopes {
		if s == v {
			return nil
		}
	}
	return fieldErr("scope", "must be one of %s (got %s)", strings.Join(Scopes, ", "), Quote(s))
}

// ValidateID: non-empty after trim, ≤ 128 bytes, no control characters.
func ValidateID(field, id string) error {
	switch {
	case strings.TrimSpace(id) == "":
		return fieldErr(field, "must not be empty")
	case len(id) > MaxIDBytes:
		return fieldErr(field, "must be at most %d bytes", MaxIDBytes)
	case !utf8.ValidString(id) || hasBadControl(id) || strings.ContainsAny(id, "\n\t"):
		return fieldErr(field, "must not contain control characters")
	}
	return nil
}

// MaxQueryChars bounds the text of a recall or search query
// (docs/RETRIEVAL.md): about 600 words, more than a question or a prompt
// needs; longer text is a document, and every word of it is another
// posting list to read.
const MaxQueryChars = 4096

// ValidateQuery: a query of field is at most MaxQueryChars characters.
func ValidateQuery(field, q string) error {
	if n := utf8.RuneCountInString(q); n > MaxQueryChars {
		return fieldErr(field, "must be at most %d characters (got %d)", MaxQueryChars, n)
	}
	return nil
}

// MinTargetID is the shortest id a tool that changes or removes memories
// accepts: the short ids results show are at least this long, and a
// shorter prefix, unique by chance, once made memory_delete {"id": "3"}
// delete an unrelated memory.
const MinTargetID = 8

// ValidateTargetID is ValidateID for the id of a memory a tool changes or
// removes: at least MinTargetID characters, a full id or a short id.
func ValidateTargetID(field, id string) error {
	if err := ValidateID(field, id); err != nil {
		return err
	}
	if n := utf8.RuneCountInString(id); n < MinTargetID {
		return fieldErr(field, "must be a full id or a short id of at least %d characters, as results show it (got %s)", MinTargetID, Quote(id))
	}
	return nil
}

// ValidateAgentID: 1–128 bytes of ASCII letters, digits and _ - : @ . /
func ValidateAgentID(field, id string) error {
	if id == "" || len(id) > MaxAgentIDBytes {
		return fieldErr(field, "must be 1 to %d bytes (got %d)", MaxAgentIDBytes, len(id))
	}
	for _, r := range id {
		ok := r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("_-:@./", r))
		if !ok {
			return fieldErr(field, "may contain only ASCII letters, digits and _ - : @ . / (got %s)", Quote(id))
		}
	}
	return nil
}

// MaxAgentTypeBytes bounds a registered agent's type.
const MaxAgentTypeBytes = 64

// ValidateAgentType: 1–64 bytes without control characters, and the
// identity rule (text.go).
func ValidateAgentType(t string) error {
	switch {
	case t == "" || len(t) > MaxAgentTypeBytes:
		return fieldErr("agent_type", "must be 1 to %d bytes (got %d)", MaxAgentTypeBytes, len(t))
	case !utf8.ValidString(t) || hasBadControl(t) || strings.ContainsAny(t, "\n\t"):
		return fieldErr("agent_type", "must be valid UTF-8 without control characters")
	}
	return ValidateIdentity("agent_type", t)
}

// ValidateMetadata: a JSON object, ≤ 65,536 bytes serialised, nesting ≤ 32.
func ValidateMetadata(raw []byte) error {
	if len(raw) > MaxMetadataBytes {
		return fieldErr("metadata", "must serialise to at most %d bytes (got %d)", MaxMetadataBytes, len(raw))
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return fieldErr("metadata", "must be valid JSON: %v", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return fieldErr("metadata", "must be a JSON object")
	}
	return ValidateMetadataObject(m, raw)
}

// ValidateMetadataObject is ValidateMetadata for an object the caller holds
// decoded beside its encoding raw: the same rules, without decoding raw again
// (a store built its metadata from the decoded argument, and parsing the
// encoding back was a fifth of the plugin's own work on a store).
func ValidateMetadataObject(v map[string]any, raw []byte) error {
	if len(raw) > MaxMetadataBytes {
		return fieldErr("metadata", "must serialise to at most %d bytes (got %d)", MaxMetadataBytes, len(raw))
	}
	if depth(v) > MaxMetadataDepth {
		return fieldErr("metadata", "must nest at most %d levels deep", MaxMetadataDepth)
	}
	return nil
}

func depth(v any) int {
	switch x := v.(type) {
	case map[string]any:
		d := 0
		for _, c := range x {
			d = max(d, depth(c))
		}
		return d + 1
	case []any:
		d := 0
		for _, c := range x {
			d = max(d, depth(c))
		}
		return d + 1
	}
	return 0
}

// Ancestors returns ns, its parent, grandparent … (self first).
func Ancestors(ns string) []string {
	out := []string{ns}
	for {
		i := strings.LastIndexByte(ns, '/')
		if i <= 0 {
			return out
		}
		ns = ns[:i]
		out = append(out, ns)
	}
}

// Depth is the number of non-empty '/'-segments of ns.
func Depth(ns string) int {
	n := 0
	for _, s := range strings.Split(ns, "/") {
		if s != "" {
			n++
		}
	}
	return n
}

// FormatTime renders Unix nanoseconds as RFC 3339 in UTC; "" for 0 (absent).
func FormatTime(ns int64) string {
	if ns == 0 {
		return ""
	}
	return time.Unix(0, ns).UTC().Format(time.RFC3339Nano)
}

// ParseTimeBound reads an RFC 3339 timestamp used as a range bound (since,
// until): a time beyond what Unix nanoseconds hold (years 1678–2261) is an
// open bound on that side, not an error.
func ParseTimeBound(field, s string) (int64, error) {
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(s))
	switch {
	case err != nil:
		return ParseTime(field, s)
	case t.Before(time.Unix(0, math.MinInt64)):
		return math.MinInt64, nil
	case t.After(time.Unix(0, math.MaxInt64)):
		return math.MaxInt64, nil
	}
	return t.UnixNano(), nil
}

// ParseTime reads an RFC 3339 timestamp of field into Unix nanoseconds, UTC.
func ParseTime(field, s string) (int64, error) {
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(s))
	if err != nil {
		return 0, fieldErr(field, "must be an RFC 3339 timestamp such as 2026-01-02T15:04:05Z (got %s)", Quote(s))
	}
	// Unix nanoseconds cover 1678–2262; outside that UnixNano is undefined.
	if y := t.UTC().Year(); y < 1678 || y > 2261 {
		return 0, fieldErr(field, "must be between the years 1678 and 2261 (got %s)", Quote(s))
	}
	return t.UnixNano(), nil
}

// ValidateRecipient: a message's target agent id, which names its inbox
// namespace (_messages/<id>): the agent id rules, and no "/" or "..", so
// it can never reach another namespace (spec §15 item 17).
func ValidateRecipient(field, id string) error {
	if err := ValidateAgentID(field, id); err != nil {
		return err
	}
	if strings.Contains(id, "/") || strings.Contains(id, "..") {
		return fieldErr(field, "must not contain '/' or '..' (got %s)", Quote(id))
	}
	return nil
}

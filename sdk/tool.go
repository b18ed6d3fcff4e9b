package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Call is one tool invocation as a handler sees it. Who it is for was
// resolved by the host; arguments can never widen it.
type Call struct {
	Tool      string
	Arguments json.RawMessage
	// AgentID is the session identity the host resolved ("" when it has
	// none; Caller says "anonymous" then). SessionID and ClientName name
	// the MCP session and its client.
	AgentID, SessionID, ClientName string

	defaultNamespace string
	argNames         []string // the tool schema's properties, parsed once
}

// Caller is the session identity the host resolved, or "anonymous".
func (c Call) Caller() string {
	if c.AgentID != "" {
		return c.AgentID
	}
	return "anonymous"
}

// Args decodes the arguments strictly against the tool's schema: a name
// the schema does not declare is refused (ParseArgs). The schema's names
// were read once, when the plugin started.
func (c Call) Args() (*Args, error) { return ParseArgs(c.Arguments, c.argNames) }

// Handler runs a tool. It returns a value marshalled as the tool's compact
// JSON result (a Text is sent as it is), or an error: a *ToolError (or any
// error) becomes an isError result carrying its message.
type Handler func(ctx context.Context, call Call) (any, error)

// Text is a tool result sent as plain text, not JSON-encoded (for example
// a TOON listing).
type Text string

// Hints are the truthful MCP annotations of a tool. Nil says nothing.
type Hints struct {
	ReadOnly    *bool
	Destructive *bool
	Idempotent  *bool
	OpenWorld   *bool
}

// Bool returns a pointer for use in Hints.
func Bool(b bool) *bool { return &b }

// ReadOnly marks a tool that changes nothing.
var ReadOnly = Hints{ReadOnly: Bool(true)}

// Tool declares one MCP tool of a family.
type Tool struct {
	Name        string
	Description string
	// Schema is the JSON Schema of the arguments, exactly as tools/list shows it.
	Schema     json.RawMessage
	Hints      Hints
	AlwaysLoad bool
	Handler    Handler
}

// Family is a named group of tools loaded together.
type Family struct {
	Name  string
	Tools []Tool
}

// ToolError is an error an agent can act on: it names the field and the rule.
type ToolError struct{ Message string }

func (e *ToolError) Error() string { return e.Message }

// Errorf builds a ToolError.
func Errorf(format string, args ...any) error {
	return &ToolError{Message: fmt.Sprintf(format, args...)}
}

// IsToolError reports whether err is (or wraps) a ToolError.
func IsToolError(err error) bool {
	var te *ToolError
	return errors.As(err, &te)
}

func (t Tool) definition() *aimemoryv1.ToolDefinition {
	def := &aimemoryv1.ToolDefinition{
		Name:            t.Name,
		Description:     t.Description,
		InputSchemaJson: t.Schema,
		AlwaysLoad:      t.AlwaysLoad,
	}
	h := t.Hints
	if h.ReadOnly != nil || h.Destructive != nil || h.Idempotent != nil || h.OpenWorld != nil {
		def.Annotations = &aimemoryv1.ToolAnnotations{
			ReadOnly:    h.ReadOnly,
			Destructive: h.Destructive,
			Idempotent:  h.Idempotent,
			OpenWorld:   h.OpenWorld,
		}
	}
	return def
}

// DefaultNamespace is where a memory goes when the call names no namespace:
// what the host resolved (the project's, or a configured one), else global.
func (c Call) DefaultNamespace() string {
	if ns := c.defaultNamespace; ns != "" {
		return ns
	}
	return record.DefaultNamespace
}

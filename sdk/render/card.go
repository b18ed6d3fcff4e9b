package render

import (
	"strconv"
	"strings"

	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Card is one memory in the default format of memory_get: its title, the
// fields that say something, then its whole content, unescaped:
//
//	title:Deploy rule
//	namespace:org/team|priority:8|tags:deploy
//	content:
//	Never deploy on a Friday.
//
// As in a listing, a field holding its default, the session's namespace or
// the caller's own agent id is left out; so is the id, which the caller
// just gave, and every timestamp (format toon or json has them).
type Card struct {
	Memory    *aimemoryv1.Memory
	Namespace string // the session's default namespace
	Caller    string // the session's agent id
	// Blocks are TOON blocks shown between the fields and the content
	// (memory_get's links), each ending in a line break.
	Blocks string
}

// Compact renders the card.
func (c Card) Compact() string {
	m := c.Memory
	var fields []string
	field := func(name, value, silent string) {
		if value != "" && value != silent {
			fields = append(fields, name+":"+value)
		}
	}
	field("tier", EscapeTOON(m.GetTier()), record.DefaultTier)
	field("namespace", EscapeTOON(m.GetNamespace()), c.Namespace)
	field("priority", strconv.Itoa(int(m.GetPriority())), strconv.Itoa(record.DefaultPriority))
	field("confidence", strconv.FormatFloat(m.GetConfidence(), 'f', -1, 64), "1")
	field("tags", TagsCell(m.GetTags()), "")
	field("source", EscapeTOON(m.GetSource()), record.DefaultSource)
	field("agent_id", EscapeTOON(MetadataString(m.GetMetadataJson(), "agent_id")), c.Caller)
	field("scope", EscapeTOON(MetadataString(m.GetMetadataJson(), "scope")), "")
	field("metadata", EscapeTOON(string(MetadataJSON(metadataWithout(m.GetMetadataJson(), "agent_id", "scope")))), "")

	var b strings.Builder
	b.WriteString("title:" + EscapeTOON(m.GetTitle()) + "\n")
	if len(fields) > 0 {
		b.WriteString(strings.Join(fields, "|") + "\n")
	}
	b.WriteString(c.Blocks)
	b.WriteString("content:\n" + m.GetContent())
	return b.String()
}

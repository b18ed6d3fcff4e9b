// Command ai-memory-notes is an example third-party family, "notes": task
// items kept in the family's own keyspace and linked to the memories they
// are about. It imports the SDK only, as any plugin would, and follows the
// first-party plugins' habits: one engine connection for the process
// (sdk.Main makes it), schemas read once (Call.Args uses the names read
// when the plugin started).
package main

import (
	"context"

	"github.com/ai-memory/ai-memory/sdk"
)

const family = "notes"

const todoSchema = `{"type":"object","properties":{
 "text":{"type":"string","description":"The task. Omit to list the open tasks."},
 "memory_id":{"type":"string","description":"Id of the memory the task is about (linked)."}}}`

const doneSchema = `{"type":"object","required":["id"],"properties":{
 "id":{"type":"string","description":"Id of the task to close."}}}`

// notes holds what the tools share: the plugin's one engine connection.
type notes struct{ eng *sdk.Engine }

// Families declares the family on eng; sdk.Main calls it once.
func Families(eng *sdk.Engine) []sdk.Family {
	n := notes{eng}
	return []sdk.Family{{Name: family, Tools: []sdk.Tool{
		{Name: "memory_note_todo", Description: "Add a task (optionally about a memory) and list the open tasks.",
			Schema: sdk.Schema(todoSchema), Handler: n.todo},
		{Name: "memory_note_done", Description: "Close a task and list the open tasks.",
			Schema: sdk.Schema(doneSchema), Hints: sdk.Hints{Idempotent: sdk.Bool(true)}, Handler: n.done},
	}}}
}

func main() { sdk.Main("ai-memory-notes", "0.1.0", Families) }

// task is one open task as results show it.
type task struct {
	ID     string `json:"id"`
	Text   string `json:"text"`
	Memory string `json:"memory,omitempty"`
}

func (n notes) todo(ctx context.Context, c sdk.Call) (any, error) {
	a, err := c.Args() // unknown names are refused
	if err != nil {
		return nil, err
	}
	text, err := a.Str("text", "") // a wrong type is an error naming the field
	if err != nil {
		return nil, err
	}
	about, err := a.Str("memory_id", "")
	if err != nil {
		return nil, err
	}
	if text != "" {
		m, err := n.eng.Store(ctx, sdk.Memory{Title: text, Content: text, Namespace: sdk.Keyspace(family), Tier: "long", Tags: []string{"open"}})
		if err != nil {
			return nil, err // the engine's message, as an agent can act on it
		}
		if about != "" {
			if err := n.eng.Link(ctx, m.ID, about, ""); err != nil {
				return nil, err
			}
		}
	}
	return n.open(ctx)
}

func (n notes) done(ctx context.Context, c sdk.Call) (any, error) {
	a, err := c.Args()
	if err != nil {
		return nil, err
	}
	id, err := a.Required("id")
	if err != nil {
		return nil, err
	}
	got, err := n.eng.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if len(got) != 1 || got[0].Namespace != sdk.Keyspace(family) {
		return nil, sdk.Errorf("id: no task %s", sdk.Quote(id))
	}
	if _, err := n.eng.SetTags(ctx, got[0].ID, "done"); err != nil {
		return nil, err
	}
	return n.open(ctx)
}

// open lists the open tasks, each with the memory it is linked to.
func (n notes) open(ctx context.Context) (any, error) {
	open, err := n.eng.List(ctx, sdk.Filter{Namespace: sdk.Keyspace(family), Tag: "open", Limit: 100})
	if err != nil {
		return nil, err
	}
	tasks := []task{}
	var ids []string
	for _, m := range open {
		tasks = append(tasks, task{ID: m.ID, Text: m.Content})
		ids = append(ids, m.ID)
	}
	if len(ids) > 0 {
		links, err := n.eng.LinksFrom(ctx, ids...)
		if err != nil {
			return nil, err
		}
		about := map[string]string{}
		for _, l := range links {
			about[l.From] = l.To
		}
		for i := range tasks {
			tasks[i].Memory = about[tasks[i].ID]
		}
	}
	return map[string]any{"open": tasks}, nil
}

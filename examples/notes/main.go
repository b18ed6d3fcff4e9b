// Command ai-memory-notes is an example third-party family, "notes": task
// items kept in the family's own keyspace and linked to the memories they
// are about. It imports the SDK and the protocol only, as any plugin would.
package main

import (
	"context"

	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
	"github.com/ai-memory/ai-memory/sdk"
)

const family = "notes"

var todoSchema = `{"type":"object","properties":{
 "text":{"type":"string","description":"The task. Omit to list the open tasks."},
 "memory_id":{"type":"string","description":"Id of the memory the task is about (linked)."}}}`

var doneSchema = `{"type":"object","required":["id"],"properties":{
 "id":{"type":"string","description":"Id of the task to close."}}}`

// Notes is the family this binary serves.
var Notes = sdk.Family{Name: family, Tools: []sdk.Tool{
	{Name: "memory_note_todo", Description: "Add a task (optionally about a memory) and list the open tasks.",
		Schema: sdk.Schema(todoSchema), Handler: todo},
	{Name: "memory_note_done", Description: "Close a task and list the open tasks.",
		Schema: sdk.Schema(doneSchema), Hints: sdk.Hints{Idempotent: sdk.Bool(true)}, Handler: done},
}}

func main() { sdk.Serve("ai-memory-notes", "0.1.0", Notes) }

// task is one open task as results show it.
type task struct {
	ID     string `json:"id"`
	Text   string `json:"text"`
	Memory string `json:"memory,omitempty"`
}

func todo(ctx context.Context, c sdk.Call) (any, error) {
	a, err := sdk.ParseArgs(c.Arguments, sdk.ArgNames(todoSchema))
	if err != nil {
		return nil, err
	}
	text, err := a.Str("text", "")
	if err != nil {
		return nil, err
	}
	about, err := a.Str("memory_id", "")
	if err != nil {
		return nil, err
	}
	eng, err := sdk.DialEngine()
	if err != nil {
		return nil, err
	}
	defer eng.Close()
	if text != "" {
		m := &aimemoryv1.Memory{Title: text, Content: text, Namespace: sdk.Keyspace(family), Tier: "long", Tags: []string{"open"}}
		r, err := eng.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: m, OnConflict: aimemoryv1.ConflictPolicy_CONFLICT_POLICY_ERROR})
		if err != nil {
			return nil, sdk.EngineError(err)
		}
		if about != "" {
			if _, err := eng.PutLink(ctx, &aimemoryv1.PutLinkRequest{SourceId: r.GetMemory().GetId(), TargetId: about, ObservedBy: sdk.Caller(c.Context)}); err != nil {
				return nil, sdk.EngineError(err)
			}
		}
	}
	return open(ctx, eng)
}

func done(ctx context.Context, c sdk.Call) (any, error) {
	a, err := sdk.ParseArgs(c.Arguments, sdk.ArgNames(doneSchema))
	if err != nil {
		return nil, err
	}
	id, err := a.Required("id")
	if err != nil {
		return nil, err
	}
	eng, err := sdk.DialEngine()
	if err != nil {
		return nil, err
	}
	defer eng.Close()
	got, err := eng.GetMemories(ctx, &aimemoryv1.GetMemoriesRequest{Ids: []string{id}})
	if err != nil {
		return nil, sdk.EngineError(err)
	}
	if len(got.GetMemories()) != 1 || got.GetMemories()[0].GetNamespace() != sdk.Keyspace(family) {
		return nil, sdk.Errorf("id: no task %s", sdk.Quote(id))
	}
	if _, err := eng.UpdateMemory(ctx, &aimemoryv1.UpdateMemoryRequest{Id: got.GetMemories()[0].GetId(), SetTags: true, Tags: []string{"done"}}); err != nil {
		return nil, sdk.EngineError(err)
	}
	return open(ctx, eng)
}

// open lists the open tasks, each with the memory it is linked to.
func open(ctx context.Context, eng *sdk.EngineConn) (any, error) {
	l, err := eng.ListMemories(ctx, &aimemoryv1.ListMemoriesRequest{Limit: 100,
		Filter: &aimemoryv1.Filter{Namespace: sdk.Keyspace(family), Tag: "open"}})
	if err != nil {
		return nil, sdk.EngineError(err)
	}
	tasks := []task{}
	var ids []string
	for _, m := range l.GetMemories() {
		tasks = append(tasks, task{ID: m.GetId(), Text: m.GetContent()})
		ids = append(ids, m.GetId())
	}
	if len(ids) > 0 {
		links, err := eng.GetLinks(ctx, &aimemoryv1.GetLinksRequest{Ids: ids, Direction: aimemoryv1.Direction_DIRECTION_OUT})
		if err != nil {
			return nil, sdk.EngineError(err)
		}
		about := map[string]string{}
		for _, k := range links.GetLinks() {
			about[k.GetSourceId()] = k.GetTargetId()
		}
		for i := range tasks {
			tasks[i].Memory = about[tasks[i].ID]
		}
	}
	return map[string]any{"open": tasks}, nil
}

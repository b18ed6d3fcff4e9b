package sdk_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ai-memory/ai-memory/sdk"
	"github.com/ai-memory/ai-memory/sdk/sdktest"
)

// tool declares a test tool whose arguments are the schema's string
// properties, handed to run decoded.
func tool(name string, props []string, run func(ctx context.Context, args map[string]string) (any, error)) sdk.Tool {
	schema := `{"type":"object","properties":{`
	for i, p := range props {
		if i > 0 {
			schema += ","
		}
		schema += `"` + p + `":{"type":"string","description":"` + p + `"}`
	}
	return sdk.Tool{Name: name, Description: "Test tool " + name + ".", Schema: sdk.Schema(schema + `}}`),
		Handler: func(ctx context.Context, c sdk.Call) (any, error) {
			a, err := c.Args()
			if err != nil {
				return nil, err
			}
			args := map[string]string{}
			for _, p := range props {
				if args[p], err = a.Str(p, ""); err != nil {
					return nil, err
				}
			}
			return run(ctx, args)
		}}
}

// The storage view keeps a family's keys in its keyspace, which another
// family cannot read.
func TestStorage(t *testing.T) {
	eng := sdktest.StartEngine(t)
	kv := eng.SDK().Storage("kv")
	f := sdktest.NewFamily(t, "kv", []sdk.Family{{Name: "kv", Tools: []sdk.Tool{
		tool("kv_put", []string{"key", "value"}, func(ctx context.Context, a map[string]string) (any, error) {
			return "ok", kv.Put(ctx, a["key"], a["value"])
		}),
		tool("kv_get", []string{"key"}, func(ctx context.Context, a map[string]string) (any, error) {
			v, ok, err := kv.Get(ctx, a["key"])
			return map[string]any{"value": v, "set": ok}, err
		}),
		tool("kv_delete", []string{"key"}, func(ctx context.Context, a map[string]string) (any, error) {
			return "ok", kv.Delete(ctx, a["key"])
		}),
		tool("kv_list", []string{"prefix"}, func(ctx context.Context, a map[string]string) (any, error) {
			return kv.List(ctx, a["prefix"])
		}),
	}}}).WithEngine(eng)

	f.OK("kv_put", `{"key":"cfg/a","value":"1"}`, nil)
	f.OK("kv_put", `{"key":"cfg/b","value":"2"}`, nil)
	f.OK("kv_put", `{"key":"cfg/a","value":"3"}`, nil) // overwrites
	f.OK("kv_put", `{"key":"other","value":"x"}`, nil)
	if got := f.OK("kv_get", `{"key":"cfg/a"}`, nil); got != `{"set":true,"value":"3"}` {
		t.Errorf("get cfg/a = %s", got)
	}
	if got := f.OK("kv_get", `{"key":"nope"}`, nil); got != `{"set":false,"value":""}` {
		t.Errorf("get nope = %s", got)
	}
	if got := f.OK("kv_list", `{"prefix":"cfg/"}`, nil); got != `["cfg/a","cfg/b"]` {
		t.Errorf("list cfg/ = %s", got)
	}
	f.OK("kv_delete", `{"key":"cfg/a"}`, nil)
	f.OK("kv_delete", `{"key":"cfg/a"}`, nil) // not set: nothing to do
	if got := f.OK("kv_list", `{"prefix":""}`, nil); got != `["cfg/b","other"]` {
		t.Errorf("after delete: list = %s", got)
	}
	f.Fails("kv_put", `{"key":"","value":"x"}`, "title")
	f.Fails("kv_put", `{"key":"k","value":"x","extra":"y"}`, "unknown argument")

	other := sdktest.NewFamily(t, "other", []sdk.Family{{Name: "other", Tools: []sdk.Tool{
		tool("peek", []string{"key"}, func(ctx context.Context, a map[string]string) (any, error) {
			v, ok, err := kv.Get(ctx, a["key"])
			return map[string]any{"value": v, "set": ok}, err
		}),
	}}}).WithEngine(eng)
	if text, isErr := other.Call("peek", `{"key":"cfg/b"}`); !isErr && !strings.Contains(text, `"set":false`) {
		t.Errorf("another family read the kv keyspace: %s", text)
	}
}

// The memory methods answer in the SDK's own types, and their errors name
// the field.
func TestEngineMemories(t *testing.T) {
	eng := sdktest.StartEngine(t)
	e := eng.SDK()
	var got []sdk.Memory
	var links []sdk.Link
	f := sdktest.NewFamily(t, "mem", []sdk.Family{{Name: "mem", Tools: []sdk.Tool{
		tool("mem_run", nil, func(ctx context.Context, _ map[string]string) (any, error) {
			a, err := e.Store(ctx, sdk.Memory{Title: "Deploy", Content: "runs on Fridays", Namespace: "proj", Tier: "long",
				Tags: []string{"ops"}, Priority: 7, Metadata: map[string]any{"k": "v"}})
			if err != nil {
				return nil, err
			}
			b, err := e.Store(ctx, sdk.Memory{Title: "Runbook", Content: "how to deploy", Namespace: "proj"})
			if err != nil {
				return nil, err
			}
			if err := e.Link(ctx, b.ID, a.ID, "derived_from"); err != nil {
				return nil, err
			}
			if _, err := e.SetTags(ctx, a.ID, "ops", "weekly"); err != nil {
				return nil, err
			}
			if got, err = e.Get(ctx, a.ID[:8], b.ID); err != nil { // a short id resolves
				return nil, err
			}
			if links, err = e.LinksFrom(ctx, b.ID); err != nil {
				return nil, err
			}
			return e.List(ctx, sdk.Filter{Namespace: "proj", Tag: "weekly"})
		}),
		tool("mem_dup", nil, func(ctx context.Context, _ map[string]string) (any, error) {
			return e.Store(ctx, sdk.Memory{Title: "Deploy", Content: "again", Namespace: "proj"})
		}),
	}}}).WithEngine(eng)
	var listed []sdk.Memory
	f.OK("mem_run", `{}`, &listed)
	if len(got) != 2 || got[0].Title != "Deploy" || got[1].Title != "Runbook" {
		t.Fatalf("get = %+v", got)
	}
	a := got[0]
	if a.Priority != 7 || a.Tier != "long" || a.Metadata["k"] != "v" || strings.Join(a.Tags, ",") != "ops,weekly" || a.CreatedAt.IsZero() || a.CreatedBy == "" {
		t.Errorf("stored memory read back as %+v", a)
	}
	if len(links) != 1 || links[0].To != a.ID || links[0].Relation != "derived_from" || links[0].ObservedBy != "ai:test" {
		t.Errorf("links = %+v; want one derived_from, observed by the caller the host resolved", links)
	}
	if len(listed) != 1 || listed[0].ID != a.ID {
		t.Errorf("list tag weekly = %+v", listed)
	}
	f.Fails("mem_dup", `{}`, "Deploy")
}

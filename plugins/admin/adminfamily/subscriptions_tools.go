package adminfamily

import (
	"context"
	"strings"

	"github.com/ai-memory/ai-memory/sdk"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Webhook subscriptions are the engine's (it validates the URL against
// its SSRF guard, seals the secret and delivers); these tools only shape
// arguments and answers. The secret is sent once and never comes back.

const subscribeSchema = `{"type":"object","properties":{
"url":{"type":"string","description":"https URL"},
"events":{"type":"string","description":"* (default) or a comma list of memory_store, memory_update, memory_delete, memory_gc, memory_promote, memory_forget, memory_link_created, memory_link_invalidated, memory_consolidated, approval_requested"},
"secret":{"type":"string","description":"Signing key"},
"namespace_filter":{"type":"string","description":"Exact namespace"},
"agent_filter":{"type":"string","description":"Exact agent id"},
"include_content":{"type":"boolean","description":"Also send content"}
},"required":["url"]}`

// event_types is the reference's undocumented list form of events.
var subscribeArgs = sdk.ArgNames(subscribeSchema, "event_types")

const unsubscribeSchema = `{"type":"object","properties":{
"id":{"type":"string","description":"Subscription id"}
},"required":["id"]}`

var unsubscribeArgs = sdk.ArgNames(unsubscribeSchema)

// subscriptionTools: memory_subscribe, memory_unsubscribe (governance family).
func (s *service) subscriptionTools() []sdk.Tool {
	return []sdk.Tool{
		{Name: "memory_subscribe", Description: "Webhook for memory events.",
			Schema: sdk.Schema(subscribeSchema), Hints: sdk.Hints{Destructive: sdk.Bool(false), OpenWorld: sdk.Bool(true)}, Handler: s.subscribe},
		{Name: "memory_unsubscribe", Description: "Remove your webhook.",
			Schema: sdk.Schema(unsubscribeSchema), Hints: sdk.Hints{Idempotent: sdk.Bool(true)}, Handler: s.unsubscribe},
	}
}

// subscribeResult is memory_subscribe's answer: never the secret.
type subscribeResult struct {
	ID              string `json:"id"`
	URL             string `json:"url"`
	Events          string `json:"events"`
	NamespaceFilter string `json:"namespace_filter,omitempty"`
	AgentFilter     string `json:"agent_filter,omitempty"`
	IncludeContent  bool   `json:"include_content,omitempty"`
	Signed          bool   `json:"signed"`
	CreatedBy       string `json:"created_by"`
}

func (s *service) subscribe(ctx context.Context, call sdk.Call) (any, error) {
	req, err := subscribeRequest(call)
	if err != nil {
		return nil, err
	}
	resp, err := s.eng.Subscribe(ctx, req)
	if err != nil {
		return nil, sdk.EngineError(err)
	}
	sub := resp.GetSubscription()
	return subscribeResult{
		ID: sub.GetId(), URL: sub.GetUrl(), Events: strings.Join(sub.GetEvents(), ","),
		NamespaceFilter: sub.GetNamespaceFilter(), AgentFilter: sub.GetAgentFilter(),
		IncludeContent: sub.GetIncludeContent(), Signed: sub.GetSigned(), CreatedBy: sub.GetCreatedBy(),
	}, nil
}

func subscribeRequest(call sdk.Call) (*aimemoryv1.SubscribeRequest, error) {
	a, err := sdk.ParseArgs(call.Arguments, subscribeArgs)
	if err != nil {
		return nil, err
	}
	url, err := a.Required("url")
	if err != nil {
		return nil, err
	}
	csv, err := a.Str("events", "")
	if err != nil {
		return nil, err
	}
	var events []string
	for _, e := range strings.Split(csv, ",") {
		if e = strings.TrimSpace(e); e != "" {
			events = append(events, e)
		}
	}
	if list, err := a.StringList("event_types"); err != nil {
		return nil, err
	} else if list != nil {
		events = list // the list form wins, as in the reference
	}
	secret, err := a.Str("secret", "")
	if err != nil {
		return nil, err
	}
	nsFilter, err := a.Str("namespace_filter", "")
	if err != nil {
		return nil, err
	}
	agentFilter, err := a.Str("agent_filter", "")
	if err != nil {
		return nil, err
	}
	content, err := a.Bool("include_content", false)
	if err != nil {
		return nil, err
	}
	// The engine owns the rules (URL guard, event names, filters), so one
	// answer holds for every caller of the API.
	return &aimemoryv1.SubscribeRequest{Url: url, Events: events, Secret: secret,
		NamespaceFilter: nsFilter, AgentFilter: agentFilter, IncludeContent: content}, nil
}

type unsubscribeResult struct {
	ID      string `json:"id"`
	Removed bool   `json:"removed"`
}

func (s *service) unsubscribe(ctx context.Context, call sdk.Call) (any, error) {
	a, err := sdk.ParseArgs(call.Arguments, unsubscribeArgs)
	if err != nil {
		return nil, err
	}
	id, err := a.Required("id")
	if err != nil {
		return nil, err
	}
	resp, err := s.eng.Unsubscribe(ctx, &aimemoryv1.UnsubscribeRequest{Id: id})
	if err != nil {
		return nil, sdk.EngineError(err)
	}
	return unsubscribeResult{ID: id, Removed: resp.GetRemoved()}, nil
}

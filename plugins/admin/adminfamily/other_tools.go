package adminfamily

import (
	"context"
	"strings"

	"github.com/ai-memory/ai-memory/sdk"
	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

const listSubscriptionsSchema = `{"type":"object","properties":{}}`

const notifySchema = `{"type":"object","properties":{
"target_agent_id":{"type":"string","description":"Recipient"},
"title":{"type":"string","description":"Subject"},
"payload":{"type":"string","description":"Text"},
"priority":{"type":"integer","description":"1-10, default 5"},
"tier":{"type":"string","description":"short, mid (default) or long"}
},"required":["target_agent_id","title","payload"]}`

var (
	listSubscriptionsArgs = sdk.ArgNames(listSubscriptionsSchema)
	notifyArgs            = sdk.ArgNames(notifySchema)
)

// otherTools: memory_list_subscriptions, memory_notify.
func (s *service) otherTools() []sdk.Tool {
	return []sdk.Tool{
		{Name: "memory_list_subscriptions", Description: "Your webhooks, with counts and dead letters.",
			Schema: sdk.Schema(listSubscriptionsSchema), Hints: sdk.ReadOnly, Handler: s.listSubscriptions},
		{Name: "memory_notify", Description: "Message another agent's inbox.",
			Schema: sdk.Schema(notifySchema), Hints: sdk.Hints{Destructive: sdk.Bool(false)}, Handler: s.notify},
	}
}

type deadLetterOut struct {
	Seq       uint64 `json:"seq"`
	Event     string `json:"event"`
	MemoryID  string `json:"memory_id"`
	Attempts  uint32 `json:"attempts"`
	LastError string `json:"last_error"`
	At        string `json:"at"`
}

type subscriptionOut struct {
	ID              string          `json:"id"`
	URL             string          `json:"url"`
	Events          string          `json:"events"`
	NamespaceFilter string          `json:"namespace_filter,omitempty"`
	AgentFilter     string          `json:"agent_filter,omitempty"`
	IncludeContent  bool            `json:"include_content,omitempty"`
	Signed          bool            `json:"signed"`
	CreatedAt       string          `json:"created_at"`
	DispatchCount   uint64          `json:"dispatch_count"`
	FailureCount    uint64          `json:"failure_count"`
	Pending         uint64          `json:"pending,omitempty"`
	DeadLetterCount uint64          `json:"dead_letter_count,omitempty"`
	DeadLetters     []deadLetterOut `json:"dead_letters,omitempty"`
}

type listSubscriptionsResult struct {
	Count         int               `json:"count"`
	Subscriptions []subscriptionOut `json:"subscriptions"`
}

func (s *service) listSubscriptions(ctx context.Context, call sdk.Call) (any, error) {
	if _, err := sdk.ParseArgs(call.Arguments, listSubscriptionsArgs); err != nil {
		return nil, err
	}
	resp, err := s.eng.ListSubscriptions(ctx, &aimemoryv1.ListSubscriptionsRequest{})
	if err != nil {
		return nil, sdk.EngineError(err)
	}
	out := listSubscriptionsResult{Subscriptions: []subscriptionOut{}}
	for _, sub := range resp.GetSubscriptions() {
		o := subscriptionOut{
			ID: sub.GetId(), URL: sub.GetUrl(), Events: strings.Join(sub.GetEvents(), ","),
			NamespaceFilter: sub.GetNamespaceFilter(), AgentFilter: sub.GetAgentFilter(), IncludeContent: sub.GetIncludeContent(),
			Signed: sub.GetSigned(), CreatedAt: record.FormatTime(sub.GetCreatedAt()),
			DispatchCount: sub.GetDispatchCount(), FailureCount: sub.GetFailureCount(), Pending: sub.GetPending(),
			DeadLetterCount: sub.GetDeadLetterCount(),
		}
		for _, d := range sub.GetDeadLetters() {
			o.DeadLetters = append(o.DeadLetters, deadLetterOut{Seq: d.GetSeq(), Event: d.GetEvent(), MemoryID: d.GetMemoryId(),
				Attempts: d.GetAttempts(), LastError: d.GetLastError(), At: record.FormatTime(d.GetAt())})
		}
		out.Subscriptions = append(out.Subscriptions, o)
	}
	out.Count = len(out.Subscriptions)
	return out, nil
}

type notifyResult struct {
	ID          string `json:"id"`
	From        string `json:"from"`
	To          string `json:"to"`
	Namespace   string `json:"namespace"`
	Title       string `json:"title,omitempty"` // only when a repeated title was numbered
	Tier        string `json:"tier"`
	DeliveredAt string `json:"delivered_at"`
}

// notify sends from the caller's identity: the engine stamps the sender
// from the signed call, never from an argument.
func (s *service) notify(ctx context.Context, call sdk.Call) (any, error) {
	a, err := sdk.ParseArgs(call.Arguments, notifyArgs)
	if err != nil {
		return nil, err
	}
	to, err := a.Required("target_agent_id")
	if err != nil {
		return nil, err
	}
	if err := record.ValidateRecipient("target_agent_id", to); err != nil {
		return nil, err
	}
	title, err := a.Required("title")
	if err != nil {
		return nil, err
	}
	if err := record.ValidateTitle(title); err != nil {
		return nil, err
	}
	payload, err := a.Required("payload")
	if err != nil {
		return nil, err
	}
	if err := record.ValidateContent(payload); err != nil {
		return nil, sdk.Errorf("payload: %s", strings.TrimPrefix(err.Error(), "content: "))
	}
	priority, err := a.Integer("priority", record.DefaultPriority, record.MinPriority, record.MaxPriority)
	if err != nil {
		return nil, err
	}
	tier, err := a.Str("tier", record.DefaultTier)
	if err != nil {
		return nil, err
	}
	if err := record.ValidateTier("tier", tier); err != nil {
		return nil, err
	}
	resp, err := s.eng.SendMessage(ctx, &aimemoryv1.SendMessageRequest{To: to, Title: title, Payload: payload, Priority: priority, Tier: tier})
	if err != nil {
		return nil, sdk.EngineError(err)
	}
	m := resp.GetMessage()
	out := notifyResult{ID: m.GetId(), From: m.GetCreatedBy(), To: to, Namespace: m.GetNamespace(), Tier: m.GetTier(),
		DeliveredAt: record.FormatTime(m.GetCreatedAt())}
	if m.GetTitle() != title {
		out.Title = m.GetTitle()
	}
	return out, nil
}

package metafamily

import (
	"context"

	"google.golang.org/grpc"

	"github.com/ai-memory/ai-memory/sdk/render"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Standard is a namespace standard session_start shows first.
type Standard = render.Standard

// StandardsSource gives the standards that apply to a namespace ("" =
// the global one), most general first: EngineStandards, the governance
// service's chain; noStandards (none) when a plugin is built without it.
type StandardsSource interface {
	Standards(ctx context.Context, namespace string) ([]Standard, error)
}

// InboxSource gives the caller's unread message count; known is false
// when there is no inbox to ask (noInbox, for a plugin built without one).
type InboxSource interface {
	Unread(ctx context.Context) (n int, known bool, err error)
}

type noStandards struct{}

func (noStandards) Standards(context.Context, string) ([]Standard, error) { return nil, nil }

type noInbox struct{}

func (noInbox) Unread(context.Context) (int, bool, error) { return 0, false, nil }

// EngineStandards reads the standards chain from the engine's governance
// service (the namespace's chain, "*" alone for no namespace), each
// standard memory once. Best effort, as recall's injection: a failed read
// gives none rather than failing the session's first call.
type EngineStandards struct {
	Eng interface {
		GetStandard(ctx context.Context, in *aimemoryv1.GetStandardRequest, opts ...grpc.CallOption) (*aimemoryv1.GetStandardResponse, error)
	}
}

func (e EngineStandards) Standards(ctx context.Context, ns string) ([]Standard, error) {
	if ns == "" {
		ns = "*"
	}
	resp, err := e.Eng.GetStandard(ctx, &aimemoryv1.GetStandardRequest{Namespace: ns, Inherit: true})
	if err != nil {
		return nil, nil
	}
	var out []Standard
	seen := map[string]bool{}
	for _, l := range resp.GetLevels() {
		m := l.GetMemory()
		if m == nil || seen[m.GetId()] {
			continue
		}
		seen[m.GetId()] = true
		out = append(out, Standard{Namespace: l.GetStandard().GetNamespace(), ID: m.GetId(), Title: m.GetTitle(), Content: m.GetContent()})
	}
	return out, nil
}

// EngineInbox counts the caller's unread messages with the engine's inbox
// RPC (the caller's own inbox only, by the signed identity). Best effort:
// a failed read leaves the count out rather than failing the call.
type EngineInbox struct {
	Eng interface {
		ListInbox(ctx context.Context, in *aimemoryv1.ListInboxRequest, opts ...grpc.CallOption) (*aimemoryv1.ListInboxResponse, error)
	}
}

func (e EngineInbox) Unread(ctx context.Context) (int, bool, error) {
	resp, err := e.Eng.ListInbox(ctx, &aimemoryv1.ListInboxRequest{UnreadOnly: true, Limit: 1})
	if err != nil {
		return 0, false, nil
	}
	return int(resp.GetUnread()), true, nil
}

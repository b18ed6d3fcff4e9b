package metafamily

import (
	"context"

	"google.golang.org/grpc"

	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// Standard is a namespace standard session_start shows first.
type Standard struct {
	Namespace string `json:"namespace"`
	ID        string `json:"id"`
	Title     string `json:"title"`
	Content   string `json:"content"`
}

// StandardsSource gives the standards that apply to a namespace ("" =
// the global one), most general first: EngineStandards, the governance
// service's chain; noStandards (none) when a plugin is built without it.
type StandardsSource interface {
	Standards(ctx context.Context, namespace string) ([]Standard, error)
}

// InboxSource gives the caller's unread message count; known is false
// when there is no inbox to ask. The messaging branch's inbox RPC fills
// it; until then noInbox knows nothing, and the result has no unread.
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

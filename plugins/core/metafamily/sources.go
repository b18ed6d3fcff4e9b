package metafamily

import "context"

// Standard is a namespace standard session_start shows first.
type Standard struct {
	Namespace string `json:"namespace"`
	ID        string `json:"id"`
	Title     string `json:"title"`
	Content   string `json:"content"`
}

// StandardsSource gives the standards that apply to a namespace ("" =
// the global one), most general first. The governance branch's namespace
// standards fill it; until then noStandards returns none.
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

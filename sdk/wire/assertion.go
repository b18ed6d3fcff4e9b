package wire

import (
	"context"

	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// The host signs an assertion for every tool call (who the call is for,
// which family runs it, and which plugin process). The Family server puts
// it into the context a tool handler receives, and the engine client below
// forwards it on every engine call made with that context. The engine
// accepts it only from this process and only while the call runs: engine
// calls made with a context that did not come from a tool call
// (context.Background() in a goroutine) carry none, calls made after the
// handler returned carry a dead one, and both are refused. Pass the
// handler's ctx along, and finish before returning.

type assertionKey struct{}

func withAssertion(ctx context.Context, token []byte) context.Context {
	if len(token) == 0 {
		return ctx
	}
	return context.WithValue(ctx, assertionKey{}, string(token))
}

// CallAssertion is the assertion of the tool call ctx came from, or "".
func CallAssertion(ctx context.Context) string {
	t, _ := ctx.Value(assertionKey{}).(string)
	return t
}

// forwardAssertion is the engine client's per-call credential.
type forwardAssertion struct{}

func (forwardAssertion) GetRequestMetadata(ctx context.Context, _ ...string) (map[string]string, error) {
	if t := CallAssertion(ctx); t != "" {
		return map[string]string{aimemoryv1.AssertionMetadataKey: t}, nil
	}
	return nil, nil
}

// RequireTransportSecurity is false: the engine is a same-user unix socket.
func (forwardAssertion) RequireTransportSecurity() bool { return false }

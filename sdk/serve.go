package sdk

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/ai-memory/ai-memory/sdk/internal/bridge"
	"github.com/ai-memory/ai-memory/sdk/wire"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Serve runs a family plugin binary until its host goes away; it never
// returns normally. Logs go to stderr, which the host relays. It sets no
// process-wide setting of its own (GOMAXPROCS, gRPC's buffer pool): a
// plugin's process settings are its author's.
func Serve(name, version string, families ...Family) {
	srv, err := newServer(name, version, families)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
	wire.Serve(name, srv)
}

// Main is Serve for families that reach memory: it connects to the engine
// once (the connection is lazy: a missing engine shows up on the first
// call), builds each family on that one Engine, and serves them all.
//
//	func main() { sdk.Main("ai-memory-notes", "0.1.0", notes.Families) }
func Main(name, version string, build ...func(*Engine) []Family) {
	eng, err := Connect()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
	var families []Family
	for _, b := range build {
		families = append(families, b(eng)...)
	}
	Serve(name, version, families...)
}

// newServer is the Family server of families: each tool's schema is read
// once here, for Call.Args.
func newServer(name, version string, families []Family) (aimemoryv1.FamilyServer, error) {
	wf := make([]wire.Family, 0, len(families))
	for _, f := range families {
		w := wire.Family{Name: f.Name}
		for _, t := range f.Tools {
			w.Tools = append(w.Tools, wire.Tool{Definition: t.definition(), Run: t.run(ArgNames(string(t.Schema)))})
		}
		wf = append(wf, w)
	}
	return wire.NewFamilyServer(name, version, wf, Logger().With("plugin", name))
}

// run adapts the tool's Handler to the protocol: its value goes out as
// compact JSON (a Text as it is), its error as the isError text.
func (t Tool) run(argNames []string) func(context.Context, json.RawMessage, *aimemoryv1.CallContext) ([]byte, error) {
	return func(ctx context.Context, args json.RawMessage, cc *aimemoryv1.CallContext) ([]byte, error) {
		out, err := t.Handler(ctx, Call{Tool: t.Name, Arguments: args, AgentID: cc.GetAgentId(), SessionID: cc.GetSessionId(),
			ClientName: cc.GetClientName(), defaultNamespace: cc.GetDefaultNamespace(), argNames: argNames})
		if err != nil {
			return nil, err
		}
		if text, ok := out.(Text); ok {
			return []byte(text), nil
		}
		text, err := MarshalCompact(out)
		if err != nil {
			return nil, fmt.Errorf("could not encode result: %w", err)
		}
		return text, nil
	}
}

func init() {
	bridge.Server = func(name, version string, families any) (aimemoryv1.FamilyServer, error) {
		return newServer(name, version, families.([]Family))
	}
	bridge.Engine = func(w wire.Engine) any { return &Engine{w: w} }
}

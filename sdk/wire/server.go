package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Tool is one tool as the protocol carries it: its definition, and Run,
// which answers a call with the result text or an error whose message is
// the isError text. The sdk package builds these from its own Tool.
type Tool struct {
	Definition *aimemoryv1.ToolDefinition
	Run        func(ctx context.Context, args json.RawMessage, cc *aimemoryv1.CallContext) ([]byte, error)
}

// Family is a named group of Tools.
type Family struct {
	Name  string
	Tools []Tool
}

// familyServer implements aimemoryv1.FamilyServer over declared families.
type familyServer struct {
	aimemoryv1.UnimplementedFamilyServer
	name     string
	version  string
	families []Family
	tools    map[string]Tool
	log      *slog.Logger
}

// NewFamilyServer builds the Family service for a plugin's families. It is
// what Serve runs; tests use it in-process.
func NewFamilyServer(name, version string, families []Family, log *slog.Logger) (aimemoryv1.FamilyServer, error) {
	s := &familyServer{name: name, version: version, families: families, tools: map[string]Tool{}, log: log}
	for _, f := range families {
		for _, t := range f.Tools {
			name := t.Definition.GetName()
			if _, dup := s.tools[name]; dup {
				return nil, fmt.Errorf("tool %q declared twice", name)
			}
			if !json.Valid(t.Definition.GetInputSchemaJson()) {
				return nil, fmt.Errorf("tool %q: schema is not valid JSON", name)
			}
			s.tools[name] = t
		}
	}
	return s, nil
}

func (s *familyServer) Describe(context.Context, *aimemoryv1.DescribeRequest) (*aimemoryv1.DescribeResponse, error) {
	resp := &aimemoryv1.DescribeResponse{PluginName: s.name, PluginVersion: s.version, ProtocolVersion: ProtocolVersion, ProtocolMinor: ProtocolMinor, CallStream: true}
	for _, f := range s.families {
		fd := &aimemoryv1.FamilyDescription{Name: f.Name}
		for _, t := range f.Tools {
			fd.Tools = append(fd.Tools, t.Definition)
		}
		resp.Families = append(resp.Families, fd)
	}
	return resp, nil
}

// Call runs one tool. The handler's context is the call's (cancel.go): a
// cancel stops it only until it hands a write to the engine.
func (s *familyServer) Call(ctx context.Context, req *aimemoryv1.CallRequest) (*aimemoryv1.CallResponse, error) {
	call := newInFlight(ctx, 0)
	defer call.release()
	return s.run(call.ctx, req), nil
}

// run answers req; every failure is a result, never a transport error.
func (s *familyServer) run(ctx context.Context, req *aimemoryv1.CallRequest) (resp *aimemoryv1.CallResponse) {
	t, ok := s.tools[req.GetTool()]
	if !ok {
		return &aimemoryv1.CallResponse{IsError: true, Text: fmt.Appendf(nil, "tool %q is not served by plugin %s", req.GetTool(), s.name)}
	}
	// No input may crash the plugin: a panicking handler is an error result.
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("tool panicked", "tool", req.GetTool(), "panic", r, "stack", string(debug.Stack()))
			resp = &aimemoryv1.CallResponse{IsError: true, Text: fmt.Appendf(nil, "internal error in %s; the call changed nothing it had not committed", req.GetTool())}
		}
	}()
	args := json.RawMessage(req.GetArgumentsJson())
	if len(bytes.TrimSpace(args)) == 0 || bytes.Equal(bytes.TrimSpace(args), []byte("null")) {
		args = json.RawMessage("{}")
	}
	cc := req.GetContext()
	if cc == nil {
		cc = &aimemoryv1.CallContext{}
	}
	ctx = withAssertion(ctx, cc.GetAssertion())
	text, err := t.Run(ctx, args, cc)
	if err != nil {
		return &aimemoryv1.CallResponse{IsError: true, Text: []byte(err.Error())}
	}
	return &aimemoryv1.CallResponse{Text: text}
}

// CallStream answers the requests of one stream in order, each as Call
// would; the deadline rides in each request. A reader goroutine takes the
// requests, so a cancel request reaches the call in flight (cancel.go);
// the stream ending cancels it too.
func (s *familyServer) CallStream(stream aimemoryv1.Family_CallStreamServer) error {
	type next struct {
		req  *aimemoryv1.CallRequest
		call *inFlight
	}
	calls := make(chan next)
	go func() {
		defer close(calls)
		var current *inFlight
		for {
			req, err := stream.Recv()
			if err != nil {
				return // the host closed the stream, or cancelled it
			}
			if req.GetCancel() {
				if current != nil {
					current.cancel()
				}
				continue
			}
			// Made here, before the next request is read, so that a cancel
			// read after it finds it.
			current = newInFlight(stream.Context(), time.Duration(req.GetTimeoutMicros())*time.Microsecond)
			select {
			case calls <- next{req, current}:
			case <-stream.Context().Done():
				current.release()
				return
			}
		}
	}()
	for c := range calls {
		resp := s.run(c.call.ctx, c.req)
		c.call.release()
		if err := stream.Send(resp); err != nil {
			return err
		}
	}
	return nil
}

package sdk

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

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
			if _, dup := s.tools[t.Name]; dup {
				return nil, fmt.Errorf("tool %q declared twice", t.Name)
			}
			if !json.Valid(t.Schema) {
				return nil, fmt.Errorf("tool %q: schema is not valid JSON", t.Name)
			}
			s.tools[t.Name] = t
		}
	}
	return s, nil
}

func (s *familyServer) Describe(context.Context, *aimemoryv1.DescribeRequest) (*aimemoryv1.DescribeResponse, error) {
	resp := &aimemoryv1.DescribeResponse{PluginName: s.name, PluginVersion: s.version, ProtocolVersion: ProtocolVersion, ProtocolMinor: ProtocolMinor, CallStream: true}
	for _, f := range s.families {
		fd := &aimemoryv1.FamilyDescription{Name: f.Name}
		for _, t := range f.Tools {
			fd.Tools = append(fd.Tools, t.definition())
		}
		resp.Families = append(resp.Families, fd)
	}
	return resp, nil
}

func (s *familyServer) Call(ctx context.Context, req *aimemoryv1.CallRequest) (resp *aimemoryv1.CallResponse, err error) {
	t, ok := s.tools[req.GetTool()]
	if !ok {
		return &aimemoryv1.CallResponse{IsError: true, Text: fmt.Appendf(nil, "tool %q is not served by plugin %s", req.GetTool(), s.name)}, nil
	}
	// No input may crash the plugin: a panicking handler is an error result.
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("tool panicked", "tool", req.GetTool(), "panic", r, "stack", string(debug.Stack()))
			resp, err = &aimemoryv1.CallResponse{IsError: true, Text: fmt.Appendf(nil, "internal error in %s; the call changed nothing it had not committed", req.GetTool())}, nil
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
	out, herr := t.Handler(ctx, Call{Tool: t.Name, Arguments: args, Context: cc})
	if herr != nil {
		return &aimemoryv1.CallResponse{IsError: true, Text: []byte(herr.Error())}, nil
	}
	if t, ok := out.(Text); ok {
		return &aimemoryv1.CallResponse{Text: []byte(t)}, nil
	}
	text, merr := MarshalCompact(out)
	if merr != nil {
		return &aimemoryv1.CallResponse{IsError: true, Text: []byte("could not encode result: " + merr.Error())}, nil
	}
	return &aimemoryv1.CallResponse{Text: text}, nil
}

// CallStream answers the requests of one stream in order, each as Call
// would. The stream's context is the call's (the host cancels the stream
// to cancel the call), and the deadline rides in each request.
func (s *familyServer) CallStream(stream aimemoryv1.Family_CallStreamServer) error {
	for {
		req, err := stream.Recv()
		if err != nil {
			return nil // the host closed the stream, or cancelled it
		}
		ctx, cancel := stream.Context(), context.CancelFunc(func() {})
		if t := req.GetTimeoutMicros(); t > 0 {
			ctx, cancel = context.WithTimeout(ctx, time.Duration(t)*time.Microsecond)
		}
		resp, _ := s.Call(ctx, req) // Call's errors are results
		cancel()
		if err := stream.Send(resp); err != nil {
			return err
		}
	}
}

// MarshalCompact encodes v as compact JSON without HTML escaping, which
// would cost tokens and mangle text such as <name>.
func MarshalCompact(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

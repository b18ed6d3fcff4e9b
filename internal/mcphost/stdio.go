package mcphost

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// ServeStdio speaks MCP on in/out until in closes. Calls of tools whose
// family is not loaded are answered here with an isError result that says
// how to load it: mcp-go would only say "not found" (a protocol error many
// clients hide from the model). Everything else goes to mcp-go untouched.
func (h *Host) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	w := &lineWriter{w: out}
	pr, pw := io.Pipe()
	stdio := server.NewStdioServer(h.srv)
	stdio.SetErrorLogger(log.New(logWriter{h}, "", 0))
	done := make(chan error, 1)
	go func() { done <- stdio.Listen(ctx, pr, w) }()

	r := bufio.NewReaderSize(in, 1<<16)
	for {
		line, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			if resp := h.intercept(ctx, line); resp != nil {
				if _, werr := w.Write(resp); werr != nil {
					err = werr
				}
			} else {
				if line[len(line)-1] != '\n' {
					line = append(line, '\n')
				}
				if _, werr := pw.Write(line); werr != nil {
					err = werr
				}
			}
		}
		if err != nil {
			pw.Close()
			lerr := <-done
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) {
				err = nil
			}
			return errors.Join(err, ignoreCanceled(lerr))
		}
	}
}

func ignoreCanceled(err error) error {
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// intercept returns a complete response line for a tools/call of an
// unloaded family's tool, or nil to let mcp-go handle the message.
func (h *Host) intercept(ctx context.Context, line []byte) []byte {
	if !bytes.Contains(line, []byte(`"tools/call"`)) {
		return nil
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &msg) != nil || msg.Method != "tools/call" || len(msg.ID) == 0 || string(msg.ID) == "null" {
		return nil
	}
	text, ok := h.unloadedToolMessage(ctx, msg.Params.Name)
	if !ok {
		return nil
	}
	resp, err := json.Marshal(mcp.JSONRPCResponse{
		JSONRPC: mcp.JSONRPC_VERSION,
		ID:      mcp.NewRequestId(json.RawMessage(msg.ID)),
		Result:  mcp.NewToolResultError(text),
	})
	if err != nil {
		return nil
	}
	return append(resp, '\n')
}

// lineWriter serialises whole-line writes from mcp-go and the interceptor.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// logWriter sends mcp-go's log lines to the host's stderr logger.
type logWriter struct{ h *Host }

func (l logWriter) Write(p []byte) (int, error) {
	l.h.log.Warn("mcp", "msg", string(bytes.TrimSpace(p)))
	return len(p), nil
}

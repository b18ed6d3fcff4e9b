// Package harness runs real agent harnesses (Claude Code, Codex CLI, Gemini
// CLI, pinned in package.json) against a scripted mock of their model
// provider's HTTP API on loopback, with ai-memory installed as their MCP
// server, and reads what each request carried. The e2e suite
// (e2e/realharness_test.go) and `make harness-bench` use it.
package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Step is one scripted model turn: a call of a tool (a harness tool whose
// name ends with Tool; "=" first means exactly that name) or a text answer.
type Step struct {
	Tool string         `json:"tool,omitempty"`
	Args map[string]any `json:"args,omitempty"`
	Text string         `json:"text,omitempty"`
}

// Call and Say make steps.
func Call(tool string, args map[string]any) Step { return Step{Tool: tool, Args: args} }
func Say(text string) Step                       { return Step{Text: text} }

// Request is one request the mock received and what it answered.
type Request struct {
	Seq     int
	Path    string
	Body    []byte
	Main    bool   // answered from a script (not a title, count or side request)
	Step    int    // the script step answered
	Reply   string // the tool called, or "text"
	Offered bool   // the tool called was in the request's tool list
}

// Mock is a scripted stand-in for the Anthropic Messages, OpenAI Responses
// and Gemini APIs. A user message carrying "SCRIPT:<key>" selects
// Scripts[key]; the step answered is the number of model turns after that
// message, so a retried request gets the same answer.
type Mock struct {
	URL     string
	Latency time.Duration // each scripted answer is held this long (a model's think time)

	srv     *http.Server
	mu      sync.Mutex
	scripts map[string][]Step
	reqs    []Request
}

var marker = regexp.MustCompile(`SCRIPT:([A-Za-z0-9_.-]+)`)

// StartMock serves the mock on a loopback port until Close.
func StartMock(scripts map[string][]Step) (*Mock, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	m := &Mock{URL: "http://" + l.Addr().String(), scripts: scripts}
	m.srv = &http.Server{Handler: m, ReadHeaderTimeout: 10 * time.Second}
	go m.srv.Serve(l)
	return m, nil
}

// Close stops the mock.
func (m *Mock) Close() error { return m.srv.Close() }

// Requests returns the requests received so far.
func (m *Mock) Requests() []Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Request(nil), m.reqs...)
}

// answer is what a route replies: a JSON body or SSE events.
type answer struct {
	json  any
	sse   []string
	req   Request
	throt bool // scripted: held for Latency
}

func (m *Mock) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var buf bytes.Buffer
	buf.ReadFrom(http.MaxBytesReader(w, r.Body, 64<<20))
	var a answer
	var body map[string]any
	if json.Unmarshal(buf.Bytes(), &body) != nil || r.Method != http.MethodPost {
		a = answer{json: map[string]any{"error": map[string]any{"message": "mock: not found"}}}
		w.WriteHeader(http.StatusNotFound)
	} else {
		a = m.route(r.URL.Path, body)
	}
	m.mu.Lock()
	a.req.Seq, a.req.Path, a.req.Body = len(m.reqs)+1, r.URL.Path, buf.Bytes()
	m.reqs = append(m.reqs, a.req)
	m.mu.Unlock()
	if a.throt && m.Latency > 0 {
		select {
		case <-time.After(m.Latency):
		case <-r.Context().Done():
			return
		}
	}
	if a.sse != nil {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		for _, e := range a.sse {
			w.Write([]byte(e))
		}
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(a.json)
}

var geminiPath = regexp.MustCompile(`/models/([^/:]+):(generateContent|streamGenerateContent|countTokens)$`)

func (m *Mock) route(path string, body map[string]any) answer {
	switch {
	case strings.HasSuffix(path, "/messages/count_tokens"):
		return answer{json: map[string]any{"input_tokens": 1000}}
	case strings.HasSuffix(path, "/messages"):
		return m.anthropic(body)
	case strings.HasSuffix(path, "/responses"):
		return m.responses(body)
	}
	if g := geminiPath.FindStringSubmatch(path); g != nil {
		if g[2] == "countTokens" {
			return answer{json: map[string]any{"totalTokens": 1000}}
		}
		return m.gemini(g[1], g[2] == "streamGenerateContent", body)
	}
	return answer{json: map[string]any{"error": map[string]any{"message": "mock: no route for " + path}}}
}

// scripted finds where a conversation is in its script: the key of the
// last user message carrying a marker, and the model turns after it.
func scripted(msgs []any, user func(map[string]any) (string, bool), model func(map[string]any) bool) (key string, turns int) {
	for i := len(msgs) - 1; i >= 0; i-- {
		msg := obj(msgs[i])
		if text, ok := user(msg); ok {
			if k := marker.FindStringSubmatch(text); k != nil {
				return k[1], turns
			}
		}
		if model(msg) {
			turns++
		}
	}
	return "", 0
}

// step returns the script's step at turns (past its end, a text answer).
func (m *Mock) step(key string, turns int) Step {
	m.mu.Lock()
	steps := m.scripts[key]
	m.mu.Unlock()
	if turns < len(steps) {
		return steps[turns]
	}
	return Say("mock: script " + key + " done")
}

// resolve names the harness tool a step calls among the offered names;
// a tool not offered is called anyway, under the prefix the harness gives
// ai-memory's other tools (so a harness that checks its live list may run it).
func resolve(step Step, names []string) (string, bool) {
	if exact, ok := strings.CutPrefix(step.Tool, "="); ok {
		return exact, contains(names, exact)
	}
	for _, n := range names {
		// mcp__ai-memory__memory_x, mcp_ai-memory_memory_x, or plain in a namespace
		if prefix, ok := strings.CutSuffix(n, step.Tool); ok && (prefix == "" || strings.ContainsAny(prefix[len(prefix)-1:], "_:.-")) {
			return n, true
		}
	}
	for _, n := range names {
		for _, sib := range []string{"memory_store", "memory_recall", "memory_capabilities"} {
			if strings.HasSuffix(n, sib) {
				return strings.TrimSuffix(n, sib) + step.Tool, false
			}
		}
	}
	return step.Tool, false
}

func contains(names []string, n string) bool {
	for _, x := range names {
		if x == n {
			return true
		}
	}
	return false
}

// textOf joins the text of a message's content (a string or blocks).
func textOf(content any) string {
	switch c := content.(type) {
	case string:
		return c
	case []any:
		var sb strings.Builder
		for _, b := range c {
			switch x := b.(type) {
			case string:
				sb.WriteString(x)
			case map[string]any:
				s, _ := x["text"].(string)
				sb.WriteString(s)
			}
			sb.WriteByte('\n')
		}
		return sb.String()
	}
	return ""
}

func randID(prefix string) string { return fmt.Sprintf("%s%x", prefix, time.Now().UnixNano()) }

func sse(event string, data any) string {
	b, _ := json.Marshal(data)
	if event == "" {
		return "data: " + string(b) + "\r\n\r\n"
	}
	return "event: " + event + "\ndata: " + string(b) + "\n\n"
}

// ---- Anthropic Messages ---------------------------------------------------

func (m *Mock) anthropic(body map[string]any) answer {
	var names []string
	for _, t := range list(body["tools"]) {
		if n, _ := obj(t)["name"].(string); n != "" {
			names = append(names, n)
		}
	}
	msgs := list(body["messages"])
	key, turns := scripted(msgs, func(msg map[string]any) (string, bool) {
		return textOf(msg["content"]), msg["role"] == "user"
	}, func(msg map[string]any) bool { return msg["role"] == "assistant" })
	model, _ := body["model"].(string)
	stream, _ := body["stream"].(bool)
	if len(names) == 0 || key == "" { // a title or side request
		return anthropicReply(model, stream, []map[string]any{{"type": "text", "text": `{"title":"Mock session","isNewTopic":false}`}}, "end_turn", Request{Reply: "text"})
	}
	st := m.step(key, turns)
	req := Request{Main: true, Step: turns}
	if st.Tool == "" {
		req.Reply = "text"
		return withThrottle(anthropicReply(model, stream, []map[string]any{{"type": "text", "text": st.Text}}, "end_turn", req))
	}
	name, offered := resolve(st, names)
	req.Reply, req.Offered = name, offered
	args := st.Args
	if args == nil {
		args = map[string]any{}
	}
	return withThrottle(anthropicReply(model, stream, []map[string]any{{"type": "tool_use", "id": randID("toolu_mock"), "name": name, "input": args}}, "tool_use", req))
}

func withThrottle(a answer) answer { a.throt = true; return a }

func anthropicReply(model string, stream bool, blocks []map[string]any, stop string, req Request) answer {
	id := randID("msg_mock")
	usage := map[string]any{"input_tokens": 1000, "output_tokens": 20, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	if !stream {
		return answer{json: map[string]any{"id": id, "type": "message", "role": "assistant", "model": model, "content": blocks,
			"stop_reason": stop, "stop_sequence": nil, "usage": usage}, req: req}
	}
	ev := []string{sse("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": id, "type": "message",
		"role": "assistant", "model": model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage}})}
	for i, b := range blocks {
		if b["type"] == "text" {
			ev = append(ev, sse("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}}),
				sse("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": b["text"]}}))
		} else {
			in, _ := json.Marshal(b["input"])
			ev = append(ev, sse("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}}),
				sse("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(in)}}))
		}
		ev = append(ev, sse("content_block_stop", map[string]any{"type": "content_block_stop", "index": i}))
	}
	ev = append(ev, sse("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 20}}),
		sse("message_stop", map[string]any{"type": "message_stop"}))
	return answer{sse: ev, req: req}
}

// ---- OpenAI Responses (Codex) ---------------------------------------------

func (m *Mock) responses(body map[string]any) answer {
	// Codex groups an MCP server's tools in a namespace; a call names both.
	ns := map[string]string{}
	var names []string
	tools := list(body["tools"])
	input := list(body["input"])
	for _, it := range input {
		if t := obj(it)["type"]; t == "additional_tools" || t == "tool_search_output" {
			tools = append(tools, list(obj(it)["tools"])...)
		}
	}
	for _, t := range tools {
		tool := obj(t)
		switch {
		case tool["type"] == "namespace":
			for _, u := range list(tool["tools"]) {
				n, _ := obj(u)["name"].(string)
				names = append(names, n)
				ns[n], _ = tool["name"].(string)
			}
		case tool["type"] == "tool_search":
			names = append(names, "tool_search")
		default:
			if n, _ := tool["name"].(string); n != "" {
				names = append(names, n)
			}
		}
	}
	key, turns := scripted(input, func(it map[string]any) (string, bool) {
		return textOf(it["content"]), it["role"] == "user"
	}, func(it map[string]any) bool {
		t := it["type"]
		return t == "function_call" || t == "custom_tool_call" || t == "tool_search_call" || t == "message" && it["role"] == "assistant"
	})
	model, _ := body["model"].(string)
	if len(names) == 0 || key == "" {
		return responsesReply(model, map[string]any{"type": "message", "role": "assistant", "content": []any{map[string]any{"type": "output_text", "text": "ok", "annotations": []any{}}}}, Request{Reply: "text"})
	}
	st := m.step(key, turns)
	req := Request{Main: true, Step: turns}
	if st.Tool == "" {
		req.Reply = "text"
		return withThrottle(responsesReply(model, map[string]any{"type": "message", "role": "assistant", "content": []any{map[string]any{"type": "output_text", "text": st.Text, "annotations": []any{}}}}, req))
	}
	if st.Tool == "=tool_search" {
		req.Reply, req.Offered = "tool_search", contains(names, "tool_search")
		return withThrottle(responsesReply(model, map[string]any{"type": "tool_search_call", "call_id": randID("call_"), "execution": "client", "arguments": st.Args, "status": "completed"}, req))
	}
	name, offered := resolve(st, names)
	space := ns[name]
	if space == "" {
		for n, s := range ns {
			if strings.HasSuffix(n, "memory_capabilities") {
				space = s
			}
		}
	}
	req.Reply, req.Offered = name, offered
	args, _ := json.Marshal(st.Args)
	if st.Args == nil {
		args = []byte("{}")
	}
	item := map[string]any{"type": "function_call", "status": "completed", "call_id": randID("call_"), "name": name, "arguments": string(args)}
	if space != "" {
		item["namespace"] = space
	}
	return withThrottle(responsesReply(model, item, req))
}

func responsesReply(model string, item map[string]any, req Request) answer {
	item["id"] = randID("item_")
	base := map[string]any{"id": randID("resp_mock"), "object": "response", "created_at": time.Now().Unix(), "model": model, "status": "in_progress", "output": []any{}}
	done := map[string]any{}
	for k, v := range base {
		done[k] = v
	}
	done["status"], done["output"] = "completed", []any{item}
	done["usage"] = map[string]any{"input_tokens": 1000, "input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens": 20,
		"output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 1020}
	n := 0
	ev := func(typ string, fields map[string]any) string {
		fields["type"], fields["sequence_number"] = typ, n
		n++
		return sse(typ, fields)
	}
	out := []string{
		ev("response.created", map[string]any{"response": base}),
		ev("response.output_item.added", map[string]any{"output_index": 0, "item": item}),
		ev("response.output_item.done", map[string]any{"output_index": 0, "item": item}),
		ev("response.completed", map[string]any{"response": done}),
	}
	return answer{sse: out, req: req}
}

// ---- Gemini ---------------------------------------------------------------

func (m *Mock) gemini(model string, stream bool, body map[string]any) answer {
	var names []string
	for _, t := range list(body["tools"]) {
		for _, f := range list(obj(t)["functionDeclarations"]) {
			if n, _ := obj(f)["name"].(string); n != "" {
				names = append(names, n)
			}
		}
	}
	key, turns := scripted(list(body["contents"]), func(c map[string]any) (string, bool) {
		return textOf(c["parts"]), c["role"] == "user"
	}, func(c map[string]any) bool { return c["role"] == "model" })
	if len(names) == 0 || key == "" {
		// Side requests (next speaker, routing) ask for JSON of a schema.
		text := "ok"
		gc := obj(body["generationConfig"])
		if schema := obj(gc["responseJsonSchema"]); schema != nil || gc["responseMimeType"] == "application/json" {
			b, _ := json.Marshal(fakeJSON(schema))
			text = string(b)
		}
		return geminiReply(model, stream, []any{map[string]any{"text": text}}, Request{Reply: "text"})
	}
	st := m.step(key, turns)
	req := Request{Main: true, Step: turns}
	if st.Tool == "" {
		req.Reply = "text"
		return withThrottle(geminiReply(model, stream, []any{map[string]any{"text": st.Text}}, req))
	}
	name, offered := resolve(st, names)
	req.Reply, req.Offered = name, offered
	args := st.Args
	if args == nil {
		args = map[string]any{}
	}
	return withThrottle(geminiReply(model, stream, []any{map[string]any{"functionCall": map[string]any{"name": name, "args": args}}}, req))
}

func geminiReply(model string, stream bool, parts []any, req Request) answer {
	resp := map[string]any{"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": 1000, "candidatesTokenCount": 20, "totalTokenCount": 1020}, "modelVersion": model}
	if stream {
		return answer{sse: []string{sse("", resp)}, req: req}
	}
	return answer{json: resp, req: req}
}

// fakeJSON fills a side request's response schema (next speaker: the user).
func fakeJSON(schema map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range obj(schema["properties"]) {
		p := obj(v)
		switch t := strings.ToLower(fmt.Sprint(p["type"])); {
		case k == "next_speaker":
			out[k] = "user"
		case p["enum"] != nil:
			out[k] = list(p["enum"])[0]
		case t == "boolean":
			out[k] = false
		case t == "number" || t == "integer":
			out[k] = 0
		case t == "array":
			out[k] = []any{}
		case t == "object":
			out[k] = fakeJSON(p)
		default:
			out[k] = "mock"
		}
	}
	return out
}

func obj(v any) map[string]any { m, _ := v.(map[string]any); return m }
func list(v any) []any         { l, _ := v.([]any); return l }

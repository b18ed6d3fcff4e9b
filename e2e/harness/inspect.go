package harness

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/ai-memory/ai-memory/internal/catalog"
	"github.com/ai-memory/ai-memory/sdk"
)

// Seen is what one request body carries of ai-memory.
type Seen struct {
	Tools        []string          // ai-memory tools offered in full, by their contract names (memory_x)
	Defs         []json.RawMessage // their definitions as sent (Codex: the server's namespace object)
	Instructions bool              // the server's instructions are in the request
	Results      []Result          // ai-memory tool results in the history, oldest first
}

// Result is one ai-memory tool result in a request's history.
type Result struct {
	Tool    string // memory_x
	Text    string
	IsError bool
}

// DefBytes and DefTokens are the size of the definitions as sent: bytes,
// and cl100k tokens counted per definition (the instructions apart).
func (s Seen) DefBytes() (n int) {
	for _, d := range s.Defs {
		n += len(d)
	}
	return n
}

func (s Seen) DefTokens() (n int) {
	for _, d := range s.Defs {
		n += sdk.CountTokens(string(d))
	}
	return n
}

// InstructionTokens is the cl100k size of the server's instructions.
func InstructionTokens() int { return sdk.CountTokens(catalog.Instructions) }

// Offers reports whether the request offers tool (memory_x) in full.
func (s Seen) Offers(tool string) bool { return contains(s.Tools, tool) }

// ResultOf returns the latest result of tool in the history.
func (s Seen) ResultOf(tool string) (Result, bool) {
	for i := len(s.Results) - 1; i >= 0; i-- {
		if s.Results[i].Tool == tool {
			return s.Results[i], true
		}
	}
	return Result{}, false
}

// memoryName maps a harness's name of an ai-memory tool to the contract
// name: mcp__ai-memory__memory_x (Claude Code), mcp_ai-memory_memory_x
// (Gemini CLI); Codex names the tool plainly inside its namespace.
func memoryName(name string) (string, bool) {
	for _, p := range []string{"mcp__ai-memory__", "mcp_ai-memory_"} {
		if t, ok := strings.CutPrefix(name, p); ok {
			return t, true
		}
	}
	return "", false
}

const codexNamespace = "mcp__ai_memory"

// Inspect reads a request body of any of the three providers.
func Inspect(body []byte) Seen {
	var s Seen
	var req struct {
		Tools    []json.RawMessage `json:"tools"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Input    json.RawMessage `json:"input"`
		Contents []struct {
			Parts []map[string]json.RawMessage `json:"parts"`
		} `json:"contents"`
	}
	if json.Unmarshal(body, &req) != nil {
		return s
	}
	s.Instructions = bytes.Contains(body, []byte(catalog.Instructions))
	switch {
	case req.Messages != nil: // Anthropic
		for _, raw := range req.Tools {
			var t struct {
				Name  string `json:"name"`
				Defer bool   `json:"defer_loading"`
			}
			json.Unmarshal(raw, &t)
			if n, ok := memoryName(t.Name); ok && !t.Defer {
				s.Tools, s.Defs = append(s.Tools, n), append(s.Defs, compact(raw))
			}
		}
		names := map[string]string{}
		for _, m := range req.Messages {
			var blocks []struct {
				Type      string          `json:"type"`
				ID        string          `json:"id"`
				Name      string          `json:"name"`
				ToolUseID string          `json:"tool_use_id"`
				Content   json.RawMessage `json:"content"`
				IsError   bool            `json:"is_error"`
			}
			json.Unmarshal(m.Content, &blocks)
			for _, b := range blocks {
				switch b.Type {
				case "tool_use":
					names[b.ID] = b.Name
				case "tool_result":
					if n, ok := memoryName(names[b.ToolUseID]); ok {
						s.Results = append(s.Results, Result{Tool: n, Text: contentText(b.Content), IsError: b.IsError})
					}
				}
			}
		}
	case req.Input != nil: // OpenAI Responses (Codex)
		for _, raw := range req.Tools {
			var t struct {
				Type  string `json:"type"`
				Name  string `json:"name"`
				Tools []struct {
					Name  string `json:"name"`
					Defer bool   `json:"defer_loading"`
				} `json:"tools"`
			}
			json.Unmarshal(raw, &t)
			if t.Type != "namespace" || t.Name != codexNamespace {
				continue
			}
			for _, u := range t.Tools {
				if !u.Defer {
					s.Tools = append(s.Tools, u.Name)
				}
			}
			if len(s.Tools) > 0 {
				s.Defs = append(s.Defs, compact(raw))
			}
		}
		var items []struct {
			Type      string          `json:"type"`
			Name      string          `json:"name"`
			Namespace string          `json:"namespace"`
			CallID    string          `json:"call_id"`
			Output    json.RawMessage `json:"output"`
		}
		json.Unmarshal(req.Input, &items)
		names := map[string]string{}
		for _, it := range items {
			switch it.Type {
			case "function_call":
				if it.Namespace == codexNamespace {
					names[it.CallID] = it.Name
				}
			case "function_call_output":
				if n := names[it.CallID]; n != "" {
					text := contentText(it.Output)
					// Codex reports a refused or failed call as the output text.
					s.Results = append(s.Results, Result{Tool: n, Text: text, IsError: strings.Contains(text, "requires approval")})
				}
			}
		}
	case req.Contents != nil: // Gemini
		for _, raw := range req.Tools {
			var t struct {
				Decls []json.RawMessage `json:"functionDeclarations"`
			}
			json.Unmarshal(raw, &t)
			for _, d := range t.Decls {
				var f struct {
					Name string `json:"name"`
				}
				json.Unmarshal(d, &f)
				if n, ok := memoryName(f.Name); ok {
					s.Tools, s.Defs = append(s.Tools, n), append(s.Defs, compact(d))
				}
			}
		}
		// A resumed session repeats earlier responses; each counts once.
		seen := map[string]bool{}
		for _, c := range req.Contents {
			for _, p := range c.Parts {
				var fr struct {
					Name     string `json:"name"`
					Response struct {
						Output json.RawMessage `json:"output"`
						Error  json.RawMessage `json:"error"`
					} `json:"response"`
				}
				raw, ok := p["functionResponse"]
				if !ok || json.Unmarshal(raw, &fr) != nil || seen[string(raw)] {
					continue
				}
				seen[string(raw)] = true
				if n, ok := memoryName(fr.Name); ok {
					r := Result{Tool: n, Text: contentText(fr.Response.Output)}
					if len(fr.Response.Error) > 0 {
						r.Text, r.IsError = contentText(fr.Response.Error), true
					}
					s.Results = append(s.Results, r)
				}
			}
		}
	}
	return s
}

// contentText is the text of a tool result: a string, or blocks with text.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) == nil {
		var sb strings.Builder
		for _, b := range blocks {
			sb.WriteString(b.Text)
		}
		return sb.String()
	}
	return string(raw)
}

func compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

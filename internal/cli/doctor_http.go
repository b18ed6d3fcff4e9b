package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

// remoteChecks is `doctor --url`: a running `ai-memory serve`, seen as a
// client sees it. It changes nothing: initialize and tools/list only.
func remoteChecks(url, tokenEnv string, add func(string, error, string), note func(string, string, bool, string)) {
	hc := &http.Client{Timeout: 10 * time.Second}
	post := func(body, token, session string) (*http.Response, []byte, time.Duration, error) {
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		if err != nil {
			return nil, nil, 0, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("MCP-Protocol-Version", "2025-06-18")
		}
		t0 := time.Now()
		resp, err := hc.Do(req)
		if err != nil {
			return nil, nil, 0, err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
		return resp, b, time.Since(t0), nil
	}
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"ai-memory-doctor","version":"1"}}}`

	resp, _, _, err := post(initialize, "", "")
	if err != nil {
		add("server", err, url)
		return
	}
	switch challenge := resp.Header.Get("WWW-Authenticate"); {
	case resp.StatusCode == http.StatusUnauthorized && challenge != "":
		add("authentication", nil, "required ("+challenge+")")
	case resp.StatusCode == http.StatusOK:
		note("authentication", "none", true, "the server accepts requests without a token (--auth none: loopback only)")
	default:
		add("authentication", fmt.Errorf("an unauthenticated request got %s without a WWW-Authenticate challenge", resp.Status), "")
	}

	token := ""
	if tokenEnv != "" {
		if token = os.Getenv(tokenEnv); token == "" {
			add("token", fmt.Errorf("$%s is empty", tokenEnv), "")
			return
		}
	}
	resp, body, took, err := post(initialize, token, "")
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("initialize: %s: %.200s", resp.Status, bytes.TrimSpace(body))
	}
	var init struct {
		Result struct {
			ProtocolVersion string `json:"protocolVersion"`
			ServerInfo      struct{ Name, Version string }
		}
	}
	if err == nil {
		err = json.Unmarshal(sseData(body), &init)
	}
	if err != nil {
		add("server", err, url)
		return
	}
	add("server", nil, fmt.Sprintf("%s %s at %s, protocol %s, initialize in %v", init.Result.ServerInfo.Name, init.Result.ServerInfo.Version,
		url, init.Result.ProtocolVersion, took.Round(time.Millisecond)))
	session := resp.Header.Get("Mcp-Session-Id")
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, token, session)
	resp, body, took, err = post(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, token, session)
	var list struct {
		Result struct {
			Tools []struct{ Name string }
		}
	}
	if err == nil {
		err = json.Unmarshal(sseData(body), &list)
	}
	if err == nil && len(list.Result.Tools) == 0 {
		err = fmt.Errorf("tools/list answered no tools: %.200s", body)
	}
	add("tools", err, fmt.Sprintf("%d tools for this principal, listed in %v", len(list.Result.Tools), took.Round(time.Millisecond)))
}

// sseData is a response body's JSON: as sent, or the data line of a
// single-event SSE answer.
func sseData(b []byte) []byte {
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		if rest, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			return bytes.TrimSpace(rest)
		}
	}
	return b
}

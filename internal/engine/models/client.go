// Package models speaks to the optional model endpoints over the
// OpenAI-compatible protocol (POST {base_url}/v1/embeddings and
// /v1/chat/completions), with a deadline per request, a bound on requests
// in flight, and answers checked before they are believed. Nothing it
// returns is trusted to be well-formed: a bad answer is an error that says
// what was wrong, which callers report as the reason they fell back.
package models

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"strings"

	"github.com/ai-memory/ai-memory/internal/engine/settings"
)

// maxAnswerBytes bounds what is read of an answer (a batch of 64
// embeddings of 4,096 dimensions as JSON is about 6 MiB).
const maxAnswerBytes = 16 << 20

// Client is one endpoint.
type Client struct {
	cfg  settings.Endpoint
	http *http.Client
	sem  chan struct{}
}

// New returns a client of e.
func New(e settings.Endpoint) *Client {
	n := e.Concurrency
	if n <= 0 {
		n = 2
	}
	return &Client{cfg: e, http: &http.Client{}, sem: make(chan struct{}, n)}
}

// Model is the configured model's name.
func (c *Client) Model() string { return c.cfg.Model }

// Config is the endpoint's settings.
func (c *Client) Config() settings.Endpoint { return c.cfg }

// Embed returns one vector per text, all of one dimension.
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	var answer struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float64 `json:"embedding"`
		} `json:"data"`
	}
	if err := c.post(ctx, "/v1/embeddings", map[string]any{"model": c.cfg.Model, "input": texts}, &answer); err != nil {
		return nil, err
	}
	if len(answer.Data) != len(texts) {
		return nil, fmt.Errorf("embeddings: %d vectors for %d inputs", len(answer.Data), len(texts))
	}
	out := make([][]float32, len(texts))
	for i, d := range answer.Data {
		if d.Index < 0 || d.Index >= len(texts) || out[d.Index] != nil {
			return nil, fmt.Errorf("embeddings: bad index %d", d.Index)
		}
		if len(d.Embedding) == 0 || (i > 0 && len(d.Embedding) != len(answer.Data[0].Embedding)) {
			return nil, fmt.Errorf("embeddings: vectors of %d and %d dimensions in one answer", len(answer.Data[0].Embedding), len(d.Embedding))
		}
		v := make([]float32, len(d.Embedding))
		var norm float64
		for j, x := range d.Embedding {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, errors.New("embeddings: a value is not a finite number")
			}
			v[j] = float32(x)
			norm += x * x
		}
		if norm == 0 {
			return nil, errors.New("embeddings: a zero vector")
		}
		out[d.Index] = v
	}
	return out, nil
}

// Chat sends one user message and returns the reply's text.
func (c *Client) Chat(ctx context.Context, prompt string) (string, error) {
	var answer struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	body := map[string]any{"model": c.cfg.Model, "stream": false, "temperature": 0,
		"messages": []map[string]string{{"role": "user", "content": prompt}}}
	if err := c.post(ctx, "/v1/chat/completions", body, &answer); err != nil {
		return "", err
	}
	if len(answer.Choices) == 0 || strings.TrimSpace(answer.Choices[0].Message.Content) == "" {
		return "", errors.New("chat: an answer with no text")
	}
	return answer.Choices[0].Message.Content, nil
}

// post sends one request within the endpoint's deadline and concurrency
// bound and decodes a 2xx JSON answer into out.
func (c *Client) post(ctx context.Context, path string, body any, out any) error {
	timeout := c.cfg.TimeoutOrDefault()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	select {
	case c.sem <- struct{}{}:
		defer func() { <-c.sem }()
	case <-ctx.Done():
		return fmt.Errorf("%s: no free slot within %s (concurrency %d)", path, timeout, cap(c.sem))
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(c.cfg.BaseURL, "/")+path, bytes.NewReader(raw))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.cfg.APIKeyEnv != "" {
		if key := os.Getenv(c.cfg.APIKeyEnv); key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%s: no answer within %s", path, timeout)
		}
		return fmt.Errorf("%s: %s", path, shortErr(err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
	switch {
	case err != nil && ctx.Err() != nil:
		return fmt.Errorf("%s: no complete answer within %s", path, timeout)
	case err != nil:
		return fmt.Errorf("%s: answer cut off: %s", path, shortErr(err))
	case resp.StatusCode/100 != 2:
		return fmt.Errorf("%s: HTTP %d: %.64q", path, resp.StatusCode, strings.TrimSpace(string(data)))
	case len(data) > maxAnswerBytes:
		return fmt.Errorf("%s: answer over %d bytes", path, maxAnswerBytes)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s: not the expected JSON: %s", path, shortErr(err))
	}
	return nil
}

func shortErr(err error) string {
	s := err.Error()
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

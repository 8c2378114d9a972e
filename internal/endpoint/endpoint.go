// Package endpoint knows the OpenAI-compatible API types: the path each is
// served at, how to build a request body, and how to read a response or a
// stream chunk into text, reasoning text and usage.
package endpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/llmbench/llmbench/internal/record"
)

// Kind is an API type.
type Kind string

// The supported API types.
const (
	Chat        Kind = "chat"
	Completions Kind = "completions"
)

// Parse returns the Kind named s.
func Parse(s string) (Kind, error) {
	switch Kind(s) {
	case Chat, Completions:
		return Kind(s), nil
	}
	return "", fmt.Errorf("unknown endpoint type %q (use chat or completions)", s)
}

// Path is the default URL path of the API.
func (k Kind) Path() string {
	if k == Completions {
		return "/v1/completions"
	}
	return "/v1/chat/completions"
}

// Input is what one request asks for.
type Input struct {
	Model     string
	Prompt    string
	MaxTokens int // 0: not sent
	Streaming bool
	// Extra fields merged into the body, overriding the built ones.
	Extra map[string]any
}

// Body builds the JSON request body.
func (k Kind) Body(in Input) ([]byte, error) {
	body := map[string]any{"model": in.Model, "stream": in.Streaming}
	switch k {
	case Chat:
		body["messages"] = []map[string]string{{"role": "user", "content": in.Prompt}}
		if in.Streaming {
			// Ask for usage in the final chunk so server token counts are recorded.
			body["stream_options"] = map[string]bool{"include_usage": true}
		}
	case Completions:
		body["prompt"] = in.Prompt
		if in.Streaming {
			body["stream_options"] = map[string]bool{"include_usage": true}
		}
	default:
		return nil, fmt.Errorf("build body: unknown endpoint type %q", k)
	}
	if in.MaxTokens > 0 {
		body["max_tokens"] = in.MaxTokens
	}
	for key, v := range in.Extra {
		body[key] = v
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("build %s body: %w", k, err)
	}
	return b, nil
}

// ParseExtraInputs turns 'name:value' pairs into payload fields; a value that
// is valid JSON (a number, true, an object…) is used as such, otherwise as a string.
func ParseExtraInputs(pairs []string) (map[string]any, error) {
	if len(pairs) == 0 {
		return nil, nil
	}
	out := make(map[string]any, len(pairs))
	for _, p := range pairs {
		name, raw, ok := strings.Cut(p, ":")
		if !ok || strings.TrimSpace(name) == "" {
			return nil, fmt.Errorf("extra input %q: want name:value", p)
		}
		var v any
		if err := json.Unmarshal([]byte(raw), &v); err != nil {
			v = raw
		}
		out[strings.TrimSpace(name)] = v
	}
	return out, nil
}

// Chunk is what one response (or one stream event) carried.
type Chunk struct {
	// Text and Reasoning are nil when empty. From a Decoder, they are
	// valid until its next call.
	Text      []byte
	Reasoning []byte
	Usage     *record.Usage
	// Choices is the number of entries in "choices"; a usage-only chunk has none.
	Choices int
	// FinishReason is the first non-empty finish_reason of the choices: the
	// server's own word that generation ended ("stop", "length", …).
	FinishReason string
	// Done marks the stream's [DONE] sentinel.
	Done bool
}

// HasContent reports whether the chunk carried text or reasoning text.
func (c *Chunk) HasContent() bool { return len(c.Text) > 0 || len(c.Reasoning) > 0 }

// ServerError is an error object the server sent in place of a response.
type ServerError struct {
	Code    int
	Message string
}

func (e *ServerError) Error() string {
	if e.Code != 0 {
		return fmt.Sprintf("server error %d: %s", e.Code, e.Message)
	}
	return "server error: " + e.Message
}

var doneSentinel = []byte("[DONE]")

type usageJSON struct {
	PromptTokens            int `json:"prompt_tokens"`
	CompletionTokens        int `json:"completion_tokens"`
	TotalTokens             int `json:"total_tokens"`
	CompletionTokensDetails *struct {
		ReasoningTokens *int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

type textJSON struct {
	Content          string `json:"content"`
	ReasoningContent string `json:"reasoning_content"`
	Reasoning        string `json:"reasoning"`
}

type responseJSON struct {
	Choices []struct {
		Text         string   `json:"text"`
		Delta        textJSON `json:"delta"`
		Message      textJSON `json:"message"`
		FinishReason *string  `json:"finish_reason"`
	} `json:"choices"`
	Usage   *usageJSON      `json:"usage"`
	Error   json.RawMessage `json:"error"`
	Object  string          `json:"object"`
	Message string          `json:"message"`
	Code    int             `json:"code"`
}

// ParseChunk reads the data of one stream event with a new Decoder.
func (k Kind) ParseChunk(data []byte) (Chunk, error) { return k.NewDecoder().Chunk(data) }

// ParseResponse reads a whole non-streaming response body with a new
// Decoder.
func (k Kind) ParseResponse(body []byte) (Chunk, error) { return k.NewDecoder().Response(body) }

// parse reads data with encoding/json: the reference the Decoder's fast
// path must agree with, and the reader of every unusual shape.
func (k Kind) parse(data []byte, streaming bool) (Chunk, error) {
	var r responseJSON
	if err := json.Unmarshal(data, &r); err != nil {
		return Chunk{}, fmt.Errorf("parse %s response %q: %w", k, clip(data), err)
	}
	if err := serverError(r); err != nil {
		return Chunk{}, err
	}
	c := Chunk{Choices: len(r.Choices)}
	for _, ch := range r.Choices {
		if ch.FinishReason != nil && *ch.FinishReason != "" && c.FinishReason == "" {
			c.FinishReason = *ch.FinishReason
		}
		switch {
		case k == Completions:
			c.Text = appendNonEmpty(c.Text, ch.Text)
		case streaming:
			c.Text = appendNonEmpty(c.Text, ch.Delta.Content)
			c.Reasoning = appendNonEmpty(appendNonEmpty(c.Reasoning, ch.Delta.ReasoningContent), ch.Delta.Reasoning)
		default:
			c.Text = appendNonEmpty(c.Text, ch.Message.Content)
			c.Reasoning = appendNonEmpty(appendNonEmpty(c.Reasoning, ch.Message.ReasoningContent), ch.Message.Reasoning)
		}
	}
	if u := r.Usage; u != nil {
		c.Usage = &record.Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
		if d := u.CompletionTokensDetails; d != nil && d.ReasoningTokens != nil {
			c.Usage.ReasoningTokens, c.Usage.HasReasoning = *d.ReasoningTokens, true
		}
	}
	return c, nil
}

// appendNonEmpty appends s to b, leaving a nil b nil when s is empty.
func appendNonEmpty(b []byte, s string) []byte {
	if s == "" {
		return b
	}
	return append(b, s...)
}

// serverError recognises OpenAI's {"error": {...}} and vLLM's {"object": "error", ...}.
func serverError(r responseJSON) error {
	if len(r.Error) > 0 && !bytes.Equal(r.Error, []byte("null")) {
		var obj struct {
			Message string `json:"message"`
			Code    any    `json:"code"`
		}
		if err := json.Unmarshal(r.Error, &obj); err != nil || obj.Message == "" {
			return &ServerError{Message: string(clip(r.Error))}
		}
		se := &ServerError{Message: obj.Message}
		if f, ok := obj.Code.(float64); ok {
			se.Code = int(f)
		}
		return se
	}
	if r.Object == "error" {
		return &ServerError{Code: r.Code, Message: r.Message}
	}
	return nil
}

// IsServerError reports whether err is a *ServerError.
func IsServerError(err error) bool {
	var se *ServerError
	return errors.As(err, &se)
}

func clip(b []byte) []byte {
	if len(b) > 200 {
		return append(b[:200:200], "…"...)
	}
	return b
}

// Package endpoint knows the OpenAI-compatible API types: the path each is
// served at, how to build a request body, and how to read a response or a
// stream chunk into text, reasoning text and usage.
package endpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
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
	Model string
	// Prompt is the user's message; System a system message before the
	// conversation (chat) and History the turns before this one.
	Prompt    string
	System    string
	History   []Message
	MaxTokens int // 0: not sent
	Streaming bool
	// LegacyMaxTokens sends a chat request's limit as max_tokens instead
	// of max_completion_tokens (--use-legacy-max-tokens).
	LegacyMaxTokens bool
	// IncludeUsage asks a stream for its usage in the last chunk
	// (stream_options.include_usage), as AIPerf does only with
	// --use-server-token-count.
	IncludeUsage bool
	// Extra fields merged into the body in order: one with a built key
	// replaces its value where it stands, others are appended.
	Extra []Field
}

// Message is one earlier message of a conversation.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Field is one member of a JSON object, its value already encoded.
type Field struct {
	Key   string
	Value json.RawMessage
}

// Body builds the JSON request body, its keys in AIPerf's order: messages
// (or prompt), model, stream, the token limit, --extra-inputs, then
// stream_options.
func (k Kind) Body(in Input) ([]byte, error) {
	var fields []Field
	add := func(key string, v any) error {
		raw, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("build %s body: %s: %w", k, key, err)
		}
		fields = append(fields, Field{key, raw})
		return nil
	}
	limitKey := "max_tokens"
	switch k {
	case Chat:
		msgs := make([]Message, 0, len(in.History)+2)
		if in.System != "" {
			msgs = append(msgs, Message{Role: "system", Content: in.System})
		}
		msgs = append(msgs, in.History...)
		if err := add("messages", append(msgs, Message{Role: "user", Content: in.Prompt})); err != nil {
			return nil, err
		}
		if !in.LegacyMaxTokens {
			limitKey = "max_completion_tokens"
		}
	case Completions:
		// A completions prompt has no roles: the conversation so far, one
		// message a line, then the new turn.
		prompt := in.Prompt
		if in.System != "" || len(in.History) > 0 {
			parts := make([]string, 0, len(in.History)+2)
			if in.System != "" {
				parts = append(parts, in.System)
			}
			for _, m := range in.History {
				parts = append(parts, m.Content)
			}
			prompt = strings.Join(append(parts, in.Prompt), "\n")
		}
		if err := add("prompt", prompt); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("build body: unknown endpoint type %q", k)
	}
	_ = add("model", in.Model)
	_ = add("stream", in.Streaming)
	if in.MaxTokens > 0 {
		_ = add(limitKey, in.MaxTokens)
	}
	for _, x := range in.Extra {
		if i := slices.IndexFunc(fields, func(f Field) bool { return f.Key == x.Key }); i >= 0 {
			fields[i].Value = x.Value
		} else {
			fields = append(fields, x)
		}
	}
	if in.Streaming && in.IncludeUsage && !slices.ContainsFunc(fields, func(f Field) bool { return f.Key == "stream_options" }) {
		fields = append(fields, Field{"stream_options", json.RawMessage(`{"include_usage":true}`)})
	}
	b := []byte{'{'}
	for i, f := range fields {
		if i > 0 {
			b = append(b, ',')
		}
		key, _ := json.Marshal(f.Key)
		b = append(append(append(b, key...), ':'), f.Value...)
	}
	return append(b, '}'), nil
}

// ParseExtraInputs turns --extra-inputs values into payload fields, in the
// order given: 'name:value' pairs, whose value is used as JSON when it is
// valid JSON (a number, true, an object…) and as a string otherwise, or a
// JSON object whose members are all taken.
func ParseExtraInputs(values []string) ([]Field, error) {
	var out []Field
	set := func(f Field) {
		if i := slices.IndexFunc(out, func(g Field) bool { return g.Key == f.Key }); i >= 0 {
			out[i] = f
			return
		}
		out = append(out, f)
	}
	for _, v := range values {
		if t := strings.TrimSpace(v); strings.HasPrefix(t, "{") {
			members, err := objectMembers([]byte(t))
			if err != nil {
				return nil, fmt.Errorf("extra inputs %q: %w", v, err)
			}
			for _, m := range members {
				set(m)
			}
			continue
		}
		name, raw, ok := strings.Cut(v, ":")
		if !ok || strings.TrimSpace(name) == "" {
			return nil, fmt.Errorf("extra input %q: want name:value or a JSON object", v)
		}
		value := json.RawMessage(strings.TrimSpace(raw))
		if !json.Valid(value) {
			value, _ = json.Marshal(raw)
		}
		set(Field{strings.TrimSpace(name), value})
	}
	return out, nil
}

// objectMembers splits a JSON object into its members, in order.
func objectMembers(data []byte) ([]Field, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var out []Field
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("not a JSON object: %w", err)
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("member %q: %w", key, err)
		}
		out = append(out, Field{key, raw})
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	if dec.More() {
		return nil, errors.New("text after the JSON object")
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

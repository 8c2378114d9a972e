package endpoint

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/llmbench/llmbench/internal/record"
)

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
	// ToolCalls' function names and arguments count as output text, as
	// AIPerf counts them.
	ToolCalls []struct {
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// appendText appends a message's content and its tool calls' names and
// arguments.
func (t *textJSON) appendText(b []byte) []byte {
	b = appendNonEmpty(b, t.Content)
	for _, tc := range t.ToolCalls {
		b = appendNonEmpty(appendNonEmpty(b, tc.Function.Name), tc.Function.Arguments)
	}
	return b
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

// parse reads an OpenAI chat or completions answer with encoding/json:
// the reference the Decoder's fast path must agree with, and the reader of
// every unusual shape.
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
			c.Text = ch.Delta.appendText(c.Text)
			c.Reasoning = appendNonEmpty(appendNonEmpty(c.Reasoning, ch.Delta.ReasoningContent), ch.Delta.Reasoning)
		default:
			c.Text = ch.Message.appendText(c.Text)
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

package endpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/llmbench/llmbench/internal/record"
)

// messagesType is Anthropic's Messages API (/v1/messages): a message of
// content blocks (text, thinking, tool_use), or a stream of typed events
// from message_start to message_stop.
type messagesType struct{}

func (messagesType) Path(bool) string { return "/v1/messages" }

func (messagesType) Caps() Caps {
	return Caps{ProducesTokens: true, TokenizesInput: true, Streams: true, Media: Image,
		APIKeyHeader: "x-api-key", Headers: [][2]string{{"anthropic-version", "2023-06-01"}}}
}

// messagesMaxTokens is max_tokens when no output length is asked for:
// the API requires one.
const messagesMaxTokens = 1024

// Build makes the body in AIPerf's key order: messages, model, max_tokens,
// stream (only when streaming), system, then --extra-inputs.
func (messagesType) Build(in Input) ([]byte, error) {
	if len(in.Audios) > 0 {
		return nil, errors.New("build messages body: the Anthropic Messages API takes no audio input: " +
			"use --endpoint-type chat for audio, or drop the audio inputs")
	}
	if len(in.Videos) > 0 {
		return nil, errors.New("build messages body: the Anthropic Messages API takes no video input: " +
			"use --endpoint-type chat for video, or drop the video inputs")
	}
	o := object{kind: Messages}
	o.add("messages", anthropicMessages(in))
	o.add("model", in.Model)
	maxTokens := in.MaxTokens
	if maxTokens <= 0 {
		maxTokens = messagesMaxTokens
	}
	o.add("max_tokens", maxTokens)
	if in.Streaming {
		o.add("stream", true)
	}
	if in.System != "" {
		o.add("system", in.System)
	}
	o.merge(in.Extra)
	return o.bytes()
}

type anthropicBlock struct {
	Type   string           `json:"type"`
	Text   string           `json:"text,omitempty"`
	Source *anthropicSource `json:"source,omitempty"`
}

type anthropicSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

// anthropicMessages are the conversation so far and the new turn: a
// plain string content when it is one text without images, else text
// blocks then image blocks (base64 for data: URIs, url for the others).
// The system prompt is no message here but the body's "system".
func anthropicMessages(in Input) []any {
	msgs := make([]any, 0, len(in.History)+1)
	for _, m := range in.History {
		msgs = append(msgs, m)
	}
	texts := in.PromptTexts()
	if len(texts) == 1 && len(in.Images) == 0 {
		return append(msgs, userMessage{Role: "user", Content: texts[0]})
	}
	blocks := make([]anthropicBlock, 0, len(texts)+len(in.Images))
	for _, t := range texts {
		if t != "" {
			blocks = append(blocks, anthropicBlock{Type: "text", Text: t})
		}
	}
	for _, m := range in.Images {
		src := &anthropicSource{Type: "url", URL: m.URL}
		if m.Data != nil || strings.HasPrefix(m.URL, "data:") {
			src = &anthropicSource{Type: "base64", MediaType: imageMediaType(m), Data: base64Of(m)}
		}
		blocks = append(blocks, anthropicBlock{Type: "image", Source: src})
	}
	return append(msgs, userMessage{Role: "user", Content: blocks})
}

// imageMediaType is an image's MIME type: its data: URI's, else the one
// its Format names (image/png when it names none).
func imageMediaType(m MediaItem) string {
	if rest, ok := strings.CutPrefix(m.URL, "data:"); ok {
		if i := strings.IndexAny(rest, ";,"); i > 0 {
			return rest[:i]
		}
	}
	switch f := strings.ToLower(m.Format); f {
	case "":
		return "image/png"
	case "jpg":
		return "image/jpeg"
	default:
		return "image/" + f
	}
}

// anthropicUsage is a usage object. The counts are pointers because a
// stream spreads them over events: message_start has them all,
// message_delta some or all (cumulative), and a later event's counts
// replace the earlier ones it carries.
type anthropicUsage struct {
	InputTokens   *int `json:"input_tokens"`
	OutputTokens  *int `json:"output_tokens"`
	CacheCreation *int `json:"cache_creation_input_tokens"`
	CacheRead     *int `json:"cache_read_input_tokens"`
}

// mergeInto sets u's counts in r. PromptTokens is input_tokens plus both
// cache counts: Anthropic's input_tokens counts only the prompt tokens
// after the last cache breakpoint, the three being disjoint parts of the
// prompt the model processed, which is what the client's input sequence
// length counts too (AIPerf's usage_prompt_tokens reads input_tokens
// alone, so it differs from ours when prompt caching is on). The three
// come together (message_start, and message_delta since the API made its
// counts cumulative), so a later event carrying any of them replaces the
// whole prompt count.
func (u *anthropicUsage) mergeInto(r *record.Usage) {
	if u.InputTokens != nil || u.CacheCreation != nil || u.CacheRead != nil {
		r.PromptTokens = 0
		for _, n := range []*int{u.InputTokens, u.CacheCreation, u.CacheRead} {
			if n != nil {
				r.PromptTokens += *n
			}
		}
	}
	if u.OutputTokens != nil {
		r.CompletionTokens = *u.OutputTokens
	}
	if u.CacheRead != nil {
		r.CacheReadTokens, r.HasCache = *u.CacheRead, true
	}
	if u.CacheCreation != nil {
		r.CacheCreationTokens, r.HasCache = *u.CacheCreation, true
	}
	r.TotalTokens = r.PromptTokens + r.CompletionTokens
}

// anthropicContent is one content block: whole in a message and at a
// content_block_start event, or a content_block_delta's delta.
type anthropicContent struct {
	Type        string          `json:"type"`
	Text        string          `json:"text"`
	Thinking    string          `json:"thinking"`
	Name        string          `json:"name"`
	Input       json.RawMessage `json:"input"`
	PartialJSON string          `json:"partial_json"`
	// StopReason is a message_delta's delta's.
	StopReason string `json:"stop_reason"`
}

// read appends a whole block's text to st: text and a tool call's name
// and input (as compact JSON, an empty input as nothing) to Text,
// thinking to Reasoning.
func (b *anthropicContent) read(st *State) {
	switch b.Type {
	case "text":
		st.Text = append(st.Text, b.Text...)
	case "thinking":
		st.Reasoning = append(st.Reasoning, b.Thinking...)
	case "tool_use":
		st.Text = append(st.Text, b.Name...)
		if len(b.Input) > 0 && !bytes.Equal(b.Input, []byte("null")) {
			buf := bytes.NewBuffer(st.Text)
			if json.Compact(buf, b.Input) == nil && !bytes.Equal(buf.Bytes()[len(st.Text):], []byte("{}")) {
				st.Text = buf.Bytes()
			}
		}
	}
}

// anthropicMessage is a whole message (the non-streaming answer, and
// message_start's message) or one stream event.
type anthropicMessage struct {
	Type       string             `json:"type"`
	Content    []anthropicContent `json:"content"`
	StopReason string             `json:"stop_reason"`
	Usage      *anthropicUsage    `json:"usage"`
	Error      json.RawMessage    `json:"error"`
	// Message: message_start's; ContentBlock: content_block_start's;
	// Delta: content_block_delta's and message_delta's.
	Message      *anthropicMessage `json:"message"`
	ContentBlock *anthropicContent `json:"content_block"`
	Delta        *anthropicContent `json:"delta"`
}

func (messagesType) Read(data []byte, streaming bool, st *State) (Chunk, error) {
	st.Text, st.Reasoning = st.Text[:0], st.Reasoning[:0]
	var m anthropicMessage
	if err := json.Unmarshal(data, &m); err != nil {
		// A member of an unexpected type in an event Read skips is no
		// reason to fail.
		if !streaming || !skippable(err) || messagesReads(m.Type) {
			return Chunk{}, fmt.Errorf("parse %s response %q: %w", Messages, clip(data), err)
		}
		return Chunk{}, nil
	}
	if m.Type == "error" || len(m.Error) > 0 && !bytes.Equal(m.Error, []byte("null")) {
		return Chunk{}, serverErrorOf(m.Error, "", nil)
	}
	if !streaming {
		for i := range m.Content {
			m.Content[i].read(st)
		}
		c := Chunk{Text: orNil(st.Text), Reasoning: orNil(st.Reasoning), FinishReason: m.StopReason}
		if m.Usage != nil {
			c.Usage = &record.Usage{}
			m.Usage.mergeInto(c.Usage)
		}
		return c, nil
	}
	var c Chunk
	switch m.Type {
	case "message_start":
		if m.Message != nil && m.Message.Usage != nil {
			// Kept for the events that complete it, not returned: a
			// stream cut after it would pass for whole.
			st.Usage = &record.Usage{}
			m.Message.Usage.mergeInto(st.Usage)
		}
	case "content_block_start":
		if m.ContentBlock != nil {
			// A tool_use block starts with its name (and an empty input
			// the input_json_delta events fill).
			m.ContentBlock.read(st)
		}
	case "content_block_delta":
		if d := m.Delta; d != nil {
			switch d.Type {
			case "text_delta":
				st.Text = append(st.Text, d.Text...)
			case "thinking_delta":
				st.Reasoning = append(st.Reasoning, d.Thinking...)
			case "input_json_delta":
				st.Text = append(st.Text, d.PartialJSON...)
			}
		}
	case "message_delta":
		if m.Delta != nil {
			c.FinishReason = m.Delta.StopReason
		}
		if m.Usage != nil {
			if st.Usage == nil {
				st.Usage = &record.Usage{}
			}
			m.Usage.mergeInto(st.Usage)
		}
		c.Usage = copyUsage(st.Usage)
	case "message_stop":
		c.Done, c.Usage = true, copyUsage(st.Usage)
	}
	c.Text, c.Reasoning = orNil(st.Text), orNil(st.Reasoning)
	return c, nil
}

// copyUsage is a copy of u, nil for nil: st.Usage changes with the next
// event, a Chunk's must not.
func copyUsage(u *record.Usage) *record.Usage {
	if u == nil {
		return nil
	}
	v := *u
	return &v
}

// messagesReads reports whether Read acts on stream events of type t.
func messagesReads(t string) bool {
	switch t {
	case "message_start", "content_block_start", "content_block_delta", "message_delta", "message_stop", "error":
		return true
	}
	return false
}

func (messagesType) Empty(c Chunk) string {
	switch {
	case c.HasContent():
		return ""
	case c.FinishReason != "":
		return "the message has no text, thinking or tool_use content (stop_reason " + c.FinishReason + ")"
	}
	return "the message has no text, thinking or tool_use content"
}

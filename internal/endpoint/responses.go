package endpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/llmbench/llmbench/internal/record"
)

// responsesType is OpenAI's Responses API (/v1/responses): a conversation
// in "input" items, answered by an "output" list of items, or streamed as
// typed events (response.output_text.delta, …, response.completed).
type responsesType struct{}

func (responsesType) Path(bool) string { return "/v1/responses" }

func (responsesType) Caps() Caps {
	return Caps{ProducesTokens: true, TokenizesInput: true, Streams: true, Media: Image | Audio}
}

// Build makes the body in AIPerf's key order: input, model, stream,
// instructions, max_output_tokens, then --extra-inputs.
func (responsesType) Build(in Input) ([]byte, error) {
	if len(in.Videos) > 0 {
		return nil, errors.New("build responses body: the Responses API takes no video input: " +
			"use --endpoint-type chat for video, or drop the video inputs")
	}
	o := object{kind: Responses}
	o.add("input", responsesInput(in))
	o.add("model", in.Model)
	o.add("stream", in.Streaming)
	if in.System != "" {
		o.add("instructions", in.System)
	}
	if in.MaxTokens > 0 {
		o.add("max_output_tokens", in.MaxTokens)
	}
	o.merge(in.Extra)
	return o.bytes()
}

// responsesMessage is one input item: an earlier turn or the new one.
type responsesMessage struct {
	Type    string `json:"type"`
	Role    string `json:"role"`
	Content any    `json:"content"`
}

type responsesPart struct {
	Type       string     `json:"type"`
	Text       string     `json:"text,omitempty"`
	ImageURL   string     `json:"image_url,omitempty"`
	InputAudio *audioPart `json:"input_audio,omitempty"`
}

// responsesInput are the conversation so far and the new turn, whose
// content is a plain string when it is one text without media, as chat's.
func responsesInput(in Input) []responsesMessage {
	items := make([]responsesMessage, 0, len(in.History)+1)
	for _, m := range in.History {
		items = append(items, responsesMessage{Type: "message", Role: m.Role, Content: m.Content})
	}
	texts := in.PromptTexts()
	if len(texts) == 1 && len(in.Images)+len(in.Audios) == 0 {
		return append(items, responsesMessage{Type: "message", Role: "user", Content: texts[0]})
	}
	parts := make([]responsesPart, 0, len(texts)+len(in.Images)+len(in.Audios))
	for _, t := range texts {
		if t != "" {
			parts = append(parts, responsesPart{Type: "input_text", Text: t})
		}
	}
	for _, m := range in.Images {
		url := m.URL
		if url == "" && m.Data != nil {
			url = DataURI(imageMediaType(m), m.Data)
		}
		parts = append(parts, responsesPart{Type: "input_image", ImageURL: url})
	}
	for _, m := range in.Audios {
		parts = append(parts, responsesPart{Type: "input_audio", InputAudio: &audioPart{Data: base64Of(m), Format: m.Format}})
	}
	return append(items, responsesMessage{Type: "message", Role: "user", Content: parts})
}

// responsesUsage is a response's usage; output_tokens counts the
// reasoning tokens too, as chat's completion_tokens does.
type responsesUsage struct {
	InputTokens         int  `json:"input_tokens"`
	OutputTokens        int  `json:"output_tokens"`
	TotalTokens         *int `json:"total_tokens"`
	OutputTokensDetails *struct {
		ReasoningTokens *int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
}

func (u *responsesUsage) usage() *record.Usage {
	if u == nil {
		return nil
	}
	r := &record.Usage{PromptTokens: u.InputTokens, CompletionTokens: u.OutputTokens, TotalTokens: u.InputTokens + u.OutputTokens}
	if u.TotalTokens != nil {
		r.TotalTokens = *u.TotalTokens
	}
	if d := u.OutputTokensDetails; d != nil && d.ReasoningTokens != nil {
		r.ReasoningTokens, r.HasReasoning = *d.ReasoningTokens, true
	}
	return r
}

// responsesStatus is what a response object says of its end: the status,
// why it is incomplete, and the error of a failed one.
type responsesStatus struct {
	Status            string          `json:"status"`
	Error             json.RawMessage `json:"error"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Usage *responsesUsage `json:"usage"`
}

// finish is the Chunk's FinishReason: why an incomplete response stopped
// ("max_output_tokens"), else its status.
func (s *responsesStatus) finish() string {
	if d := s.IncompleteDetails; d != nil && d.Reason != "" {
		return d.Reason
	}
	return s.Status
}

// err is the response's error: its error object, or its failed status.
func (s *responsesStatus) err() error {
	if len(s.Error) > 0 && !bytes.Equal(s.Error, []byte("null")) {
		return serverErrorOf(s.Error, "", nil)
	}
	if s.Status == "failed" {
		return &ServerError{Message: "the response failed (status \"failed\", no error object)"}
	}
	return nil
}

// serverErrorOf is the *ServerError of an error object {"message",
// "code", "type"} (or a bare string); an error event may carry its message
// and code at its top level instead (raw empty). A string code (OpenAI's
// "server_error"), or else the type (Anthropic's "overloaded_error"),
// prefixes the message; a number code is kept as the Code.
func serverErrorOf(raw json.RawMessage, message string, code json.RawMessage) *ServerError {
	obj := struct {
		Message string          `json:"message"`
		Code    json.RawMessage `json:"code"`
		Type    string          `json:"type"`
	}{Message: message, Code: code}
	if len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		obj.Message, obj.Code = "", nil
		if json.Unmarshal(raw, &obj) != nil && json.Unmarshal(raw, &obj.Message) != nil {
			return &ServerError{Message: string(clip(raw))}
		}
	}
	se := &ServerError{Message: obj.Message}
	prefix := obj.Type
	var s string
	if json.Unmarshal(obj.Code, &s) == nil && s != "" {
		prefix = s
	} else {
		_ = json.Unmarshal(obj.Code, &se.Code)
	}
	switch {
	case se.Message == "" && prefix == "":
		se.Message = "an error without a message"
	case se.Message == "":
		se.Message = prefix
	case prefix != "":
		se.Message = prefix + ": " + se.Message
	}
	return se
}

// responsesBody is a whole (non-streaming) response object.
type responsesBody struct {
	responsesStatus
	Object string `json:"object"`
	Output []struct {
		Type string `json:"type"`
		// Content: a message's parts (output_text, refusal), or a
		// reasoning item's reasoning_text parts.
		Content []responsesText `json:"content"`
		// Summary: a reasoning item's summary_text parts.
		Summary []responsesText `json:"summary"`
		// Name and Arguments: a function_call item's.
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"output"`
	OutputText string `json:"output_text"`
	// Message and Code: vLLM's {"object": "error", "message", "code"}.
	Message string          `json:"message"`
	Code    json.RawMessage `json:"code"`
}

type responsesText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// responsesEvent is one stream event. Response is the response object
// of the lifecycle events (response.completed, response.failed, …), read
// only for its status, error and usage.
type responsesEvent struct {
	Type         string           `json:"type"`
	Delta        string           `json:"delta"`
	Text         string           `json:"text"`
	ItemID       string           `json:"item_id"`
	OutputIndex  int              `json:"output_index"`
	ContentIndex int              `json:"content_index"`
	Response     *responsesStatus `json:"response"`
	// Item is output_item.added's new item: a function call's name.
	Item *struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"item"`
	// Error, Message and Code: an error event's, nested or not.
	Error   json.RawMessage `json:"error"`
	Message string          `json:"message"`
	Code    json.RawMessage `json:"code"`
}

// The stream events Read acts on; any other is skipped.
const (
	responsesTextDelta      = "response.output_text.delta"
	responsesTextDone       = "response.output_text.done"
	responsesReasoningDelta = "response.reasoning_text.delta"
	responsesSummaryDelta   = "response.reasoning_summary_text.delta"
	responsesArgumentsDelta = "response.function_call_arguments.delta"
	responsesItemAdded      = "response.output_item.added"
	responsesCompleted      = "response.completed"
	responsesIncomplete     = "response.incomplete"
	responsesFailed         = "response.failed"
	responsesErrorEvent     = "error"
)

func (responsesType) Read(data []byte, streaming bool, st *State) (Chunk, error) {
	st.Text, st.Reasoning = st.Text[:0], st.Reasoning[:0]
	if streaming {
		return readResponsesEvent(data, st)
	}
	var r responsesBody
	if err := json.Unmarshal(data, &r); err != nil {
		return Chunk{}, fmt.Errorf("parse %s response %q: %w", Responses, clip(data), err)
	}
	if r.Object == "error" {
		return Chunk{}, serverErrorOf(nil, r.Message, r.Code)
	}
	if err := r.err(); err != nil {
		return Chunk{}, err
	}
	for _, item := range r.Output {
		switch item.Type {
		case "message":
			for _, p := range item.Content {
				if p.Type == "output_text" {
					st.Text = append(st.Text, p.Text...)
				}
			}
		case "reasoning":
			n := len(st.Reasoning)
			for _, p := range item.Summary {
				st.Reasoning = append(st.Reasoning, p.Text...)
			}
			// Open-weight reasoning models (gpt-oss on vLLM) give the
			// reasoning itself rather than a summary of it.
			if len(st.Reasoning) == n {
				for _, p := range item.Content {
					if p.Type == "reasoning_text" {
						st.Reasoning = append(st.Reasoning, p.Text...)
					}
				}
			}
		case "function_call":
			st.Text = append(append(st.Text, item.Name...), item.Arguments...)
		}
	}
	if len(st.Text) == 0 && len(st.Reasoning) == 0 {
		st.Text = append(st.Text, r.OutputText...)
	}
	return Chunk{Text: orNil(st.Text), Reasoning: orNil(st.Reasoning), Usage: r.Usage.usage(), FinishReason: r.finish()}, nil
}

// readResponsesEvent reads one stream event. An output_text.done event
// repeats its part's whole text: it counts only for a part no delta
// carried (a server that sends only the done event), which st.Delta
// tells.
func readResponsesEvent(data []byte, st *State) (Chunk, error) {
	var ev responsesEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		// A member of an unexpected type in an event Read skips is no
		// reason to fail.
		if !skippable(err) || responsesReads(ev.Type) {
			return Chunk{}, fmt.Errorf("parse %s stream event %q: %w", Responses, clip(data), err)
		}
		return Chunk{}, nil
	}
	switch ev.Type {
	case responsesTextDelta, responsesTextDone:
		var kb [64]byte
		key := append(append(kb[:0], ev.ItemID...), '/')
		key = strconv.AppendInt(append(strconv.AppendInt(key, int64(ev.OutputIndex), 10), '/'), int64(ev.ContentIndex), 10)
		text := ev.Delta
		if ev.Type == responsesTextDone {
			if text = ev.Text; st.Delta[string(key)] {
				text = ""
			}
		} else if text != "" && !st.Delta[string(key)] {
			if st.Delta == nil {
				st.Delta = make(map[string]bool)
			}
			st.Delta[string(key)] = true
		}
		st.Text = append(st.Text, text...)
		return Chunk{Text: orNil(st.Text)}, nil
	case responsesArgumentsDelta:
		st.Text = append(st.Text, ev.Delta...)
		return Chunk{Text: orNil(st.Text)}, nil
	case responsesItemAdded:
		// A function call's name counts as a whole answer's does; its
		// arguments follow as deltas.
		if it := ev.Item; it != nil && it.Type == "function_call" {
			st.Text = append(st.Text, it.Name...)
		}
		return Chunk{Text: orNil(st.Text)}, nil
	case responsesReasoningDelta, responsesSummaryDelta:
		st.Reasoning = append(st.Reasoning, ev.Delta...)
		return Chunk{Reasoning: orNil(st.Reasoning)}, nil
	case responsesCompleted, responsesIncomplete, responsesFailed:
		r := ev.Response
		if r == nil {
			r = &responsesStatus{}
		}
		if err := r.err(); err != nil {
			return Chunk{}, err
		}
		if ev.Type == responsesFailed {
			return Chunk{}, &ServerError{Message: "the response failed (a response.failed event without an error object)"}
		}
		return Chunk{Done: true, Usage: r.Usage.usage(), FinishReason: r.finish()}, nil
	case responsesErrorEvent:
		return Chunk{}, serverErrorOf(ev.Error, ev.Message, ev.Code)
	}
	return Chunk{}, nil
}

// responsesReads reports whether Read acts on stream events of type t.
func responsesReads(t string) bool {
	switch t {
	case responsesTextDelta, responsesTextDone, responsesArgumentsDelta, responsesItemAdded, responsesReasoningDelta, responsesSummaryDelta,
		responsesCompleted, responsesIncomplete, responsesFailed, responsesErrorEvent:
		return true
	}
	return false
}

// skippable reports whether err, from decoding a stream event into a
// struct, is a member of an unexpected type (a member Read has no use for
// in an event it skips), not data that is no JSON object.
func skippable(err error) bool {
	var te *json.UnmarshalTypeError
	return err == nil || errors.As(err, &te) && te.Field != ""
}

// orNil is b, or nil when it is empty (a Chunk's Text and Reasoning are
// nil when empty).
func orNil(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

func (responsesType) Empty(c Chunk) string {
	switch {
	case c.HasContent():
		return ""
	case c.FinishReason != "" && c.FinishReason != "completed":
		return "the response has no output text, reasoning or function call (it ended " + strconv.Quote(c.FinishReason) + ")"
	}
	return "the response has no output text, reasoning or function call"
}

package endpoint

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/llmbench/llmbench/internal/record"
)

// imageGenType is OpenAI's Images API, generations
// (/v1/images/generations), as SGLang serves it too. An answer counts its
// images (Items); a stream's partial images are content arrivals
// (Partial) but only its completed image is counted.
type imageGenType struct{}

func (imageGenType) Path(bool) string { return "/v1/images/generations" }

func (imageGenType) Caps() Caps { return Caps{TokenizesInput: true, Streams: true} }

// Build makes the body in AIPerf's key order: prompt (the first text),
// model, response_format b64_json (SGLang answers nothing else), n 1,
// stream only when streaming, then --extra-inputs.
func (imageGenType) Build(in Input) ([]byte, error) {
	prompt, err := firstPrompt(ImageGeneration, in)
	if err != nil {
		return nil, err
	}
	o := object{kind: ImageGeneration}
	o.add("prompt", prompt)
	o.add("model", in.Model)
	o.add("response_format", "b64_json")
	o.add("n", 1)
	if in.Streaming {
		o.add("stream", true)
	}
	o.merge(in.Extra)
	return o.bytes()
}

func (imageGenType) Read(data []byte, streaming bool, _ *State) (Chunk, error) {
	return readImages(ImageGeneration, data, streaming)
}

func (imageGenType) Empty(c Chunk) string { return imagesEmpty(c) }

// firstPrompt is the request's first text, which the image and video
// types send as their prompt; they have no use for a request without one.
func firstPrompt(k Kind, in Input) (string, error) {
	if p := in.PromptTexts()[0]; p != "" {
		return p, nil
	}
	return "", fmt.Errorf("build %s body: no prompt: %s needs a text in every turn", k, k)
}

// The OpenAI image streaming events.
const (
	imagePartialEvent   = "image_generation.partial_image"
	imageCompletedEvent = "image_generation.completed"
	imageEditPartial    = "image_edit.partial_image"
	imageEditCompleted  = "image_edit.completed"
)

// imagesJSON is an Images API answer: a whole response's data[], or one
// stream event's image.
type imagesJSON struct {
	errorJSON
	Data []struct {
		B64JSON imagePayload `json:"b64_json"`
		URL     imagePayload `json:"url"`
	} `json:"data"`
	B64JSON           imagePayload    `json:"b64_json"`
	PartialImageIndex *int            `json:"partial_image_index"`
	Usage             *inOutUsageJSON `json:"usage"`
}

// imagePayload is whether an image's JSON string is non-empty, read without copying
// it: an image's base64 is megabytes. null is absent; a value of another
// type is an error, as it is for a string field.
type imagePayload bool

func (p *imagePayload) UnmarshalJSON(b []byte) error {
	switch {
	case len(b) > 0 && b[0] == '"':
		*p = len(b) > 2
	case string(b) == "null":
	default:
		return fmt.Errorf("want a string, got %s", clip(b))
	}
	return nil
}

// readImages reads an image_generation or image_edit answer. A data item
// counts as an image when it has b64_json or url. Of a stream's events, a
// partial image is Partial, a completed one an image and the stream's end
// (Done); an untyped event with b64_json (as AIPerf reads one) is partial
// when it has partial_image_index, an image otherwise.
func readImages(k Kind, data []byte, streaming bool) (Chunk, error) {
	var r imagesJSON
	if err := json.Unmarshal(data, &r); err != nil {
		return Chunk{}, fmt.Errorf("parse %s response %q: %w", k, clip(data), err)
	}
	if err := r.err(); err != nil {
		return Chunk{}, err
	}
	c := Chunk{Usage: r.Usage.record()}
	for _, d := range r.Data {
		if d.B64JSON || d.URL {
			c.Items++
		}
	}
	switch r.Type {
	case imagePartialEvent, imageEditPartial:
		c.Partial = bool(r.B64JSON)
	case imageCompletedEvent, imageEditCompleted:
		c.Done = streaming
		if r.B64JSON {
			c.Items++
		}
	case "":
		if r.B64JSON && r.PartialImageIndex != nil {
			c.Partial = true
		} else if r.B64JSON {
			c.Items++
		}
	}
	return c, nil
}

// imagesEmpty explains an image answer without images.
func imagesEmpty(c Chunk) string {
	if c.Items > 0 {
		return ""
	}
	return "the response has no image (no data item with b64_json or url)"
}

// errorJSON are the members an error answer has in place of a response:
// OpenAI's {"error": {...}}, vLLM's {"object": "error", ...} and a stream's
// {"type": "error", ...}.
type errorJSON struct {
	Error   json.RawMessage `json:"error"`
	Object  string          `json:"object"`
	Type    string          `json:"type"`
	Message string          `json:"message"`
	// Code is a number (vLLM) or a string (OpenAI's stream errors).
	Code json.RawMessage `json:"code"`
}

// err is the *ServerError the answer is, or nil.
func (e *errorJSON) err() error {
	code, _ := strconv.Atoi(string(e.Code))
	if err := serverError(responseJSON{Error: e.Error, Object: e.Object, Message: e.Message, Code: code}); err != nil {
		return err
	}
	if e.Type == "error" {
		msg := e.Message
		if msg == "" {
			msg = "an error event without a message"
		}
		return &ServerError{Code: code, Message: msg}
	}
	return nil
}

// inOutUsageJSON is the usage of the Images and Audio APIs:
// input_tokens, output_tokens, total_tokens (or, from vLLM's
// transcription streams, prompt_tokens and completion_tokens); a
// transcription's may be {"type": "duration", "seconds": …} instead,
// which counts no tokens.
type inOutUsageJSON struct {
	Type             string `json:"type"`
	InputTokens      int    `json:"input_tokens"`
	OutputTokens     int    `json:"output_tokens"`
	TotalTokens      int    `json:"total_tokens"`
	PromptTokens     int    `json:"prompt_tokens"`
	CompletionTokens int    `json:"completion_tokens"`
}

// record is u as a record's usage; nil when u counts no tokens.
func (u *inOutUsageJSON) record() *record.Usage {
	if u == nil || u.Type == "duration" {
		return nil
	}
	in, out := u.InputTokens, u.OutputTokens
	if in == 0 && out == 0 {
		in, out = u.PromptTokens, u.CompletionTokens
	}
	return &record.Usage{PromptTokens: in, CompletionTokens: out, TotalTokens: u.TotalTokens}
}

package endpoint

import (
	"errors"
	"fmt"

	"github.com/llmbench/llmbench/internal/record"
)

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
	// Done marks the stream's [DONE] sentinel (or a type's last event).
	Done bool
	// Items counts what a non-text answer carried: embedding vectors,
	// ranking scores, images.
	Items int
	// Video is a video job's state (ProducesVideo types).
	Video *VideoJob
	// Partial marks content that arrived but is not counted in Items: a
	// partial image of a streamed image generation. It is a content
	// arrival (time to first image) all the same.
	Partial bool
}

// HasContent reports whether the chunk carried content: text, reasoning
// text, counted items or a partial item.
func (c *Chunk) HasContent() bool {
	return len(c.Text) > 0 || len(c.Reasoning) > 0 || c.Items > 0 || c.Partial
}

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

// ParseChunk reads the data of one stream event with a new Decoder.
func (k Kind) ParseChunk(data []byte) (Chunk, error) { return k.NewDecoder().Chunk(data) }

// ParseResponse reads a whole non-streaming response body with a new
// Decoder.
func (k Kind) ParseResponse(body []byte) (Chunk, error) { return k.NewDecoder().Response(body) }

// appendNonEmpty appends s to b, leaving a nil b nil when s is empty.
func appendNonEmpty(b []byte, s string) []byte {
	if s == "" {
		return b
	}
	return append(b, s...)
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

// VideoJob is what a video job's submission or status answer said.
type VideoJob struct {
	ID       string
	Status   string // queued, in_progress, completed, failed
	Progress float64
	URL      string
	// InferenceSeconds and PeakMemoryMB are the server's own figures
	// (SGLang's inference_time_s and peak_memory_mb); NaN when not given.
	InferenceSeconds float64
	PeakMemoryMB     float64
	Error            string
}

// Finished reports whether the job is over, well or not.
func (v *VideoJob) Finished() bool { return v.Status == "completed" || v.Status == "failed" }

// State is what a stream's earlier events said, for types whose events
// depend on each other; a Decoder resets it before each response.
type State struct {
	// Usage gathers usage spread over several events (Anthropic's
	// message_start and message_delta).
	Usage *record.Usage
	// Delta marks output parts already read as deltas (Responses'
	// response.output_text.done repeats a part's whole text).
	Delta map[string]bool
	// Text and Reasoning back the Chunk a type's Read returns.
	Text, Reasoning []byte
}

// Reset empties the state for the next response, keeping its buffers.
func (s *State) Reset() {
	s.Usage = nil
	clear(s.Delta)
	s.Text, s.Reasoning = s.Text[:0], s.Reasoning[:0]
}

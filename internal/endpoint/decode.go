package endpoint

import (
	"bytes"
	"strings"
)

// Decoder reads the responses and stream chunks of one API type without
// reflection and, in its steady state, without allocating: one pass over
// the data (scan) reads the fields it needs and checks the rest as JSON.
// Anything but the usual shape (an error object, a field of an unexpected
// type, a key repeated or cased differently, text that is not valid
// UTF-8) is read again by encoding/json, so the result, errors included,
// is always what encoding/json makes of the data
// (FuzzDecoderMatchesEncodingJSON).
//
// A Decoder is not safe for concurrent use: keep one per request loop.
//
// Other types are read by their Type's Read, with the stream's State.
type Decoder struct {
	kind Kind
	typ  Type
	// fast: chat or completions, read on the scanning fast path.
	fast  bool
	state State
	// text and reasoning back the last Chunk's Text and Reasoning.
	text, reasoning []byte
}

// NewDecoder returns a Decoder for k.
func (k Kind) NewDecoder() *Decoder { return NewDecoderFor(k, k.Type()) }

// NewDecoderFor returns a Decoder of kind k read by t, k's type as the
// run configured it (Configure).
func NewDecoderFor(k Kind, t Type) *Decoder {
	return &Decoder{kind: k, typ: t, fast: k == Chat || k == Completions}
}

// Reset readies the Decoder for the next response.
func (d *Decoder) Reset() { d.state.Reset() }

// Empty says why c, everything a response carried, is no usable answer;
// "" when it is one.
func (d *Decoder) Empty(c Chunk) string { return d.typ.Empty(c) }

// Chunk reads the data of one stream event. The Chunk's Text and
// Reasoning are valid until the Decoder's next call.
func (d *Decoder) Chunk(data []byte) (Chunk, error) {
	data = bytes.TrimSpace(data)
	if bytes.Equal(data, doneSentinel) {
		return Chunk{Done: true}, nil
	}
	return d.decode(data, true)
}

// Response reads a whole non-streaming response body, as Chunk does.
func (d *Decoder) Response(body []byte) (Chunk, error) {
	return d.decode(bytes.TrimSpace(body), false)
}

func (d *Decoder) decode(data []byte, streaming bool) (Chunk, error) {
	if !d.fast {
		return d.typ.Read(data, streaming, &d.state)
	}
	if c, ok := d.scan(data, streaming); ok {
		return c, nil
	}
	return d.kind.parse(data, streaming)
}

// The keys read on the fast path, by object.
var (
	topKeys    = []string{"choices", "usage", "error", "object", "message", "code"}
	choiceKeys = []string{"text", "finish_reason", "delta", "message"}
	textKeys   = []string{"content", "reasoning_content", "reasoning", "tool_calls"}
	usageKeys  = []string{"prompt_tokens", "completion_tokens", "total_tokens", "completion_tokens_details"}
	detailKeys = []string{"reasoning_tokens"}
)

// foldsTo reports whether key matches one of keys case-insensitively (but
// not exactly): encoding/json would take it for that field.
func foldsTo(key []byte, keys []string) bool {
	// The keys are lower-case ASCII: only a key with an upper-case letter
	// or a non-ASCII byte (the Kelvin sign folds to k) can fold to one.
	plain := true
	for _, c := range key {
		if c >= 'A' && c <= 'Z' || c >= 0x80 {
			plain = false
			break
		}
	}
	if plain {
		return false
	}
	for _, k := range keys {
		if strings.EqualFold(string(key), k) {
			return true
		}
	}
	return false
}

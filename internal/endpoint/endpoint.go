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
)

// Kind is an API type, by its --endpoint-type name.
type Kind string

// The API types, AIPerf's names (and audio_transcription, which is
// llmbench's).
const (
	Chat                Kind = "chat"
	Completions         Kind = "completions"
	Responses           Kind = "responses"
	Messages            Kind = "messages"
	Embeddings          Kind = "embeddings"
	ChatEmbeddings      Kind = "chat_embeddings"
	NIMEmbeddings       Kind = "nim_embeddings"
	CohereRankings      Kind = "cohere_rankings"
	HFTEIRankings       Kind = "hf_tei_rankings"
	NIMRankings         Kind = "nim_rankings"
	HuggingFaceGenerate Kind = "huggingface_generate"
	ImageGeneration     Kind = "image_generation"
	ImageEdit           Kind = "image_edit"
	VideoGeneration     Kind = "video_generation"
	ImageRetrieval      Kind = "image_retrieval"
	AudioTranscription  Kind = "audio_transcription"
	SolidoRAG           Kind = "solido_rag"
	Raw                 Kind = "raw"
	Template            Kind = "template"
)

// Type is what llmbench knows of one API type: where its requests go,
// how their bodies are built and how its answers are read. Each type is
// one file of this package; Kind.Type names them all.
type Type interface {
	// Path is the URL path requests go to ("" for raw and template,
	// which are sent to --url as it is).
	Path(streaming bool) string
	Caps() Caps
	// Build makes one request's body.
	Build(in Input) ([]byte, error)
	// Read reads a whole response (streaming false) or one stream
	// event's data into a Chunk; st carries what a stream's earlier
	// events said (usage spread over events, a part already read as
	// deltas). Text and Reasoning may alias st's buffers.
	Read(data []byte, streaming bool, st *State) (Chunk, error)
	// Empty says why an answer that was read without error carries
	// nothing usable (the invalid-result message), c being everything
	// read; "" means c has content.
	Empty(c Chunk) string
}

// Caps are what an API type can do and needs: the metrics a run of it has
// and the inputs its requests take.
type Caps struct {
	// ProducesTokens: its answers are text whose tokens are counted
	// (output sequence length and everything made of it).
	ProducesTokens bool
	// TokenizesInput: its requests carry text whose tokens are counted
	// (input sequence length).
	TokenizesInput bool
	// Streams: it has a streaming form (--streaming).
	Streams bool
	// Media are the inputs besides text its requests can carry.
	Media Media
	// Input is the shape of one request's input.
	Input Shape
	// Multipart: the body is multipart/form-data with Boundary.
	Multipart bool
	// ProducesVideo: a video job, submitted and polled (Poller).
	ProducesVideo bool
	// APIKeyHeader, when set, carries --api-key instead of
	// "Authorization: Bearer"; Headers are sent with every request.
	APIKeyHeader string
	Headers      [][2]string
}

// Media is a set of input media.
type Media uint8

// Input media.
const (
	Image Media = 1 << iota
	Audio
	Video
)

// Has reports whether m has every medium of o.
func (m Media) Has(o Media) bool { return m&o == o }

// Shape is how a type's request input is made.
type Shape uint8

// Input shapes.
const (
	// Conversation: a prompt after a conversation's earlier turns.
	Conversation Shape = iota
	// Texts: a batch of texts (--prompt-batch-size), no conversation.
	Texts
	// Ranking: a query and passages.
	Ranking
	// Payload: a body given whole by the dataset (raw), or made from a
	// template.
	Payload
)

// Boundary separates the parts of a multipart body. It is fixed, so the
// request head is the same for every request; Build refuses a part that
// contains it.
const Boundary = "llmbench-7d1b3f9e2a5c48e6b0f4d2a1c9e8b7a6"

// ContentType is the Content-Type of a type's request bodies.
func (c Caps) ContentType() string {
	if c.Multipart {
		return "multipart/form-data; boundary=" + Boundary
	}
	return "application/json"
}

// Kinds lists every API type, in AIPerf's order.
func Kinds() []Kind {
	return []Kind{Chat, Completions, Responses, Messages, Embeddings, ChatEmbeddings, NIMEmbeddings, CohereRankings,
		HFTEIRankings, NIMRankings, HuggingFaceGenerate, ImageGeneration, ImageEdit, VideoGeneration, ImageRetrieval,
		SolidoRAG, Raw, Template, AudioTranscription}
}

// Parse returns the Kind named s.
func Parse(s string) (Kind, error) {
	if k := Kind(s); k.Type() != nil {
		return k, nil
	}
	var names []string
	for _, k := range Kinds() {
		if k.Type() != nil {
			names = append(names, string(k))
		}
	}
	return "", fmt.Errorf("unknown endpoint type %q (use one of %s)", s, strings.Join(names, ", "))
}

// Path is the URL path of k's requests.
func (k Kind) Path(streaming bool) string { return k.Type().Path(streaming) }

// Caps are k's capabilities.
func (k Kind) Caps() Caps { return k.Type().Caps() }

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
	// Texts are a batch's texts (Shape Texts), Prompt being the first.
	Texts []string
	// Query and Passages are a ranking request's (Shape Ranking).
	Query    string
	Passages []string
	// Images, Audios and Videos are the turn's media, in order.
	Images, Audios, Videos []MediaItem
	// Payload is a body the dataset gives whole (raw_payload,
	// inputs_json), for the raw type.
	Payload []byte
}

// MediaItem is one image, audio clip or video of a request.
type MediaItem struct {
	// URL is a data: URI (data:image/png;base64,…) or an http(s) URL.
	URL string
	// Format is the encoding's short name: png, jpeg, wav, mp3, webm, mp4.
	Format string
	// Data is the encoded bytes of a data: URI's media (nil for a URL).
	Data []byte
	// Seconds is an audio clip's or a video's duration, 0 when unknown.
	Seconds float64
}

// PromptTexts are the texts a request sends: Texts, or the Prompt alone.
func (in *Input) PromptTexts() []string {
	if len(in.Texts) > 0 {
		return in.Texts
	}
	return []string{in.Prompt}
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

// Body builds k's request body for in.
func (k Kind) Body(in Input) ([]byte, error) { return k.Type().Build(in) }

// object builds JSON objects member by member, in order.
type object struct {
	kind   Kind
	fields []Field
	err    error
}

// add appends key with v encoded (the first encoding error is kept).
func (o *object) add(key string, v any) {
	raw, err := marshal(v)
	if err != nil && o.err == nil {
		o.err = fmt.Errorf("build %s body: %s: %w", o.kind, key, err)
	}
	o.fields = append(o.fields, Field{key, raw})
}

// marshal encodes v as JSON without escaping <, > and & (as AIPerf's
// orjson writes them: a prompt's bytes stay what they are).
func marshal(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// has reports whether the object has key.
func (o *object) has(key string) bool {
	return slices.ContainsFunc(o.fields, func(f Field) bool { return f.Key == key })
}

// merge sets each extra field: one with a built key replaces its value
// where it stands, others are appended.
func (o *object) merge(extra []Field) {
	for _, x := range extra {
		if i := slices.IndexFunc(o.fields, func(f Field) bool { return f.Key == x.Key }); i >= 0 {
			o.fields[i].Value = x.Value
		} else {
			o.fields = append(o.fields, x)
		}
	}
}

// bytes is the object's JSON.
func (o *object) bytes() ([]byte, error) {
	if o.err != nil {
		return nil, o.err
	}
	return EncodeObject(o.fields), nil
}

// EncodeObject writes fields as one JSON object.
func EncodeObject(fields []Field) []byte {
	b := []byte{'{'}
	for i, f := range fields {
		if i > 0 {
			b = append(b, ',')
		}
		key, _ := json.Marshal(f.Key)
		b = append(append(append(b, key...), ':'), f.Value...)
	}
	return append(b, '}')
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

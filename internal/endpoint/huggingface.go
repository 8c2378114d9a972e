package endpoint

import (
	"bytes"
	"strings"
)

// huggingFaceGenerateType is Hugging Face Text Generation Inference's own
// API: /generate answers the whole text, /generate_stream a token per
// Server-Sent Event.
type huggingFaceGenerateType struct{}

func (huggingFaceGenerateType) Path(streaming bool) string {
	if streaming {
		return "/generate_stream"
	}
	return "/generate"
}

func (huggingFaceGenerateType) Caps() Caps {
	return Caps{ProducesTokens: true, TokenizesInput: true, Streams: true}
}

// Build makes the body in AIPerf's key order: inputs, then parameters
// {max_new_tokens, --extra-inputs}. TGI takes one string and no roles:
// the system message, the conversation so far and the new turn's texts,
// joined by spaces. The path, not a stream key, asks for a stream.
func (huggingFaceGenerateType) Build(in Input) ([]byte, error) {
	texts := in.PromptTexts()
	parts := make([]string, 0, len(in.History)+len(texts)+1)
	if in.System != "" {
		parts = append(parts, in.System)
	}
	for _, m := range in.History {
		if m.Content != "" {
			parts = append(parts, m.Content)
		}
	}
	parts = append(parts, nonEmpty(texts)...)
	params := object{kind: HuggingFaceGenerate}
	if in.MaxTokens > 0 {
		params.add("max_new_tokens", in.MaxTokens)
	}
	params.merge(in.Extra)
	p, err := params.bytes()
	if err != nil {
		return nil, err
	}
	o := object{kind: HuggingFaceGenerate}
	o.add("inputs", strings.Join(parts, " "))
	o.fields = append(o.fields, Field{"parameters", p})
	return o.bytes()
}

// Read reads /generate's {"generated_text"} (or a list of them: the first
// one), or one /generate_stream event: its token's text (a special
// token's, such as </s>, is no output), the last event being the one whose
// generated_text is set.
func (huggingFaceGenerateType) Read(data []byte, streaming bool, st *State) (Chunk, error) {
	if st == nil {
		st = &State{}
	}
	if !streaming {
		return readTGIGenerated(data, st)
	}
	if c, ok := scanTGIEvent(data, st); ok {
		return c, nil
	}
	return readTGIEvent(data, st)
}

func (huggingFaceGenerateType) Empty(c Chunk) string {
	if len(c.Text) > 0 {
		return ""
	}
	return "the response has no generated_text, or an empty one"
}

// tgiJSON is a /generate answer or a /generate_stream event.
type tgiJSON struct {
	errorMembers
	Token *struct {
		Text    string `json:"text"`
		Special bool   `json:"special"`
	} `json:"token"`
	GeneratedText *string `json:"generated_text"`
	// Details come with parameters.details true (and in every stream's
	// last event from some versions).
	Details *struct {
		FinishReason string `json:"finish_reason"`
	} `json:"details"`
}

func (r *tgiJSON) finishReason() string {
	if r.Details != nil {
		return r.Details.FinishReason
	}
	return ""
}

func readTGIGenerated(data []byte, st *State) (Chunk, error) {
	var r tgiJSON
	if d := bytes.TrimSpace(data); len(d) > 0 && d[0] == '[' {
		var list []tgiJSON
		if err := unmarshalAnswer(HuggingFaceGenerate, d, &list); err != nil {
			return Chunk{}, err
		}
		if len(list) == 0 {
			return Chunk{}, nil
		}
		r = list[0]
	} else if err := unmarshalAnswer(HuggingFaceGenerate, data, &r); err != nil {
		return Chunk{}, err
	}
	if err := r.err(r.GeneratedText != nil); err != nil {
		return Chunk{}, err
	}
	c := Chunk{FinishReason: r.finishReason()}
	if r.GeneratedText != nil {
		c.Text = stateText(st, *r.GeneratedText)
	}
	return c, nil
}

// readTGIEvent reads a stream event with encoding/json: the reference
// scanTGIEvent must agree with, and the reader of unusual shapes (error
// objects among them).
func readTGIEvent(data []byte, st *State) (Chunk, error) {
	var r tgiJSON
	if err := unmarshalAnswer(HuggingFaceGenerate, data, &r); err != nil {
		return Chunk{}, err
	}
	if err := r.err(r.Token != nil || r.GeneratedText != nil); err != nil {
		return Chunk{}, err
	}
	var c Chunk
	if r.Token != nil && !r.Token.Special {
		c.Text = stateText(st, r.Token.Text)
	}
	if r.GeneratedText != nil {
		c.FinishReason = tgiFinish(r.finishReason())
	}
	return c, nil
}

// tgiFinish is a stream's finish reason: its details', or "stop" when it
// gave none (the last event is the end whatever it says).
func tgiFinish(reason string) string {
	if reason == "" {
		return "stop"
	}
	return reason
}

// The members of a stream event the fast path reads, by object; an error
// object's members (from "error" on) leave the event to encoding/json.
var (
	tgiEventKeys  = []string{"token", "generated_text", "details", "error", "object", "message", "code"}
	tgiTokenKeys  = []string{"text", "special"}
	tgiDetailKeys = []string{"finish_reason"}
)

// scanTGIEvent reads a stream event of the usual shape in one pass, as
// Decoder.scan reads chat chunks and on the same terms: false (for
// encoding/json) on anything else, so that what it reads is what
// readTGIEvent reads (FuzzNonTextRead).
func scanTGIEvent(data []byte, st *State) (Chunk, bool) {
	s := scanner{data: data}
	text := st.Text[:0]
	var final bool
	var finish []byte
	ok := s.peek() == '{' && s.fields(tgiEventKeys, func(i int) bool {
		switch i {
		case 0:
			special := false
			ok := s.fields(tgiTokenKeys, func(j int) bool {
				if j == 0 {
					var ok bool
					text, _, ok = s.str(text[:0])
					return ok
				}
				switch s.peek() {
				case 't':
					special = true
					return s.lit("true")
				case 'f':
					special = false
					return s.lit("false")
				}
				return s.null()
			})
			if special {
				text = text[:0]
			}
			return ok
		case 1:
			if s.peek() == 'n' {
				return s.null()
			}
			final = true
			return s.checkStr()
		case 2:
			return s.fields(tgiDetailKeys, func(int) bool {
				var ok bool
				finish, ok = s.plainStr()
				return ok
			})
		}
		return false
	})
	if !ok || !s.end() {
		return Chunk{}, false
	}
	st.Text = text
	var c Chunk
	if len(text) > 0 {
		c.Text = text
	}
	if final {
		c.FinishReason = tgiFinish(string(finish))
	}
	return c, true
}

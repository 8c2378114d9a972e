package endpoint

import "strings"

// completionsType is OpenAI's (legacy) Completions API (/v1/completions).
type completionsType struct{}

func (completionsType) Path(bool) string { return "/v1/completions" }

func (completionsType) Caps() Caps {
	return Caps{ProducesTokens: true, TokenizesInput: true, Streams: true}
}

// Build makes the body in AIPerf's key order: prompt, model, stream,
// max_tokens, --extra-inputs, then stream_options. A completions prompt
// has no roles: the conversation so far, one message a line, then the new
// turn; several texts are sent as a list.
func (completionsType) Build(in Input) ([]byte, error) {
	o := object{kind: Completions}
	switch {
	case in.System != "" || len(in.History) > 0:
		parts := make([]string, 0, len(in.History)+2)
		if in.System != "" {
			parts = append(parts, in.System)
		}
		for _, m := range in.History {
			parts = append(parts, m.Content)
		}
		o.add("prompt", strings.Join(append(parts, in.Prompt), "\n"))
	case len(in.Texts) > 1:
		o.add("prompt", in.Texts)
	default:
		o.add("prompt", in.PromptTexts()[0])
	}
	o.add("model", in.Model)
	o.add("stream", in.Streaming)
	if in.MaxTokens > 0 {
		o.add("max_tokens", in.MaxTokens)
	}
	o.merge(in.Extra)
	addStreamOptions(&o, in)
	return o.bytes()
}

func (completionsType) Read(data []byte, streaming bool, _ *State) (Chunk, error) {
	return Completions.parse(data, streaming)
}

func (completionsType) Empty(c Chunk) string { return openAIEmpty(c) }

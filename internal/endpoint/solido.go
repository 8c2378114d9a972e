package endpoint

import "encoding/json"

// solidoRAGType is Solido's retrieval-augmented generation API
// (/rag/api/prompt): a query in, a generated answer (with the sources it
// drew on) out, whole or streamed as content deltas.
type solidoRAGType struct{}

func (solidoRAGType) Path(bool) string { return "/rag/api/prompt" }

func (solidoRAGType) Caps() Caps {
	return Caps{ProducesTokens: true, TokenizesInput: true, Streams: true}
}

// solidoFilters are the retrieval filters AIPerf always sends.
type solidoFilters struct {
	Family string `json:"family"`
	Tool   string `json:"tool"`
}

// Build makes the body in AIPerf's key order: query (the turn's texts),
// filters, inference_model, stream (only when streaming), then
// --extra-inputs.
func (solidoRAGType) Build(in Input) ([]byte, error) {
	o := object{kind: SolidoRAG}
	o.add("query", nonEmpty(in.PromptTexts()))
	o.add("filters", solidoFilters{Family: "Solido", Tool: "SDE"})
	o.add("inference_model", in.Model)
	if in.Streaming {
		o.add("stream", true)
	}
	o.merge(in.Extra)
	return o.bytes()
}

// solidoJSON is an answer or a stream event; its sources are not read.
type solidoJSON struct {
	errorMembers
	Content *string         `json:"content"`
	Sources json.RawMessage `json:"sources"`
}

// Read reads content: the whole answer, or a stream event's delta.
func (solidoRAGType) Read(data []byte, _ bool, st *State) (Chunk, error) {
	var r solidoJSON
	if err := unmarshalAnswer(SolidoRAG, data, &r); err != nil {
		return Chunk{}, err
	}
	if err := r.err(r.Content != nil); err != nil {
		return Chunk{}, err
	}
	var c Chunk
	if r.Content != nil {
		c.Text = stateText(st, *r.Content)
	}
	if len(r.Sources) > 0 && string(r.Sources) != "null" {
		// The sources come with the answer's last part: a stream that
		// sent them ended whole, [DONE] or not.
		c.FinishReason = "stop"
	}
	return c, nil
}

func (solidoRAGType) Empty(c Chunk) string {
	if len(c.Text) > 0 {
		return ""
	}
	return "the response has no content, or an empty one"
}

package mockserver

import (
	"net/http"
	"strconv"
)

// tgiGenerate serves Hugging Face TGI's POST /generate (stream false) and
// POST /generate_stream (stream true): inputs and parameters
// (max_new_tokens, details).
func (s *Server) tgiGenerate(w http.ResponseWriter, r *http.Request, stream bool) {
	c := s.newCall(w, r)
	if c == nil {
		return
	}
	var req struct {
		Inputs     string `json:"inputs"`
		Parameters struct {
			MaxNewTokens *int `json:"max_new_tokens"`
			Details      bool `json:"details"`
		} `json:"parameters"`
	}
	if !c.decode(r, &req) {
		return
	}
	if req.Inputs == "" {
		tgiError(w, "Input validation error: `inputs` cannot be empty")
		return
	}
	maxTokens := 0
	if n := req.Parameters.MaxNewTokens; n != nil {
		if *n < 1 {
			tgiError(w, "Input validation error: `max_new_tokens` must be strictly positive")
			return
		}
		maxTokens = *n
	}
	em := &tgiEmitter{details: req.Parameters.Details}
	s.serveText(c, r, textRequest{prompt: req.Inputs, maxTokens: maxTokens, stream: stream, requestID: r.Header.Get("X-Request-ID")}, em)
}

// tgiError answers with TGI's validation error (HTTP 422).
func tgiError(w http.ResponseWriter, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusUnprocessableEntity)
	b := append(appendJSONValue([]byte(`{"error":`), msg), `,"error_type":"validation"}`...)
	_, _ = w.Write(b)
}

// tgiEmitter writes TGI's answers: {"generated_text"} (with details when
// asked), or a stream of token events whose last also carries the
// generated text and the details.
type tgiEmitter struct {
	details bool
	// text is the answer so far, JSON-escaped: the last event repeats it.
	text []byte
}

func (e *tgiEmitter) finishReason(g *generation) string {
	if g.reason == "length" {
		return "length"
	}
	return "eos_token"
}

func (e *tgiEmitter) appendDetails(b []byte, g *generation) []byte {
	b = append(b, `{"finish_reason":"`...)
	b = append(b, e.finishReason(g)...)
	b = append(b, `","generated_tokens":`...)
	b = strconv.AppendInt(b, int64(g.outTokens), 10)
	b = append(b, `,"seed":null,"input_length":`...)
	b = strconv.AppendInt(b, int64(g.promptTokens), 10)
	return append(b, '}')
}

func (e *tgiEmitter) open(*generation) {}

func (e *tgiEmitter) token(g *generation, i int, piece string) {
	e.text = appendJSONString(e.text, piece)
	// A stable token id for the piece (FNV-1a), without allocating.
	h := uint32(2166136261)
	for k := 0; k < len(piece); k++ {
		h = (h ^ uint32(piece[k])) * 16777619
	}
	id := h % 32000
	b := append(g.buf[:0], `data:{"index":`...)
	b = strconv.AppendInt(b, int64(i+1), 10)
	b = append(b, `,"token":{"id":`...)
	b = strconv.AppendUint(b, uint64(id), 10)
	b = append(b, `,"text":"`...)
	b = appendJSONString(b, piece)
	b = append(b, `","logprob":`...)
	b = strconv.AppendFloat(b, -float64(id%1000)/1000-0.01, 'f', 4, 64)
	b = append(b, `,"special":false},"generated_text":`...)
	if i < g.outTokens-1 {
		b = append(b, `null,"details":null`...)
	} else {
		b = append(b, '"')
		b = append(b, e.text...)
		b = append(b, `","details":`...)
		b = e.appendDetails(b, g)
	}
	g.write(append(b, ",\"top_tokens\":null}\n\n"...))
}

func (e *tgiEmitter) close(*generation, []byte, []byte) {}

func (e *tgiEmitter) whole(g *generation, text, _ []byte) []byte {
	b := append([]byte(`{"generated_text":"`), text...)
	b = append(b, '"')
	if e.details {
		b = append(b, `,"details":`...)
		b = e.appendDetails(b, g)
	}
	return append(b, '}')
}

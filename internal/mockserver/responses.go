package mockserver

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// responses serves OpenAI's POST /v1/responses: input (a string or a list
// of items whose content is a string or input_text parts), instructions,
// max_output_tokens, stream.
func (s *Server) responses(w http.ResponseWriter, r *http.Request) {
	c := s.newCall(w, r)
	if c == nil {
		return
	}
	var req struct {
		Model           string          `json:"model"`
		Input           json.RawMessage `json:"input"`
		Instructions    string          `json:"instructions"`
		MaxOutputTokens int             `json:"max_output_tokens"`
		Stream          bool            `json:"stream"`
	}
	if !c.decode(r, &req) {
		return
	}
	var texts []string
	if req.Instructions != "" {
		texts = append(texts, req.Instructions)
	}
	var one string
	var items []struct {
		Content json.RawMessage `json:"content"`
	}
	switch {
	case json.Unmarshal(req.Input, &one) == nil && one != "":
		texts = append(texts, one)
	case json.Unmarshal(req.Input, &items) == nil && len(items) > 0:
		for _, it := range items {
			texts = append(texts, promptText(it.Content))
		}
	default:
		writeError(w, http.StatusBadRequest, "input is required: a string or a list of input items")
		return
	}
	em := &responsesEmitter{id: "resp_" + strconv.FormatUint(c.seq, 10), msgID: "msg_" + strconv.FormatUint(c.seq, 10),
		created: c.arrival.Unix(), model: req.Model}
	s.serveText(c, r, textRequest{model: req.Model, prompt: strings.Join(texts, "\n"), maxTokens: req.MaxOutputTokens,
		stream: req.Stream, requestID: r.Header.Get("X-Request-ID")}, em)
}

// responsesEmitter writes the Responses API: a response object, or its
// stream of typed events (response.created … response.output_text.delta
// for each token … response.completed).
type responsesEmitter struct {
	id, msgID string
	created   int64
	model     string
	// n numbers the stream's events (sequence_number).
	n int
}

// event appends one stream event: its event: line and its data, which
// data opens as a JSON object after the type and sequence number.
func (e *responsesEmitter) event(b []byte, typ string, data string) []byte {
	b = append(b, "event: "...)
	b = append(b, typ...)
	b = append(b, "\ndata: {\"type\":\""...)
	b = append(b, typ...)
	b = append(b, `","sequence_number":`...)
	b = strconv.AppendInt(b, int64(e.n), 10)
	e.n++
	b = append(b, data...)
	return append(b, "}\n\n"...)
}

// response appends the response object; text is nil while in progress.
func (e *responsesEmitter) response(b []byte, g *generation, text []byte) []byte {
	status := "in_progress"
	if text != nil {
		status = "completed"
	}
	b = append(b, `{"id":"`...)
	b = append(b, e.id...)
	b = append(b, `","object":"response","created_at":`...)
	b = strconv.AppendInt(b, e.created, 10)
	b = append(b, `,"status":"`...)
	b = append(b, status...)
	b = append(b, `","model":`...)
	b = appendJSONValue(b, e.model)
	b = append(b, `,"output":[`...)
	if text != nil {
		b = e.item(b, text)
	}
	b = append(b, `],"usage":`...)
	if text == nil {
		return append(b, "null}"...)
	}
	b = append(b, `{"input_tokens":`...)
	b = strconv.AppendInt(b, int64(g.promptTokens), 10)
	b = append(b, `,"input_tokens_details":{"cached_tokens":`...)
	b = strconv.AppendInt(b, int64(g.cachedTokens), 10)
	b = append(b, `},"output_tokens":`...)
	b = strconv.AppendInt(b, int64(g.outTokens), 10)
	b = append(b, `,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":`...)
	b = strconv.AppendInt(b, int64(g.promptTokens+g.outTokens), 10)
	return append(b, "}}"...)
}

// item appends the answer's message item; text is nil while in progress.
func (e *responsesEmitter) item(b []byte, text []byte) []byte {
	b = append(b, `{"id":"`...)
	b = append(b, e.msgID...)
	if text == nil {
		return append(b, `","type":"message","status":"in_progress","role":"assistant","content":[]}`...)
	}
	b = append(b, `","type":"message","status":"completed","role":"assistant","content":[`...)
	b = e.part(b, text)
	return append(b, "]}"...)
}

func (e *responsesEmitter) part(b []byte, text []byte) []byte {
	b = append(b, `{"type":"output_text","text":"`...)
	b = append(b, text...)
	return append(b, `","annotations":[]}`...)
}

func (e *responsesEmitter) open(g *generation) {
	b := e.event(g.buf[:0], "response.created", `,"response":`+string(e.response(nil, g, nil)))
	b = e.event(b, "response.in_progress", `,"response":`+string(e.response(nil, g, nil)))
	b = e.event(b, "response.output_item.added", `,"output_index":0,"item":`+string(e.item(nil, nil)))
	b = e.event(b, "response.content_part.added", `,"item_id":"`+e.msgID+`","output_index":0,"content_index":0,"part":`+string(e.part(nil, nil)))
	g.write(b)
}

func (e *responsesEmitter) token(g *generation, _ int, piece string) {
	b := append(g.buf[:0], "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":"...)
	b = strconv.AppendInt(b, int64(e.n), 10)
	e.n++
	b = append(b, `,"item_id":"`...)
	b = append(b, e.msgID...)
	b = append(b, `","output_index":0,"content_index":0,"delta":"`...)
	b = appendJSONString(b, piece)
	g.write(append(b, "\",\"logprobs\":[]}\n\n"...))
}

func (e *responsesEmitter) close(g *generation, text, _ []byte) {
	head := `,"item_id":"` + e.msgID + `","output_index":0,"content_index":0`
	b := e.event(g.buf[:0], "response.output_text.done", head+`,"text":"`+string(text)+`","logprobs":[]`)
	b = e.event(b, "response.content_part.done", head+`,"part":`+string(e.part(nil, text)))
	b = e.event(b, "response.output_item.done", `,"output_index":0,"item":`+string(e.item(nil, text)))
	b = e.event(b, "response.completed", `,"response":`+string(e.response(nil, g, text)))
	g.write(b)
}

func (e *responsesEmitter) whole(g *generation, text, _ []byte) []byte {
	return e.response(nil, g, text)
}

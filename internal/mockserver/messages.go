package mockserver

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// messages serves Anthropic's POST /v1/messages: model, messages (content
// a string or blocks), system, max_tokens (required), stream. The answer
// has exactly max_tokens tokens, as chat's has max_tokens: its
// stop_reason is max_tokens.
func (s *Server) messages(w http.ResponseWriter, r *http.Request) {
	c := s.newCall(w, r)
	if c == nil {
		return
	}
	var req struct {
		Model    string `json:"model"`
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		System    json.RawMessage `json:"system"`
		MaxTokens *int            `json:"max_tokens"`
		Stream    bool            `json:"stream"`
	}
	if !c.decode(r, &req) {
		return
	}
	switch {
	case req.MaxTokens == nil:
		anthropicError(w, http.StatusBadRequest, "max_tokens: Field required")
		return
	case *req.MaxTokens < 1:
		anthropicError(w, http.StatusBadRequest, "max_tokens: must be greater than or equal to 1")
		return
	case len(req.Messages) == 0:
		anthropicError(w, http.StatusBadRequest, "messages: at least one message is required")
		return
	}
	var texts []string
	if sys := promptText(req.System); sys != "" {
		texts = append(texts, sys)
	}
	for _, m := range req.Messages {
		texts = append(texts, promptText(m.Content))
	}
	em := &messagesEmitter{id: "msg_" + strconv.FormatUint(c.seq, 10), model: req.Model}
	s.serveText(c, r, textRequest{model: req.Model, prompt: strings.Join(texts, "\n"), maxTokens: *req.MaxTokens,
		stream: req.Stream, requestID: r.Header.Get("X-Request-ID")}, em)
}

// anthropicError answers with Anthropic's error shape.
func anthropicError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	b := append([]byte(`{"type":"error","error":{"type":"invalid_request_error","message":`), appendJSONValue(nil, msg)...)
	_, _ = w.Write(append(b, "}}"...))
}

// messagesEmitter writes the Messages API: a message, or its stream of
// named events (message_start, content_block_start, ping, a
// content_block_delta per token, content_block_stop, message_delta,
// message_stop).
type messagesEmitter struct {
	id, model string
}

func (e *messagesEmitter) stopReason(g *generation) string {
	if g.reason == "length" {
		return "max_tokens"
	}
	return "end_turn"
}

func (e *messagesEmitter) open(g *generation) {
	b := append(g.buf[:0], "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\""...)
	b = append(b, e.id...)
	b = append(b, `","type":"message","role":"assistant","model":`...)
	b = appendJSONValue(b, e.model)
	b = append(b, `,"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":`...)
	b = strconv.AppendInt(b, int64(g.promptTokens), 10)
	b = append(b, `,"output_tokens":1}}}`+"\n\n"...)
	b = append(b, `event: content_block_start`+"\n"+`data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`+"\n\n"...)
	g.write(append(b, `event: ping`+"\n"+`data: {"type":"ping"}`+"\n\n"...))
}

func (e *messagesEmitter) token(g *generation, _ int, piece string) {
	b := append(g.buf[:0], `event: content_block_delta`+"\n"+`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"`...)
	b = appendJSONString(b, piece)
	g.write(append(b, "\"}}\n\n"...))
}

func (e *messagesEmitter) close(g *generation, _, _ []byte) {
	b := append(g.buf[:0], `event: content_block_stop`+"\n"+`data: {"type":"content_block_stop","index":0}`+"\n\n"...)
	b = append(b, `event: message_delta`+"\n"+`data: {"type":"message_delta","delta":{"stop_reason":"`...)
	b = append(b, e.stopReason(g)...)
	b = append(b, `","stop_sequence":null},"usage":{"output_tokens":`...)
	b = strconv.AppendInt(b, int64(g.outTokens), 10)
	b = append(b, "}}\n\n"...)
	g.write(append(b, `event: message_stop`+"\n"+`data: {"type":"message_stop"}`+"\n\n"...))
}

func (e *messagesEmitter) whole(g *generation, text, _ []byte) []byte {
	b := append([]byte(nil), `{"id":"`...)
	b = append(b, e.id...)
	b = append(b, `","type":"message","role":"assistant","model":`...)
	b = appendJSONValue(b, e.model)
	b = append(b, `,"content":[{"type":"text","text":"`...)
	b = append(b, text...)
	b = append(b, `"}],"stop_reason":"`...)
	b = append(b, e.stopReason(g)...)
	b = append(b, `","stop_sequence":null,"usage":{"input_tokens":`...)
	b = strconv.AppendInt(b, int64(g.promptTokens), 10)
	b = append(b, `,"output_tokens":`...)
	b = strconv.AppendInt(b, int64(g.outTokens), 10)
	return append(b, "}}"...)
}

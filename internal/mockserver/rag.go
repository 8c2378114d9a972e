package mockserver

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

const (
	// ragSources is how many passages the simulated RAG server retrieves;
	// each adds ragSourceTokens to the prompt its model prefills.
	ragSources      = 3
	ragSourceTokens = 128
)

// solidoRAG serves Solido's POST /rag/api/prompt: query (a list of texts
// or one), filters, inference_model, stream. The answer is content with
// the sources retrieved; streamed, one {"content"} event per token, the
// last with the sources.
func (s *Server) solidoRAG(w http.ResponseWriter, r *http.Request) {
	c := s.newCall(w, r)
	if c == nil {
		return
	}
	var req struct {
		Query          json.RawMessage `json:"query"`
		InferenceModel string          `json:"inference_model"`
		Stream         bool            `json:"stream"`
	}
	if !c.decode(r, &req) {
		return
	}
	query := promptText(req.Query)
	if strings.TrimSpace(query) == "" {
		writeError(w, http.StatusBadRequest, "query is required: a list of texts")
		return
	}
	em := &ragEmitter{}
	em.sources = append(em.sources, '[')
	for k := range ragSources {
		if k > 0 {
			em.sources = append(em.sources, ',')
		}
		em.sources = append(em.sources, `{"title":"SDE user guide, part `...)
		em.sources = strconv.AppendInt(em.sources, int64(k+1), 10)
		em.sources = append(em.sources, `","source":"solido/sde/user-guide-`...)
		em.sources = strconv.AppendInt(em.sources, int64(k+1), 10)
		em.sources = append(em.sources, `.pdf","score":`...)
		em.sources = strconv.AppendFloat(em.sources, 0.9-0.1*float64(k)-0.05*unitHash(query, strconv.Itoa(k)), 'f', 4, 64)
		em.sources = append(em.sources, '}')
	}
	em.sources = append(em.sources, ']')
	s.serveText(c, r, textRequest{model: req.InferenceModel, prompt: query, extraPromptTokens: ragSources * ragSourceTokens,
		stream: req.Stream, requestID: r.Header.Get("X-Request-ID")}, em)
}

// ragEmitter writes Solido's answers.
type ragEmitter struct {
	sources []byte // the JSON list of sources
}

func (e *ragEmitter) open(*generation) {}

func (e *ragEmitter) token(g *generation, i int, piece string) {
	b := append(g.buf[:0], `data: {"content":"`...)
	b = appendJSONString(b, piece)
	b = append(b, '"')
	if i == g.outTokens-1 {
		b = append(b, `,"sources":`...)
		b = append(b, e.sources...)
	}
	g.write(append(b, "}\n\n"...))
}

func (e *ragEmitter) close(*generation, []byte, []byte) {}

func (e *ragEmitter) whole(_ *generation, text, _ []byte) []byte {
	b := append([]byte(`{"content":"`), text...)
	b = append(b, `","sources":`...)
	b = append(b, e.sources...)
	return append(b, '}')
}

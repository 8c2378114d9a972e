package mockserver

import (
	"encoding/json"
	"math"
	"net/http"
	"sort"
	"strconv"
)

// ranked is one passage's score, by its index in the request.
type ranked struct {
	index int
	score float64
}

// rank scores each passage against the query, best first, and counts the
// tokens a cross-encoder reads: the query once with every passage.
func (s *Server) rank(query string, passages []string) ([]ranked, int) {
	q := s.lang.Count(query)
	tokens := 0
	out := make([]ranked, len(passages))
	for i, p := range passages {
		tokens += q + s.lang.Count(p)
		out[i] = ranked{index: i, score: unitHash(query, p)}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].score > out[b].score })
	return out, tokens
}

// cohereRerank serves Cohere's POST /v2/rerank: query and documents
// (strings or {"text"} objects), answered with results sorted by
// relevance_score, at most top_n of them.
func (s *Server) cohereRerank(w http.ResponseWriter, r *http.Request) {
	c := s.newCall(w, r)
	if c == nil {
		return
	}
	var req struct {
		Model     string            `json:"model"`
		Query     string            `json:"query"`
		Documents []json.RawMessage `json:"documents"`
		TopN      int               `json:"top_n"`
	}
	if !c.decode(r, &req) {
		return
	}
	docs := make([]string, len(req.Documents))
	for i, d := range req.Documents {
		var obj struct {
			Text string `json:"text"`
		}
		if json.Unmarshal(d, &docs[i]) != nil && json.Unmarshal(d, &obj) == nil {
			docs[i] = obj.Text
		}
	}
	if req.Query == "" || len(docs) == 0 {
		writeError(w, http.StatusBadRequest, "invalid request: a query and at least one document are required")
		return
	}
	results, tokens := s.rank(req.Query, docs)
	if req.TopN > 0 && req.TopN < len(results) {
		results = results[:req.TopN]
	}
	s.pool(c, r, tokens, func() []byte {
		b := append(make([]byte, 0, 128+len(results)*48), `{"id":"rerank-`...)
		b = strconv.AppendUint(b, c.seq, 10)
		b = append(b, `","results":[`...)
		for i, x := range results {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"index":`...)
			b = strconv.AppendInt(b, int64(x.index), 10)
			b = append(b, `,"relevance_score":`...)
			b = strconv.AppendFloat(b, x.score, 'g', 8, 64)
			b = append(b, '}')
		}
		return append(b, `],"meta":{"api_version":{"version":"2"},"billed_units":{"search_units":1}}}`...)
	})
}

// teiRerank serves Hugging Face TEI's POST /rerank: query and texts,
// answered with a list of {index, score} sorted by score (with the text
// when return_text is set).
func (s *Server) teiRerank(w http.ResponseWriter, r *http.Request) {
	c := s.newCall(w, r)
	if c == nil {
		return
	}
	var req struct {
		Query      string   `json:"query"`
		Texts      []string `json:"texts"`
		ReturnText bool     `json:"return_text"`
		RawScores  bool     `json:"raw_scores"`
	}
	if !c.decode(r, &req) {
		return
	}
	if req.Query == "" || len(req.Texts) == 0 {
		// TEI's own error shape.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":"a query and at least one text are required","error_type":"Validation"}`))
		return
	}
	results, tokens := s.rank(req.Query, req.Texts)
	s.pool(c, r, tokens, func() []byte {
		b := append(make([]byte, 0, 2+len(results)*40), '[')
		for i, x := range results {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"index":`...)
			b = strconv.AppendInt(b, int64(x.index), 10)
			if req.ReturnText {
				b = append(b, `,"text":`...)
				b = appendJSONValue(b, req.Texts[x.index])
			}
			b = append(b, `,"score":`...)
			score := x.score
			if req.RawScores {
				score = logit(score)
			}
			b = strconv.AppendFloat(b, score, 'g', 8, 64)
			b = append(b, '}')
		}
		return append(b, ']')
	})
}

// nimRanking serves NVIDIA NIM's POST /v1/ranking: query {text} and
// passages [{text}], answered with rankings of {index, logit} sorted by
// logit.
func (s *Server) nimRanking(w http.ResponseWriter, r *http.Request) {
	c := s.newCall(w, r)
	if c == nil {
		return
	}
	type text struct {
		Text string `json:"text"`
	}
	var req struct {
		Model    string `json:"model"`
		Query    text   `json:"query"`
		Passages []text `json:"passages"`
	}
	if !c.decode(r, &req) {
		return
	}
	passages := make([]string, len(req.Passages))
	for i, p := range req.Passages {
		passages[i] = p.Text
	}
	if req.Query.Text == "" || len(passages) == 0 {
		writeError(w, http.StatusBadRequest, "a query and at least one passage are required")
		return
	}
	results, tokens := s.rank(req.Query.Text, passages)
	s.pool(c, r, tokens, func() []byte {
		b := append(make([]byte, 0, 16+len(results)*40), `{"rankings":[`...)
		for i, x := range results {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"index":`...)
			b = strconv.AppendInt(b, int64(x.index), 10)
			b = append(b, `,"logit":`...)
			b = strconv.AppendFloat(b, logit(x.score), 'g', 8, 64)
			b = append(b, '}')
		}
		return append(b, "]}"...)
	})
}

// logit is a relevance probability as the raw score a reranker's head
// gives, bounded to ±20.
func logit(p float64) float64 {
	p = min(max(p, 1e-9), 1-1e-9)
	return math.Max(-20, math.Min(20, math.Log(p/(1-p))))
}

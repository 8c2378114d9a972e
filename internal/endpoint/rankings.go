package endpoint

import (
	"bytes"
	"fmt"
)

// cohereRankingsType is Cohere's Rerank API v2 (/v2/rerank): a query and
// documents in, a relevance score per document out.
type cohereRankingsType struct{}

func (cohereRankingsType) Path(bool) string { return "/v2/rerank" }

func (cohereRankingsType) Caps() Caps { return rankingsCaps() }

// Build makes the body in AIPerf's key order: model, query, documents,
// then --extra-inputs.
func (cohereRankingsType) Build(in Input) ([]byte, error) {
	if err := checkRanking(CohereRankings, in); err != nil {
		return nil, err
	}
	o := object{kind: CohereRankings}
	o.add("model", in.Model)
	o.add("query", in.Query)
	o.add("documents", in.Passages)
	o.merge(in.Extra)
	return o.bytes()
}

// Read counts results[] ({index, relevance_score}).
func (cohereRankingsType) Read(data []byte, streaming bool, _ *State) (Chunk, error) {
	return readRankings(CohereRankings, data, streaming)
}

func (cohereRankingsType) Empty(c Chunk) string { return rankingsEmpty(c) }

// hfTEIRankingsType is Hugging Face Text Embeddings Inference's /rerank: a
// query and texts in, a score per text out.
type hfTEIRankingsType struct{}

func (hfTEIRankingsType) Path(bool) string { return "/rerank" }

func (hfTEIRankingsType) Caps() Caps { return rankingsCaps() }

// Build makes the body in AIPerf's key order: query, texts, then
// --extra-inputs (TEI serves one model: there is no model key).
func (hfTEIRankingsType) Build(in Input) ([]byte, error) {
	if err := checkRanking(HFTEIRankings, in); err != nil {
		return nil, err
	}
	o := object{kind: HFTEIRankings}
	o.add("query", in.Query)
	o.add("texts", in.Passages)
	o.merge(in.Extra)
	return o.bytes()
}

// Read counts the scores: TEI answers a top-level list of {index,
// score}; an object's results[] is read too.
func (hfTEIRankingsType) Read(data []byte, streaming bool, _ *State) (Chunk, error) {
	if streaming {
		return Chunk{}, noStream(HFTEIRankings)
	}
	if d := bytes.TrimSpace(data); len(d) > 0 && d[0] == '[' {
		var n listLen
		if err := unmarshalAnswer(HFTEIRankings, d, &n); err != nil {
			return Chunk{}, err
		}
		return Chunk{Items: int(n)}, nil
	}
	return readRankings(HFTEIRankings, data, false)
}

func (hfTEIRankingsType) Empty(c Chunk) string { return rankingsEmpty(c) }

// nimRankingsType is NVIDIA NIM's reranking API (/v1/ranking): a query
// and passages in, a logit per passage out.
type nimRankingsType struct{}

func (nimRankingsType) Path(bool) string { return "/v1/ranking" }

func (nimRankingsType) Caps() Caps { return rankingsCaps() }

// Build makes the body in AIPerf's key order: model, query {text},
// passages [{text}], then --extra-inputs.
func (nimRankingsType) Build(in Input) ([]byte, error) {
	if err := checkRanking(NIMRankings, in); err != nil {
		return nil, err
	}
	passages := make([]nimText, len(in.Passages))
	for i, p := range in.Passages {
		passages[i] = nimText{p}
	}
	o := object{kind: NIMRankings}
	o.add("model", in.Model)
	o.add("query", nimText{in.Query})
	o.add("passages", passages)
	o.merge(in.Extra)
	return o.bytes()
}

type nimText struct {
	Text string `json:"text"`
}

// Read counts rankings[] ({index, logit}).
func (nimRankingsType) Read(data []byte, streaming bool, _ *State) (Chunk, error) {
	return readRankings(NIMRankings, data, streaming)
}

func (nimRankingsType) Empty(c Chunk) string { return rankingsEmpty(c) }

// rankingsCaps: rankings requests carry text (the query and passages)
// whose tokens are counted; their answers are scores, not tokens.
func rankingsCaps() Caps { return Caps{TokenizesInput: true, Input: Ranking} }

// checkRanking refuses a request without a query or without passages.
func checkRanking(k Kind, in Input) error {
	var missing string
	switch {
	case in.Query == "" && len(in.Passages) == 0:
		missing = "it has neither"
	case in.Query == "":
		missing = "its query is empty"
	case len(in.Passages) == 0:
		missing = "it has no passages"
	default:
		return nil
	}
	return fmt.Errorf("build %s body: a rankings request needs a query and at least one passage: %s (give each dataset entry texts named query and passages, or set --rankings-passages-mean to at least 1)", k, missing)
}

// rankingsJSON is a rankings answer: its scores are only counted.
type rankingsJSON struct {
	errorMembers
	Results  *listLen   `json:"results"`
	Rankings *listLen   `json:"rankings"`
	Usage    *usageJSON `json:"usage"`
}

// readRankings reads an answer object of kind k: Items is the length of
// its rankings[] (nim_rankings) or results[] (the others).
func readRankings(k Kind, data []byte, streaming bool) (Chunk, error) {
	if streaming {
		return Chunk{}, noStream(k)
	}
	var r rankingsJSON
	if err := unmarshalAnswer(k, data, &r); err != nil {
		return Chunk{}, err
	}
	scores := r.Results
	if k == NIMRankings {
		scores = r.Rankings
	}
	if err := r.err(scores != nil); err != nil {
		return Chunk{}, err
	}
	c := Chunk{Usage: usageOf(r.Usage)}
	if scores != nil {
		c.Items = int(*scores)
	}
	return c, nil
}

// rankingsEmpty explains a rankings answer without scores.
func rankingsEmpty(c Chunk) string {
	if c.Items > 0 {
		return ""
	}
	return "the response has no rankings"
}

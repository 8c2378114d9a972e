package endpoint

import (
	"encoding/json"
	"testing"
)

func TestRankingsBuild(t *testing.T) {
	in := Input{Model: "rerank-v3.5", Prompt: "ignored", Query: "What is deep learning?",
		Passages: []string{"Deep learning is a subset of machine learning.", "The weather is \"nice\"."}}
	extra := in
	extra.Extra = []Field{{"top_n", json.RawMessage(`2`)}, {"truncate", json.RawMessage(`"END"`)}}
	ntCheckBuilds(t, []ntBuildCase{
		{name: "cohere", kind: CohereRankings, in: in,
			want: `{"model":"rerank-v3.5","query":"What is deep learning?","documents":["Deep learning is a subset of machine learning.","The weather is \"nice\"."]}`},
		{name: "cohere extras", kind: CohereRankings, in: extra,
			want: `{"model":"rerank-v3.5","query":"What is deep learning?","documents":["Deep learning is a subset of machine learning.","The weather is \"nice\"."],"top_n":2,"truncate":"END"}`},
		{name: "tei has no model", kind: HFTEIRankings, in: in,
			want: `{"query":"What is deep learning?","texts":["Deep learning is a subset of machine learning.","The weather is \"nice\"."]}`},
		{name: "tei extras", kind: HFTEIRankings, in: extra,
			want: `{"query":"What is deep learning?","texts":["Deep learning is a subset of machine learning.","The weather is \"nice\"."],"top_n":2,"truncate":"END"}`},
		{name: "nim", kind: NIMRankings, in: in,
			want: `{"model":"rerank-v3.5","query":{"text":"What is deep learning?"},"passages":[{"text":"Deep learning is a subset of machine learning."},{"text":"The weather is \"nice\"."}]}`},
		{name: "nim extras", kind: NIMRankings, in: extra,
			want: `{"model":"rerank-v3.5","query":{"text":"What is deep learning?"},"passages":[{"text":"Deep learning is a subset of machine learning."},{"text":"The weather is \"nice\"."}],"top_n":2,"truncate":"END"}`},
		{name: "cohere without passages", kind: CohereRankings, in: Input{Model: "m", Query: "q"},
			errHas: "a rankings request needs a query and at least one passage: it has no passages"},
		{name: "tei without query", kind: HFTEIRankings, in: Input{Prompt: "q", Passages: []string{"p"}},
			errHas: "a rankings request needs a query and at least one passage: its query is empty"},
		{name: "nim without either", kind: NIMRankings, in: Input{Model: "m", Prompt: "q"},
			errHas: "a rankings request needs a query and at least one passage: it has neither"},
	})
}

func TestRankingsRead(t *testing.T) {
	ntCheckReads(t, []ntReadCase{
		{kind: CohereRankings, file: "cohere_v2.json", items: 3},
		{kind: CohereRankings, file: "empty.json", empty: true},
		{kind: CohereRankings, file: "error_cohere.json", serverErr: "list of documents must not be empty"},
		{kind: CohereRankings, file: "../hf_tei_rankings/tei.json", errHas: "parse cohere_rankings response"},

		{kind: HFTEIRankings, file: "tei.json", items: 3},
		{kind: HFTEIRankings, file: "tei_return_text.json", items: 2},
		{kind: HFTEIRankings, file: "results.json", items: 2},
		{kind: HFTEIRankings, file: "empty.json", empty: true},
		{kind: HFTEIRankings, file: "error_tei.json", serverErr: "`texts` cannot be empty"},

		{kind: NIMRankings, file: "nim.json", items: 4},
		{kind: NIMRankings, file: "empty.json", empty: true},
		{kind: NIMRankings, file: "error_nim.json", serverErr: "exceeds maximum allowed token size 512"},
		{kind: NIMRankings, file: "error_message.json", serverErr: "passages must not be empty"},
		// nim_rankings reads rankings[], not Cohere's results[].
		{kind: NIMRankings, file: "../cohere_rankings/cohere_v2.json", empty: true},
	})
}

package endpoint

import (
	"encoding/json"
	"testing"
)

func TestSolidoRAGBuild(t *testing.T) {
	ntCheckBuilds(t, []ntBuildCase{
		{name: "prompt", kind: SolidoRAG, in: Input{Model: "llama-3.1-70b", Prompt: "How do I run HSMC?", Streaming: true, MaxTokens: 50},
			want: `{"query":["How do I run HSMC?"],"filters":{"family":"Solido","tool":"SDE"},"inference_model":"llama-3.1-70b","stream":true}`},
		{name: "texts and extras", kind: SolidoRAG,
			in: Input{Model: "m", Texts: []string{"a", "b"}, Extra: []Field{{"top_k", json.RawMessage(`5`)},
				{"filters", json.RawMessage(`{"family":"Solido","tool":"PVTMC"}`)}}},
			want: `{"query":["a","b"],"filters":{"family":"Solido","tool":"PVTMC"},"inference_model":"m","top_k":5}`},
	})
}

func TestSolidoRAGRead(t *testing.T) {
	ntCheckReads(t, []ntReadCase{
		{kind: SolidoRAG, file: "response.json", text: "Use the High-Sigma Monte Carlo task in Solido Design Environment to verify 6-sigma yield with far fewer simulations.", finish: "stop"},
		{kind: SolidoRAG, file: "empty.json", empty: true, finish: "stop"},
		{kind: SolidoRAG, file: "error_message.json", serverErr: "is not available"},
		// The sources on the last event end the stream whole.
		{kind: SolidoRAG, file: "stream.sse", text: "Use the High-Sigma Monte Carlo task.", finish: "stop"},
	})
}

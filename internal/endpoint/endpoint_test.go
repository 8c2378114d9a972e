package endpoint

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/llmbench/llmbench/internal/record"
)

func TestBody(t *testing.T) {
	ignoreEOS := []Field{{"ignore_eos", json.RawMessage("true")}, {"max_tokens", json.RawMessage("9")}}
	tests := []struct {
		name string
		kind Kind
		in   Input
		want string
	}{
		// AIPerf's order (aiperf-implementation-notes C4): messages, model,
		// stream, max_completion_tokens, extras, stream_options.
		{"chat streaming", Chat, Input{Model: "m", Prompt: "hi there", MaxTokens: 5, Streaming: true},
			`{"messages":[{"role":"user","content":"hi there"}],"model":"m","stream":true,"max_completion_tokens":5}`},
		{"chat streaming with server token counts", Chat, Input{Model: "m", Prompt: "hi", MaxTokens: 5, Streaming: true, IncludeUsage: true},
			`{"messages":[{"role":"user","content":"hi"}],"model":"m","stream":true,"max_completion_tokens":5,"stream_options":{"include_usage":true}}`},
		{"include_usage only when streaming", Chat, Input{Model: "m", Prompt: "hi", IncludeUsage: true},
			`{"messages":[{"role":"user","content":"hi"}],"model":"m","stream":false}`},
		{"chat legacy max_tokens", Chat, Input{Model: "m", Prompt: "x", MaxTokens: 7, LegacyMaxTokens: true},
			`{"messages":[{"role":"user","content":"x"}],"model":"m","stream":false,"max_tokens":7}`},
		{"chat no max", Chat, Input{Model: "m", Prompt: "x"},
			`{"messages":[{"role":"user","content":"x"}],"model":"m","stream":false}`},
		{"completions with extra replacing a built key in place", Completions, Input{Model: "m", Prompt: "p", MaxTokens: 3, Extra: ignoreEOS},
			`{"prompt":"p","model":"m","stream":false,"max_tokens":9,"ignore_eos":true}`},
		{"extra stream_options wins", Completions, Input{Model: "m", Prompt: "p", Streaming: true, IncludeUsage: true, Extra: []Field{{"stream_options", json.RawMessage(`{"include_usage":false}`)}}},
			`{"prompt":"p","model":"m","stream":true,"stream_options":{"include_usage":false}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := tc.kind.Body(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.want {
				t.Fatalf("body\n got %s\nwant %s", b, tc.want)
			}
			if !json.Valid(b) {
				t.Fatalf("invalid JSON %s", b)
			}
		})
	}
}

func TestParseExtraInputs(t *testing.T) {
	got, err := ParseExtraInputs([]string{"ignore_eos:true", "min_tokens:10", "tag:hello", `obj:{"a":1}`, "url:http://x",
		`{"temperature":0.5,"min_tokens":20}`, "tag: spaced"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Field{{"ignore_eos", json.RawMessage("true")}, {"min_tokens", json.RawMessage("20")}, {"tag", json.RawMessage(`" spaced"`)},
		{"obj", json.RawMessage(`{"a":1}`)}, {"url", json.RawMessage(`"http://x"`)}, {"temperature", json.RawMessage("0.5")}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	for _, bad := range []string{"novalue", `{"a":1`, `{"a":1} x`, "{not json}"} {
		if _, err := ParseExtraInputs([]string{bad}); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}

func TestParseChunk(t *testing.T) {
	tests := []struct {
		name    string
		kind    Kind
		data    string
		want    Chunk
		wantErr bool
	}{
		{"done", Chat, "[DONE]", Chunk{Done: true}, false},
		{"chat delta", Chat, `{"choices":[{"index":0,"delta":{"content":" bako"},"finish_reason":null}]}`, Chunk{Text: []byte(" bako"), Choices: 1}, false},
		{"chat finish", Chat, `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`, Chunk{Choices: 1, FinishReason: "stop"}, false},
		{"chat empty choices", Chat, `{"id":"x","choices":[]}`, Chunk{}, false},
		{"chat role only", Chat, `{"choices":[{"delta":{"role":"assistant","content":""}}]}`, Chunk{Choices: 1}, false},
		{"chat null content", Chat, `{"choices":[{"delta":{"content":null}}]}`, Chunk{Choices: 1}, false},
		{"chat reasoning", Chat, `{"choices":[{"delta":{"reasoning_content":"think"}}]}`, Chunk{Reasoning: []byte("think"), Choices: 1}, false},
		// vLLM's newer field name, and both with content in one chunk.
		{"chat reasoning (newer key)", Chat, `{"choices":[{"delta":{"reasoning":"hmm"}}]}`, Chunk{Reasoning: []byte("hmm"), Choices: 1}, false},
		{"chat reasoning and content", Chat, `{"choices":[{"delta":{"content":"ok","reasoning":"so"}}]}`, Chunk{Text: []byte("ok"), Reasoning: []byte("so"), Choices: 1}, false},
		{"usage chunk", Chat, `{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":7,"total_tokens":12,"completion_tokens_details":{"reasoning_tokens":2}}}`,
			Chunk{Usage: &record.Usage{PromptTokens: 5, CompletionTokens: 7, TotalTokens: 12, ReasoningTokens: 2, HasReasoning: true}}, false},
		{"completions", Completions, `{"choices":[{"text":"abc","index":0}]}`, Chunk{Text: []byte("abc"), Choices: 1}, false},
		// Tool calls count as output text, as AIPerf counts them: the
		// function's name when it comes, then its arguments' pieces.
		{"chat tool call starts", Chat, `{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]},"finish_reason":null}]}`,
			Chunk{Text: []byte("get_weather"), Choices: 1}, false},
		{"chat tool call arguments", Chat, `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\": \"Par"}}]},"finish_reason":null}]}`,
			Chunk{Text: []byte(`{"city": "Par`), Choices: 1}, false},
		{"chat tool calls null", Chat, `{"choices":[{"index":0,"delta":{"content":"hi","tool_calls":null}}]}`, Chunk{Text: []byte("hi"), Choices: 1}, false},
		{"garbage", Chat, `{"choices":[`, Chunk{}, true},
		{"openai error", Chat, `{"error":{"message":"overloaded","code":503}}`, Chunk{}, true},
		{"vllm error", Chat, `{"object":"error","message":"bad","code":400}`, Chunk{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.kind.ParseChunk([]byte(tc.data))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
	_, err := Chat.ParseChunk([]byte(`{"error":{"message":"overloaded","code":503}}`))
	if se, ok := err.(*ServerError); !ok || se.Code != 503 || se.Message != "overloaded" {
		t.Fatalf("error = %#v, want ServerError 503 overloaded", err)
	}
}

func TestParseResponseToolCalls(t *testing.T) {
	body := `{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[` +
		`{"id":"a","type":"function","function":{"name":"f","arguments":"{\"x\":1}"}},{"id":"b","type":"function","function":{"name":"g","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`
	got, err := Chat.ParseResponse([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Text) != `f{"x":1}g{}` || got.FinishReason != "tool_calls" || Chat.Type().Empty(got) != "" {
		t.Fatalf("got %+v", got)
	}
}

func TestParseResponse(t *testing.T) {
	body := `{"id":"x","choices":[{"index":0,"message":{"role":"assistant","content":"hello world"},"finish_reason":"length"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`
	got, err := Chat.ParseResponse([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := Chunk{Text: []byte("hello world"), Choices: 1, FinishReason: "length", Usage: &record.Usage{PromptTokens: 3, CompletionTokens: 2, TotalTokens: 5}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v", got)
	}
}

func FuzzParseChunk(f *testing.F) {
	for _, s := range []string{"[DONE]", `{"choices":[{"delta":{"content":"a"}}]}`, `{"error":{"message":"x"}}`, `{"usage":{"prompt_tokens":1}}`, `{`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Chat.ParseChunk([]byte(s))
		if err == nil && !json.Valid([]byte(s)) && !c.Done {
			t.Fatalf("accepted invalid JSON %q", s)
		}
		_, _ = Completions.ParseChunk([]byte(s))
	})
}

func BenchmarkParseChunk(b *testing.B) {
	data := []byte(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" bako"},"finish_reason":null}]}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Chat.ParseChunk(data); err != nil {
			b.Fatal(err)
		}
	}
}

// TestBodyWithHistory: a later turn carries the system message, the
// earlier turns and answers, then the new user message; completions, which
// have no roles, get them one a line.
func TestBodyWithHistory(t *testing.T) {
	in := Input{Model: "m", Prompt: "and then?", System: "be brief", History: []Message{{"user", "hi"}, {"assistant", "hello \"you\""}}}
	got, err := Chat.Body(in)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"},{"role":"assistant","content":"hello \"you\""},{"role":"user","content":"and then?"}],"model":"m","stream":false}`
	if string(got) != want {
		t.Errorf("chat body\n%s\nwant\n%s", got, want)
	}
	got, _ = Completions.Body(in)
	if want := `{"prompt":"be brief\nhi\nhello \"you\"\nand then?","model":"m","stream":false}`; string(got) != want {
		t.Errorf("completions body\n%s\nwant\n%s", got, want)
	}
}

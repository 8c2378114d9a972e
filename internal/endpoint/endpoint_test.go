package endpoint

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/llmbench/llmbench/internal/record"
)

func TestBody(t *testing.T) {
	tests := []struct {
		name string
		kind Kind
		in   Input
		want string
	}{
		{"chat streaming", Chat, Input{Model: "m", Prompt: "hi there", MaxTokens: 5, Streaming: true},
			`{"max_tokens":5,"messages":[{"content":"hi there","role":"user"}],"model":"m","stream":true,"stream_options":{"include_usage":true}}`},
		{"chat no max", Chat, Input{Model: "m", Prompt: "x"},
			`{"messages":[{"content":"x","role":"user"}],"model":"m","stream":false}`},
		{"completions with extra", Completions, Input{Model: "m", Prompt: "p", MaxTokens: 3, Extra: map[string]any{"ignore_eos": true, "max_tokens": 9}},
			`{"ignore_eos":true,"max_tokens":9,"model":"m","prompt":"p","stream":false}`},
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
		})
	}
}

func TestParseExtraInputs(t *testing.T) {
	got, err := ParseExtraInputs([]string{"ignore_eos:true", "min_tokens:10", "tag:hello", "obj:{\"a\":1}", "url:http://x"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"ignore_eos": true, "min_tokens": 10.0, "tag": "hello", "obj": map[string]any{"a": 1.0}, "url": "http://x"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v", got)
	}
	if _, err := ParseExtraInputs([]string{"novalue"}); err == nil {
		t.Fatal("want an error for a pair without ':'")
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
		{"usage chunk", Chat, `{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":7,"total_tokens":12,"completion_tokens_details":{"reasoning_tokens":2}}}`,
			Chunk{Usage: &record.Usage{PromptTokens: 5, CompletionTokens: 7, TotalTokens: 12, ReasoningTokens: 2, HasReasoning: true}}, false},
		{"completions", Completions, `{"choices":[{"text":"abc","index":0}]}`, Chunk{Text: []byte("abc"), Choices: 1}, false},
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

package endpoint

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestHuggingFaceGenerateBuild(t *testing.T) {
	ntCheckBuilds(t, []ntBuildCase{
		{name: "prompt, no limit: empty parameters", kind: HuggingFaceGenerate,
			in:   Input{Model: "m", Prompt: "What is deep learning?"},
			want: `{"inputs":"What is deep learning?","parameters":{}}`},
		{name: "streaming adds no key", kind: HuggingFaceGenerate,
			in:   Input{Model: "m", Prompt: "hi", MaxTokens: 20, Streaming: true},
			want: `{"inputs":"hi","parameters":{"max_new_tokens":20}}`},
		{name: "extras inside parameters", kind: HuggingFaceGenerate,
			in: Input{Prompt: "hi", MaxTokens: 20, Extra: []Field{{"temperature", json.RawMessage(`0.7`)},
				{"max_new_tokens", json.RawMessage(`64`)}, {"details", json.RawMessage(`true`)}}},
			want: `{"inputs":"hi","parameters":{"max_new_tokens":64,"temperature":0.7,"details":true}}`},
		{name: "texts joined by spaces", kind: HuggingFaceGenerate,
			in:   Input{Texts: []string{"one", "", "two"}},
			want: `{"inputs":"one two","parameters":{}}`},
		{name: "conversation: system, history, prompt", kind: HuggingFaceGenerate,
			in: Input{System: "Be brief.", History: []Message{{"user", "Hi."}, {"assistant", "Hello!"}, {"user", ""}},
				Prompt: "Name a color."},
			want: `{"inputs":"Be brief. Hi. Hello! Name a color.","parameters":{}}`},
	})
}

func TestHuggingFaceGenerateRead(t *testing.T) {
	ntCheckReads(t, []ntReadCase{
		{kind: HuggingFaceGenerate, file: "generate.json", text: " Deep learning is a subset of machine learning that uses neural networks with many layers."},
		{kind: HuggingFaceGenerate, file: "generate_details.json", text: " Deep learning is a subset", finish: "length"},
		{kind: HuggingFaceGenerate, file: "generate_list.json", text: "Paris is the capital of France."},
		{kind: HuggingFaceGenerate, file: "empty.json", empty: true},
		{kind: HuggingFaceGenerate, file: "error_tgi.json", serverErr: "must be <= 4096"},
		// The special </s> of the last event is no output; the last event
		// ends the stream.
		{kind: HuggingFaceGenerate, file: "stream.sse", text: " Deep learning is", finish: "stop"},
		{kind: HuggingFaceGenerate, file: "stream_details.sse", text: `Paris is the "capital"`, finish: "length"},
		{kind: HuggingFaceGenerate, file: "stream_error.sse", serverErr: "CUDA out of memory"},
	})
}

// TestTGIScan: the one-pass reading of stream events reads the usual
// shapes, agreeing with encoding/json, and leaves the others to it.
func TestTGIScan(t *testing.T) {
	var usual [][]byte
	for _, name := range []string{"stream.sse", "stream_details.sse"} {
		usual = append(usual, ntEvents(ntFixture(t, HuggingFaceGenerate, name))...)
	}
	usual = append(usual, []byte(`{"token":{"text":"caf\u00e9\n","special":null},"generated_text":null}`), []byte(`{"token":null}`))
	for _, ev := range usual {
		var fast, slow State
		got, ok := scanTGIEvent(ev, &fast)
		if !ok {
			t.Errorf("%s: left to encoding/json", ev)
			continue
		}
		want, err := readTGIEvent(ev, &slow)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n scan %+v\n json %+v, %v", ev, got, want, err)
		}
	}
	for _, ev := range []string{
		`{"error":"Request failed","error_type":"generation"}`,
		`{"Token":{"text":"a"}}`,
		`{"token":{"text":"a"},"token":{"text":"b"}}`,
		`{"token":{"text":"a","special":1}}`,
		`{"token":{"text":"a\ud800"}}`,
		`{"token":{"text":"a"},"generated_text":"a","details":{"finish_reason":"\u006cength"}}`,
		`{"token":{"text":"a"}} x`,
		`[{"token":{"text":"a"}}]`,
	} {
		if c, ok := scanTGIEvent([]byte(ev), &State{}); ok {
			t.Errorf("%s: read as %+v, want it left to encoding/json", ev, c)
		}
	}
}

func BenchmarkTGIStreamEvent(b *testing.B) {
	ev := ntEvents(ntFixture(b, HuggingFaceGenerate, "stream.sse"))[1]
	d := HuggingFaceGenerate.NewDecoder()
	b.ReportAllocs()
	b.SetBytes(int64(len(ev)))
	for b.Loop() {
		if _, err := d.Chunk(ev); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTGIStreamEventEncodingJSON(b *testing.B) {
	ev := ntEvents(ntFixture(b, HuggingFaceGenerate, "stream.sse"))[1]
	var st State
	b.ReportAllocs()
	b.SetBytes(int64(len(ev)))
	for b.Loop() {
		if _, err := readTGIEvent(ev, &st); err != nil {
			b.Fatal(err)
		}
	}
}

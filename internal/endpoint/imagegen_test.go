package endpoint

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/internal/record"
)

func TestImageGenBuild(t *testing.T) {
	tests := []struct {
		name string
		in   Input
		want string
	}{
		{"non-streaming", Input{Model: "gpt-image-1", Prompt: "a cat"},
			`{"prompt":"a cat","model":"gpt-image-1","response_format":"b64_json","n":1}`},
		{"streaming", Input{Model: "m", Prompt: "a cat", Streaming: true},
			`{"prompt":"a cat","model":"m","response_format":"b64_json","n":1,"stream":true}`},
		{"first text of a batch; extras replace in place, then append", Input{Model: "m", Texts: []string{"one", "two"},
			Extra: []Field{{"n", json.RawMessage("2")}, {"size", json.RawMessage(`"512x512"`)}, {"partial_images", json.RawMessage("2")}}},
			`{"prompt":"one","model":"m","response_format":"b64_json","n":2,"size":"512x512","partial_images":2}`},
		{"max tokens is not sent", Input{Model: "m", Prompt: "p", MaxTokens: 9},
			`{"prompt":"p","model":"m","response_format":"b64_json","n":1}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := ImageGeneration.Body(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.want {
				t.Fatalf("body\n got %s\nwant %s", b, tc.want)
			}
		})
	}
	if _, err := ImageGeneration.Body(Input{Model: "m"}); err == nil || !strings.Contains(err.Error(), "no prompt") {
		t.Fatalf("no prompt: err %v", err)
	}
}

func TestImageGenCaps(t *testing.T) {
	c := ImageGeneration.Caps()
	if !c.TokenizesInput || !c.Streams || c.ProducesTokens || c.Multipart || c.Media != 0 {
		t.Fatalf("caps %+v", c)
	}
	if ImageGeneration.Path(true) != "/v1/images/generations" || c.ContentType() != "application/json" {
		t.Fatal(ImageGeneration.Path(true), c.ContentType())
	}
}

// imageUsage is the usage of the image fixtures.
var imageUsage = &record.Usage{PromptTokens: 50, CompletionTokens: 50, TotalTokens: 100}

func TestImageGenRead(t *testing.T) {
	tests := []struct {
		file      string
		streaming bool
		want      Chunk
	}{
		{"openai-b64.json", false, Chunk{Items: 1, Usage: imageUsage}},
		{"openai-url.json", false, Chunk{Items: 2}},
		{"sglang.json", false, Chunk{Items: 1}},
		{"empty.json", false, Chunk{}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			var st State
			got, err := ImageGeneration.Type().Read(fixture(t, ImageGeneration, tc.file), tc.streaming, &st)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
	if msg := ImageGeneration.Type().Empty(Chunk{}); msg == "" {
		t.Fatal("an answer without images is accepted")
	}
	if msg := ImageGeneration.Type().Empty(Chunk{Items: 1}); msg != "" {
		t.Fatal(msg)
	}
}

// TestImageGenStream reads OpenAI's event sequence as the client does:
// partial images are content arrivals without items; the completed image
// is the one item, with the usage, and ends the stream.
func TestImageGenStream(t *testing.T) {
	dec := ImageGeneration.NewDecoder()
	events := sseData(t, ImageGeneration, "stream.sse")
	want := []Chunk{{Partial: true}, {Partial: true}, {Items: 1, Usage: imageUsage, Done: true}}
	if len(events) != len(want) {
		t.Fatalf("%d events", len(events))
	}
	for i, ev := range events {
		got, err := dec.Chunk(ev)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want[i]) || !got.HasContent() {
			t.Fatalf("event %d: got %+v\nwant %+v", i, got, want[i])
		}
	}
	// Untyped events, as AIPerf reads them: partial_image_index marks a
	// partial image.
	for _, tc := range []struct {
		data string
		want Chunk
	}{
		{`{"b64_json":"AAAA","partial_image_index":0}`, Chunk{Partial: true}},
		{`{"b64_json":"AAAA"}`, Chunk{Items: 1}},
		{`{"type":"image_generation.partial_image","b64_json":""}`, Chunk{}},
		{`{"type":"image_generation.completed","b64_json":"","usage":null}`, Chunk{Done: true}},
		{`{"type":"something.else","b64_json":"AAAA"}`, Chunk{}},
	} {
		got, err := dec.Chunk([]byte(tc.data))
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %+v, %v\nwant %+v", tc.data, got, err, tc.want)
		}
	}
}

func TestImageReadErrors(t *testing.T) {
	for _, k := range []Kind{ImageGeneration, ImageEdit} {
		for _, tc := range []struct {
			data   string
			server bool
		}{
			{string(fixture(t, ImageGeneration, "error.json")), true},
			{string(fixture(t, ImageEdit, "error.json")), true},
			{`{"type":"error","code":"rate_limit_exceeded","message":"slow down"}`, true},
			{`{"error":"overloaded"}`, true},
			{`{"data":[{"b64_json":1}]}`, false},
			{`{"data":`, false},
			{`<html>`, false},
		} {
			_, err := k.Type().Read([]byte(tc.data), true, &State{})
			if err == nil || IsServerError(err) != tc.server {
				t.Errorf("%s %s: err %v, want server error %v", k, tc.data, err, tc.server)
				continue
			}
			if !tc.server && !strings.Contains(err.Error(), "parse "+string(k)+" response") {
				t.Errorf("%s: error without context: %v", k, err)
			}
		}
	}
}

// BenchmarkImageGenRead reads a completed event carrying a 1 MiB image.
func BenchmarkImageGenRead(b *testing.B) {
	data := []byte(`{"type":"image_generation.completed","b64_json":"` + strings.Repeat("iVBORw0K", 1<<17) +
		`","size":"1024x1024","usage":{"total_tokens":100,"input_tokens":50,"output_tokens":50}}`)
	typ := ImageGeneration.Type()
	var st State
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := typ.Read(data, true, &st); err != nil {
			b.Fatal(err)
		}
	}
}

package endpoint

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/llmbench/llmbench/internal/record"
)

func TestEmbeddingsBuild(t *testing.T) {
	png := MediaItem{URL: "data:image/png;base64,iVBORw0KGgo=", Format: "png"}
	jpeg := MediaItem{URL: "https://example.com/cat.jpg", Format: "jpeg"}
	ntCheckBuilds(t, []ntBuildCase{
		{name: "embeddings batch", kind: Embeddings,
			in:   Input{Model: "text-embedding-3-small", Prompt: "first", Texts: []string{"first", "second"}},
			want: `{"model":"text-embedding-3-small","input":["first","second"]}`},
		{name: "embeddings prompt, empty texts dropped, no token limit", kind: Embeddings,
			in:   Input{Model: "m", Texts: []string{"a", "", "b"}, MaxTokens: 10, Streaming: true},
			want: `{"model":"m","input":["a","b"]}`},
		{name: "embeddings extras after, a built key replaced in place", kind: Embeddings,
			in: Input{Model: "m", Prompt: "hi", Extra: []Field{{"encoding_format", json.RawMessage(`"float"`)},
				{"model", json.RawMessage(`"other"`)}, {"dimensions", json.RawMessage(`256`)}}},
			want: `{"model":"other","input":["hi"],"encoding_format":"float","dimensions":256}`},
		{name: "chat_embeddings text", kind: ChatEmbeddings,
			in:   Input{Model: "m", System: "Represent the query", Prompt: "cats", MaxTokens: 9, Streaming: true},
			want: `{"messages":[{"role":"system","content":"Represent the query"},{"role":"user","content":"cats"}],"model":"m"}`},
		{name: "chat_embeddings image and extras", kind: ChatEmbeddings,
			in: Input{Model: "TIGER-Lab/VLM2Vec-Full", Prompt: "Represent the given image.", Images: []MediaItem{png},
				Extra: []Field{{"encoding_format", json.RawMessage(`"float"`)}}},
			want: `{"messages":[{"role":"user","content":[{"type":"text","text":"Represent the given image."},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}}]}],"model":"TIGER-Lab/VLM2Vec-Full","encoding_format":"float"}`},
		{name: "nim_embeddings texts, input_type only from extras", kind: NIMEmbeddings,
			in:   Input{Model: "nvidia/nv-embedqa-e5-v5", Texts: []string{"q1", "q2"}},
			want: `{"model":"nvidia/nv-embedqa-e5-v5","input":["q1","q2"]}`},
		{name: "nim_embeddings input_type extra", kind: NIMEmbeddings,
			in:   Input{Model: "m", Prompt: "q", Extra: []Field{{"input_type", json.RawMessage(`"query"`)}, {"truncate", json.RawMessage(`"END"`)}}},
			want: `{"model":"m","input":["q"],"input_type":"query","truncate":"END"}`},
		{name: "nim_embeddings images only", kind: NIMEmbeddings,
			in:   Input{Model: "m", Images: []MediaItem{png, jpeg}},
			want: `{"model":"m","input":["data:image/png;base64,iVBORw0KGgo=","https://example.com/cat.jpg"]}`},
		{name: "nim_embeddings text and image pairs", kind: NIMEmbeddings,
			in:   Input{Model: "m", Texts: []string{"a cat", "a dog"}, Images: []MediaItem{png, jpeg}},
			want: `{"model":"m","input":["a cat data:image/png;base64,iVBORw0KGgo=","a dog https://example.com/cat.jpg"]}`},
		{name: "nim_embeddings unequal counts", kind: NIMEmbeddings,
			in:     Input{Model: "m", Texts: []string{"a", "b"}, Images: []MediaItem{png}},
			errHas: "2 texts and 1 images"},
	})
}

func TestEmbeddingsRead(t *testing.T) {
	ntCheckReads(t, []ntReadCase{
		{kind: Embeddings, file: "openai.json", items: 2, usage: &record.Usage{PromptTokens: 8, TotalTokens: 8}},
		{kind: Embeddings, file: "openai_base64.json", items: 3, usage: &record.Usage{PromptTokens: 12, TotalTokens: 12}},
		{kind: Embeddings, file: "vllm.json", items: 3, usage: &record.Usage{PromptTokens: 27, TotalTokens: 27}},
		{kind: Embeddings, file: "tei_openai.json", items: 1, usage: &record.Usage{PromptTokens: 7, TotalTokens: 7}},
		{kind: Embeddings, file: "empty.json", empty: true},
		{kind: Embeddings, file: "tei_embed.json", errHas: "parse embeddings response"},
		{kind: Embeddings, file: "not_embedding.json", errHas: `data[1] is of object "list"`},
		{kind: Embeddings, file: "error_openai.json", serverErr: "maximum context length is 8192 tokens"},
		{kind: Embeddings, file: "error_vllm.json", serverErr: "maximum context length is 4096 tokens"},
		{kind: Embeddings, file: "error_tei.json", serverErr: "Input validation error"},

		{kind: ChatEmbeddings, file: "vllm.json", items: 1, usage: &record.Usage{PromptTokens: 2393, TotalTokens: 2393}},
		{kind: ChatEmbeddings, file: "embeddings_key.json", items: 3},
		{kind: ChatEmbeddings, file: "embedding_key.json", items: 1},
		{kind: ChatEmbeddings, file: "empty.json", usage: &record.Usage{PromptTokens: 5, TotalTokens: 5}, empty: true},
		{kind: ChatEmbeddings, file: "error_vllm.json", serverErr: "does not support Embeddings API"},

		{kind: NIMEmbeddings, file: "nim.json", items: 2, usage: &record.Usage{PromptTokens: 20, TotalTokens: 20}},
		{kind: NIMEmbeddings, file: "error_nim.json", serverErr: "exceeds maximum allowed token size 512"},
		{kind: NIMEmbeddings, file: "error_message.json", serverErr: "must include input_type"},
		// The other embeddings types read data[] only.
		{kind: NIMEmbeddings, file: "../chat_embeddings/embeddings_key.json", empty: true},
	})
}

func TestVectors(t *testing.T) {
	for _, tc := range []struct {
		data string
		n    int
	}{
		{`[0.1,0.2]`, 1},
		{`[-1]`, 1},
		{`[[0.1],[0.2],[0.3]]`, 3},
		{`[]`, 0},
		{`["AAAA"]`, 0},
		{`{"a":[1]}`, 0},
		{`"x"`, 0},
		{`[ `, 0},
	} {
		var v vectors
		if err := v.UnmarshalJSON([]byte(tc.data)); err != nil || int(v) != tc.n {
			t.Errorf("vectors(%s) = %d, %v; want %d", tc.data, v, err, tc.n)
		}
	}
}

// BenchmarkEmbeddingsRead: a batch of 8 vectors of 1024 dimensions,
// counted, not decoded.
func BenchmarkEmbeddingsRead(b *testing.B) {
	var body []byte
	body = append(body, `{"object":"list","data":[`...)
	for i := range 8 {
		if i > 0 {
			body = append(body, ',')
		}
		body = append(body, `{"object":"embedding","index":0,"embedding":[`...)
		for j := range 1024 {
			if j > 0 {
				body = append(body, ',')
			}
			body = append(body, "-0.0123456789"...)
		}
		body = append(body, "]}"...)
	}
	body = append(body, `],"model":"m","usage":{"prompt_tokens":64,"total_tokens":64}}`...)
	d := Embeddings.NewDecoder()
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if c, err := d.Response(body); err != nil || c.Items != 8 {
			b.Fatal(c.Items, err)
		}
	}
}

// TestEmbeddingsScan: the one-pass reading takes the usual answers,
// agreeing with encoding/json, and leaves the others to it.
func TestEmbeddingsScan(t *testing.T) {
	for _, name := range []string{"openai.json", "openai_base64.json", "vllm.json", "tei_openai.json", "empty.json"} {
		data := ntFixture(t, Embeddings, name)
		got, ok := scanEmbeddings(data)
		if !ok {
			t.Errorf("%s: left to encoding/json", name)
			continue
		}
		want, err := parseEmbeddings(Embeddings, data)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n scan %+v\n json %+v, %v", name, got, want, err)
		}
	}
	for _, data := range []string{
		`{"error":{"message":"x"}}`,
		`{"object":"error","message":"x"}`,
		`{"message":"x"}`,
		`{"data":[{"object":"list"}]}`,
		`{"data":[null]}`,
		`{"data":[{"object":"embedding","embedding":[1]}],"data":[]}`,
		`{"Data":[]}`,
		`{"embeddings":[[1]]}`,
		`{"data":[{"object":"embedding","embedding":[1,]}]}`,
		`{"data":[]} {}`,
	} {
		if c, ok := scanEmbeddings([]byte(data)); ok {
			t.Errorf("%s: read as %+v, want it left to encoding/json", data, c)
		}
	}
}

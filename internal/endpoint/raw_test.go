package endpoint

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/internal/record"
)

func TestRawCaps(t *testing.T) {
	for _, tc := range []struct {
		kind Kind
		caps Caps
	}{
		{Raw, Caps{ProducesTokens: true, TokenizesInput: true, Streams: true, Media: Image | Audio | Video, Input: Payload}},
		{Template, Caps{ProducesTokens: true, TokenizesInput: true, Streams: true, Media: Image | Audio | Video, Input: Conversation}},
	} {
		if p := tc.kind.Path(false) + tc.kind.Path(true); p != "" {
			t.Errorf("%s: Path = %q, want nothing appended to --url", tc.kind, p)
		}
		if got := tc.kind.Caps(); !reflect.DeepEqual(got, tc.caps) {
			t.Errorf("%s: Caps = %+v, want %+v", tc.kind, got, tc.caps)
		}
		if k, err := Parse(string(tc.kind)); err != nil || k != tc.kind {
			t.Errorf("Parse(%q) = %q, %v", tc.kind, k, err)
		}
	}
}

func TestRawBuild(t *testing.T) {
	body := []byte(`{"prompt":"x","stream":false}`)
	got, err := Raw.Body(Input{Payload: body})
	if err != nil || string(got) != string(body) {
		t.Errorf("Build with a payload = %s, %v; want it as it is", got, err)
	}
	_, err = Raw.Body(Input{Model: "m", Prompt: "hi"})
	if err == nil || !strings.Contains(err.Error(), "--custom-dataset-type raw_payload or inputs_json") {
		t.Errorf("Build without a payload: error %v, want one pointing at raw_payload datasets", err)
	}
}

func TestRawConfigure(t *testing.T) {
	extra := []Field{{"temperature", json.RawMessage("0.5")}, {"response_field", json.RawMessage(`"output.text"`)},
		{"top_p", json.RawMessage("1")}}
	typ, rest, err := Configure(Raw, extra)
	if err != nil {
		t.Fatal(err)
	}
	want := []Field{{"temperature", json.RawMessage("0.5")}, {"top_p", json.RawMessage("1")}}
	if !reflect.DeepEqual(rest, want) {
		t.Errorf("extras left = %v, want %v", rest, want)
	}
	if r, ok := typ.(rawType); !ok || r.answer.field != "output.text" || r.answer.query == nil {
		t.Errorf("Configure = %#v, want a raw type reading output.text", typ)
	}
	// response_field:[0] reaches Configure as JSON, and is a JMESPath
	// expression too.
	if typ, _, err := Configure(Raw, []Field{{"response_field", json.RawMessage("[0]")}}); err != nil || typ.(rawType).answer.field != "[0]" {
		t.Errorf("response_field [0]: %v, %v", typ, err)
	}
	for _, tc := range []struct {
		kind  Kind
		extra []Field
		want  string
	}{
		{Raw, []Field{{"response_field", json.RawMessage(`"choices[0"`)}}, `response_field "choices[0" is not a JMESPath expression`},
		{Template, []Field{{"payload_template", json.RawMessage(`"{}"`)}, {"response_field", json.RawMessage(`"a..b"`)}}, `response_field "a..b" is not a JMESPath expression`},
		{Template, nil, "needs --extra-inputs payload_template:<jinja template, file or nv-embedqa>"},
		{Template, []Field{{"payload_template", json.RawMessage(`""`)}}, "needs --extra-inputs payload_template"},
		{Template, []Field{{"payload_template", json.RawMessage(`"{\"a\": {% for x in %}}"`)}}, "payload_template inline is not a Jinja template"},
	} {
		_, _, err := Configure(tc.kind, tc.extra)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %v: error %v, want one with %q", tc.kind, tc.extra, err, tc.want)
		}
	}
}

// rawReadCase is what reading a fixture of testdata/raw/ with a type so
// configured must give.
type rawReadCase struct {
	kind  Kind
	field string // response_field
	file  string
	text  string
	items int
	// choices and finish are OpenAI's, when the answer is theirs.
	choices   int
	finish    string
	usage     *record.Usage
	serverErr string
	// empty: Empty must say why the answer is none, naming this.
	empty string
}

// rawRead reads testdata/raw/<file> as k configured with field: a whole
// response, or a stream's events added up as the client adds them.
func rawRead(t testing.TB, k Kind, field, file string) (Chunk, string, error) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "raw", file))
	if err != nil {
		t.Fatal(err)
	}
	extra := []Field{{"payload_template", json.RawMessage(`"{}"`)}}
	if field != "" {
		extra = append(extra, Field{"response_field", mustJSON(t, field)})
	}
	typ, _, err := Configure(k, extra)
	if err != nil {
		t.Fatal(err)
	}
	d := NewDecoderFor(k, typ)
	if !strings.HasSuffix(file, ".sse") {
		c, err := d.Response(data)
		if err == nil {
			c.Text = append([]byte(nil), c.Text...)
		}
		return c, d.Empty(c), err
	}
	var sum Chunk
	for _, ev := range ntEvents(data) {
		c, err := d.Chunk(ev)
		if err != nil {
			return sum, "", err
		}
		if c.Done {
			break
		}
		sum.Text = append(sum.Text, c.Text...)
		sum.Items += c.Items
		sum.Choices = max(sum.Choices, c.Choices)
		if c.FinishReason != "" {
			sum.FinishReason = c.FinishReason
		}
		if c.Usage != nil {
			sum.Usage = c.Usage
		}
	}
	return sum, d.Empty(sum), nil
}

func mustJSON(t testing.TB, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRawRead(t *testing.T) {
	chatUsage := &record.Usage{PromptTokens: 5, CompletionTokens: 2, TotalTokens: 7}
	for _, tc := range []rawReadCase{
		// Auto-detection, every shape.
		{kind: Raw, file: "openai_chat.json", text: "Hello there", choices: 1, finish: "stop", usage: chatUsage},
		{kind: Raw, file: "openai_completions.json", text: " to be or not", choices: 2, finish: "length",
			usage: &record.Usage{PromptTokens: 3, CompletionTokens: 4, TotalTokens: 7}},
		{kind: Raw, file: "openai_embeddings.json", items: 2, usage: &record.Usage{PromptTokens: 8, TotalTokens: 8}},
		{kind: Raw, file: "embeddings_key.json", items: 3},
		{kind: Raw, file: "embedding_key.json", items: 1},
		{kind: Raw, file: "cohere_rankings.json", items: 3},
		{kind: Raw, file: "nim_rankings.json", items: 2},
		{kind: Raw, file: "tei_rerank.json", items: 2},
		{kind: Raw, file: "ollama_generate.json", text: "The sky is blue."},
		{kind: Raw, file: "text_list.json", text: "ABC"},
		{kind: Raw, file: "plain.txt", text: "just some text, not JSON"},
		{kind: Raw, file: "unknown.json", empty: "response_field:<JMESPath expression>"},
		{kind: Raw, file: "nested.json", usage: &record.Usage{PromptTokens: 2, CompletionTokens: 2, TotalTokens: 4}, empty: "where the usual APIs put them"},
		{kind: Raw, file: "error_openai.json", serverErr: "does not exist"},
		{kind: Raw, file: "error_vllm.json", serverErr: "max_tokens is too large"},
		{kind: Template, file: "openai_chat.json", text: "Hello there", choices: 1, finish: "stop", usage: chatUsage},
		{kind: Template, file: "error_openai.json", serverErr: "does not exist"},
		// response_field.
		{kind: Raw, field: "output.choices[0].text", file: "nested.json", text: "nested answer",
			usage: &record.Usage{PromptTokens: 2, CompletionTokens: 2, TotalTokens: 4}},
		{kind: Raw, field: "output", file: "nested.json", text: "nested answer", choices: 1, finish: "stop",
			usage: &record.Usage{PromptTokens: 2, CompletionTokens: 2, TotalTokens: 4}},
		{kind: Raw, field: "data[*].embedding", file: "openai_embeddings.json", items: 2, usage: &record.Usage{PromptTokens: 8, TotalTokens: 8}},
		{kind: Raw, field: "data[0].embedding", file: "openai_embeddings.json", items: 1, usage: &record.Usage{PromptTokens: 8, TotalTokens: 8}},
		{kind: Raw, field: "results", file: "cohere_rankings.json", items: 3},
		{kind: Raw, field: "[*].score", file: "tei_rerank.json", items: 1},
		{kind: Raw, field: "choices[*].text", file: "openai_completions.json", text: " to be or not to be",
			usage: &record.Usage{PromptTokens: 3, CompletionTokens: 4, TotalTokens: 7}},
		{kind: Raw, field: "usage.total_tokens", file: "openai_chat.json", text: "7", usage: chatUsage},
		{kind: Raw, field: "answer.value", file: "unknown.json", text: "hidden"},
		{kind: Template, field: "answer.value", file: "unknown.json", text: "hidden"},
		// A field that selects nothing: raw auto-detects, template does not.
		{kind: Raw, field: "generated_text", file: "ollama_generate.json", text: "The sky is blue."},
		{kind: Template, field: "generated_text", file: "ollama_generate.json", empty: `response_field "generated_text" selects nothing`},
		{kind: Raw, field: "nothing", file: "unknown.json", empty: `response_field "nothing" selects nothing`},
		// Streams, event by event.
		{kind: Raw, file: "stream.sse", text: "Hello", choices: 1, finish: "stop", usage: &record.Usage{PromptTokens: 4, CompletionTokens: 2, TotalTokens: 6}},
		// The first event's "" selects nothing: raw auto-detects it (an
		// OpenAI choice, without content).
		{kind: Raw, field: "choices[0].delta.content", file: "stream.sse", text: "Hello", choices: 1, usage: &record.Usage{PromptTokens: 4, CompletionTokens: 2, TotalTokens: 6}},
		{kind: Raw, file: "stream_plain.sse", text: "onetwo"},
	} {
		t.Run(string(tc.kind)+"/"+tc.file+"/"+tc.field, func(t *testing.T) {
			c, empty, err := rawRead(t, tc.kind, tc.field, tc.file)
			if tc.serverErr != "" {
				var se *ServerError
				if !errors.As(err, &se) || !strings.Contains(se.Message, tc.serverErr) {
					t.Fatalf("error = %v, want a server error with %q", err, tc.serverErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(c.Text) != tc.text || c.Items != tc.items || c.Choices != tc.choices || c.FinishReason != tc.finish {
				t.Errorf("text %q, items %d, choices %d, finish %q; want %q, %d, %d, %q",
					c.Text, c.Items, c.Choices, c.FinishReason, tc.text, tc.items, tc.choices, tc.finish)
			}
			if !reflect.DeepEqual(c.Usage, tc.usage) {
				t.Errorf("usage %+v, want %+v", c.Usage, tc.usage)
			}
			if tc.empty == "" && empty != "" || !strings.Contains(empty, tc.empty) {
				t.Errorf("Empty = %q, want one with %q", empty, tc.empty)
			}
		})
	}
}

// TestRawStreamEvents reads a stream event by event: each event's delta,
// the usage-only chunk, then [DONE].
func TestRawStreamEvents(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "raw", "stream.sse"))
	if err != nil {
		t.Fatal(err)
	}
	d := Raw.NewDecoder()
	var got []string
	for _, ev := range ntEvents(data) {
		c, err := d.Chunk(ev)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case c.Done:
			got = append(got, "[DONE]")
		case c.Usage != nil:
			got = append(got, "usage")
		default:
			got = append(got, string(c.Text))
		}
	}
	if want := []string{"", "Hel", "lo", "usage", "[DONE]"}; !reflect.DeepEqual(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
}

// TestRawReadValues: what response_field's selection gives, by its type.
func TestRawReadValues(t *testing.T) {
	for _, tc := range []struct {
		data  string
		text  string
		items int
	}{
		{`{"a":"x"}`, "x", 0},
		{`{"a":""}`, "", 0},
		{`{"a":1.5}`, "1.5", 0},
		{`{"a":1e21}`, "1000000000000000000000", 0},
		{`{"a":[0.1,0.2]}`, "", 1},
		{`{"a":[[1],[2],[3]]}`, "", 3},
		{`{"a":[{"i":0},{"i":1}]}`, "", 2},
		{`{"a":["x","y"]}`, "xy", 0},
		{`{"a":[]}`, "", 0},
		{`{"a":true}`, "", 0},
		{`{"a":null}`, "", 0},
		{`{"a":{"content":"inner"}}`, "inner", 0},
		{`{"a":{"embeddings":[[1],[2]]}}`, "", 2},
	} {
		typ, _, err := Configure(Template, []Field{{"payload_template", json.RawMessage(`"{}"`)}, {"response_field", json.RawMessage(`"a"`)}})
		if err != nil {
			t.Fatal(err)
		}
		c, err := typ.Read([]byte(tc.data), false, &State{})
		if err != nil || string(c.Text) != tc.text || c.Items != tc.items {
			t.Errorf("%s: text %q, items %d, %v; want %q, %d", tc.data, c.Text, c.Items, err, tc.text, tc.items)
		}
	}
}

// FuzzRawRead: no input makes Read panic, and what it reads is consistent
// with what Empty says.
func FuzzRawRead(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "raw", "*"))
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		if strings.HasSuffix(name, ".sse") {
			for _, ev := range ntEvents(data) {
				f.Add(ev)
			}
			continue
		}
		f.Add(data)
	}
	f.Add([]byte(`{"error":false,"text":"x"}`))
	f.Add([]byte(`{"choices":[1,{"text":"x"}]}`))
	var types []Type
	for _, extra := range [][]Field{
		nil,
		{{"response_field", json.RawMessage(`"choices[0].delta.content || output"`)}},
		{{"response_field", json.RawMessage(`"[*].a | length(@)"`)}},
	} {
		typ, _, err := Configure(Raw, extra)
		if err != nil {
			f.Fatal(err)
		}
		types = append(types, typ)
		typ, _, err = Configure(Template, append(extra, Field{"payload_template", json.RawMessage(`"{}"`)}))
		if err != nil {
			f.Fatal(err)
		}
		types = append(types, typ)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, typ := range types {
			for _, streaming := range []bool{false, true} {
				c, err := typ.Read(data, streaming, &State{})
				if err != nil {
					continue
				}
				if c.Text != nil && len(c.Text) == 0 {
					t.Errorf("%q: Text empty but not nil", data)
				}
				if c.Items < 0 {
					t.Errorf("%q: %d items", data, c.Items)
				}
				if (typ.Empty(c) == "") != c.HasContent() {
					t.Errorf("%q: Empty %q for %+v", data, typ.Empty(c), c)
				}
			}
		}
	})
}

func BenchmarkRawRead(b *testing.B) {
	for _, tc := range []struct{ name, data string }{
		{"chat-chunk", `{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" bako"},"finish_reason":null}]}`},
		{"embeddings", `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[` +
			strings.TrimSuffix(strings.Repeat("0.0123456,", 1024), ",") + `]}]}`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			typ := Raw.Type()
			st := &State{}
			data := []byte(tc.data)
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := typ.Read(data, true, st); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

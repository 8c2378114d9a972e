package endpoint

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// templateType configured with payload_template tmpl and extra.
func configuredTemplate(t *testing.T, tmpl string, extra ...Field) Type {
	t.Helper()
	typ, rest, err := Configure(Template, append([]Field{{"payload_template", mustJSON(t, tmpl)}}, extra...))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rest {
		if f.Key == "payload_template" || f.Key == "response_field" {
			t.Fatalf("Configure left %s to send", f.Key)
		}
	}
	return typ
}

func TestTemplateBuild(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"chat.jinja", "limits.jinja"} {
		b, err := os.ReadFile(filepath.Join("testdata", "template", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	chatFile := filepath.Join(dir, "chat.jinja")
	png := MediaItem{URL: "data:image/png;base64,iVBO", Format: "png"}
	wav := MediaItem{Format: "wav", Data: []byte("RIFF")}
	for _, tc := range []struct {
		name  string
		tmpl  string
		extra []Field
		in    Input
		want  string
	}{
		{"inline texts", `{"text": {{ texts|tojson }}}`,
			nil, Input{Texts: []string{`a "q"`, "b<", ""}}, `{"text":["a \"q\"","b\u003c"]}`},
		{"bare strings are autoescaped", `{"text": "{{ text }}", "n": {{ texts|length }}}`,
			nil, Input{Prompt: `say "hi" & <b>`}, `{"text":"say &#34;hi&#34; &amp; &lt;b&gt;","n":1}`},
		{"scalars", `{"model": {{ model|tojson }}, "max_tokens": {{ max_tokens|tojson }}, "stream": {{ stream|tojson }}, "role": {{ role|tojson }}}`,
			nil, Input{Model: "m", Prompt: "p", Streaming: true}, `{"model":"m","max_tokens":null,"stream":true,"role":"user"}`},
		{"max_tokens set", `{"max_tokens": {{ max_tokens }}}`, nil, Input{Prompt: "p", MaxTokens: 64}, `{"max_tokens":64}`},
		{"media", `{"image": {{ image|tojson }}, "images": {{ images|length }}, "audio": {{ audio|tojson }}, "video": {{ video|tojson }}}`,
			nil, Input{Prompt: "p", Images: []MediaItem{png, png}, Audios: []MediaItem{wav}},
			`{"image":"data:image/png;base64,iVBO","images":2,"audio":"data:audio/wav;base64,UklGRg==","video":""}`},
		{"rankings", `{"query": {{ query|tojson }}, "passages": {{ passages|tojson }}, "first": {{ passage|tojson }}, "texts": {{ texts|tojson }}, "q": {{ texts_by_name.query|tojson }}}`,
			nil, Input{Query: "q?", Passages: []string{"p1", "p2"}},
			`{"query":"q?","passages":["p1","p2"],"first":"p1","texts":["q?","p1","p2"],"q":["q?"]}`},
		{"turn", `{"role": {{ turn.role|tojson }}, "texts": {{ turn.texts|tojson }}, "n": {{ turns|length }}}`,
			nil, Input{Prompt: "now", History: []Message{{"user", "a"}, {"assistant", "b"}}}, `{"role":"user","texts":["now"],"n":3}`},
		{"nv-embedqa", "nv-embedqa", nil, Input{Model: "nvidia/nv-embedqa-e5-v5", Texts: []string{"q1", "q2"}},
			`{"input":["q1","q2"],"model":"nvidia/nv-embedqa-e5-v5","input_type":"query"}`},
		{"nv-embedqa with extras", "nv-embedqa",
			[]Field{{"input_type", json.RawMessage(`"passage"`)}, {"truncate", json.RawMessage(`"END"`)}, {"response_field", json.RawMessage(`"data[*].embedding"`)}},
			Input{Model: "e", Prompt: "doc"}, `{"input":["doc"],"model":"e","input_type":"passage","truncate":"END"}`},
		{"file with include", chatFile, nil,
			Input{Model: "m", Prompt: "and you?", MaxTokens: 8, History: []Message{{"user", "hi"}, {"assistant", `"hello"`}}},
			`{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"\"hello\""},{"role":"user","content":"and you?"}],"max_tokens":8,"stream":false}`},
		{"list without extras", `[{{ text|tojson }}]`, nil, Input{Prompt: "x"}, `["x"]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			typ := configuredTemplate(t, tc.tmpl, tc.extra...)
			_, rest, _ := Configure(Template, append([]Field{{"payload_template", mustJSON(t, tc.tmpl)}}, tc.extra...))
			tc.in.Extra = rest
			got, err := typ.Build(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("body\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestTemplateBuildErrors(t *testing.T) {
	long := strings.Repeat("x", 300)
	for _, tc := range []struct {
		name string
		tmpl string
		in   Input
		want []string
	}{
		{"not JSON", `{"text": {{ text }}}`, Input{Prompt: "hello"},
			[]string{"payload_template inline rendered no JSON", `{\"text\": hello}`, "|tojson"}},
		{"clipped", `{{ text }}`, Input{Prompt: long}, []string{strings.Repeat("x", 200) + "…"}},
		{"extras into a list", `[{{ text|tojson }}]`, Input{Prompt: "x", Extra: []Field{{"a", json.RawMessage("1")}}},
			[]string{"rendered a list, into which --extra-inputs cannot be merged"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := configuredTemplate(t, tc.tmpl).Build(tc.in)
			for _, w := range tc.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("error %v, want one with %q", err, w)
				}
			}
			if err != nil && strings.Contains(err.Error(), strings.Repeat("x", 201)) {
				t.Errorf("error quotes more than 200 characters of the body")
			}
		})
	}
	if _, err := Template.Body(Input{Prompt: "x"}); err == nil || !strings.Contains(err.Error(), "payload_template") {
		t.Errorf("unconfigured Build: error %v, want one asking for payload_template", err)
	}
}

// TestTemplateBuildConcurrent: the run builds bodies from several
// goroutines with one configured type (go test -race).
func TestTemplateBuildConcurrent(t *testing.T) {
	typ := configuredTemplate(t, `{"text": {{ text|tojson }}, "model": {{ model|tojson }}}`)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 20 {
				p := strings.Repeat("a", i)
				got, err := typ.Build(Input{Model: "m", Prompt: p})
				if want := `{"text":"` + p + `","model":"m"}`; err != nil || string(got) != want {
					t.Errorf("Build = %s, %v; want %s", got, err, want)
					return
				}
			}
		})
	}
	wg.Wait()
}

func BenchmarkTemplateBuild(b *testing.B) {
	typ, _, err := Configure(Template, []Field{{"payload_template", json.RawMessage(`"nv-embedqa"`)}})
	if err != nil {
		b.Fatal(err)
	}
	in := Input{Model: "m", Texts: []string{strings.Repeat("word ", 100), strings.Repeat("more ", 100)}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := typ.Build(in); err != nil {
			b.Fatal(err)
		}
	}
}

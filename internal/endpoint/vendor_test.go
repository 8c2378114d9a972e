package endpoint

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/internal/record"
)

// ntKinds are the types of embeddings.go, rankings.go, huggingface.go,
// solido.go and imageretrieval.go.
var ntKinds = []Kind{Embeddings, ChatEmbeddings, NIMEmbeddings, CohereRankings, HFTEIRankings, NIMRankings,
	HuggingFaceGenerate, SolidoRAG, ImageRetrieval}

func TestNonTextCaps(t *testing.T) {
	for _, tc := range []struct {
		kind       Kind
		path       string
		streamPath string
		caps       Caps
	}{
		{Embeddings, "/v1/embeddings", "/v1/embeddings", Caps{TokenizesInput: true, Input: Texts}},
		{ChatEmbeddings, "/v1/embeddings", "/v1/embeddings", Caps{TokenizesInput: true, Media: Image}},
		{NIMEmbeddings, "/v1/embeddings", "/v1/embeddings", Caps{TokenizesInput: true, Media: Image, Input: Texts}},
		{CohereRankings, "/v2/rerank", "/v2/rerank", Caps{TokenizesInput: true, Input: Ranking}},
		{HFTEIRankings, "/rerank", "/rerank", Caps{TokenizesInput: true, Input: Ranking}},
		{NIMRankings, "/v1/ranking", "/v1/ranking", Caps{TokenizesInput: true, Input: Ranking}},
		{HuggingFaceGenerate, "/generate", "/generate_stream", Caps{ProducesTokens: true, TokenizesInput: true, Streams: true}},
		{SolidoRAG, "/rag/api/prompt", "/rag/api/prompt", Caps{ProducesTokens: true, TokenizesInput: true, Streams: true}},
		{ImageRetrieval, "/v1/infer", "/v1/infer", Caps{Media: Image}},
	} {
		if got := tc.kind.Path(false); got != tc.path {
			t.Errorf("%s: Path(false) = %q, want %q", tc.kind, got, tc.path)
		}
		if got := tc.kind.Path(true); got != tc.streamPath {
			t.Errorf("%s: Path(true) = %q, want %q", tc.kind, got, tc.streamPath)
		}
		if got := tc.kind.Caps(); !reflect.DeepEqual(got, tc.caps) {
			t.Errorf("%s: Caps = %+v, want %+v", tc.kind, got, tc.caps)
		}
		if k, err := Parse(string(tc.kind)); err != nil || k != tc.kind {
			t.Errorf("Parse(%q) = %q, %v", tc.kind, k, err)
		}
	}
}

// ntBuildCase is a body Build must make byte for byte (key order
// included), or an error it must give.
type ntBuildCase struct {
	name   string
	kind   Kind
	in     Input
	want   string
	errHas string
}

func ntCheckBuilds(t *testing.T, cases []ntBuildCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.kind.Body(tc.in)
			if tc.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errHas) {
					t.Fatalf("Build error = %v, want one containing %q", err, tc.errHas)
				}
				if !strings.Contains(err.Error(), string(tc.kind)) {
					t.Errorf("Build error %q does not name %s", err, tc.kind)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("body\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// ntReadCase is what reading a fixture of testdata/<kind>/ must give.
type ntReadCase struct {
	kind   Kind
	file   string
	items  int
	text   string
	finish string
	usage  *record.Usage
	// serverErr: a *ServerError whose message has this; errHas: another
	// error with this.
	serverErr string
	errHas    string
	// empty: Empty must explain why the answer is no result.
	empty bool
}

// ntResult is a fixture read with a Decoder: a whole response, or a
// stream's events added up as the client does.
type ntResult struct {
	items  int
	text   string
	finish string
	usage  *record.Usage
	empty  string
	err    error
}

func ntFixture(t testing.TB, k Kind, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", string(k), name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// ntEvents are the data of a .sse fixture's events (one data line each).
func ntEvents(data []byte) [][]byte {
	var out [][]byte
	for _, line := range bytes.Split(data, []byte("\n")) {
		if rest, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			out = append(out, bytes.TrimSpace(rest))
		}
	}
	return out
}

func ntRead(t testing.TB, k Kind, name string) ntResult {
	data := ntFixture(t, k, name)
	d := k.NewDecoder()
	if !strings.HasSuffix(name, ".sse") {
		c, err := d.Response(data)
		return ntResult{items: c.Items, text: string(c.Text), finish: c.FinishReason, usage: c.Usage, empty: d.Empty(c), err: err}
	}
	var r ntResult
	for _, ev := range ntEvents(data) {
		c, err := d.Chunk(ev)
		if err != nil {
			r.err = err
			break
		}
		if c.Done {
			break
		}
		r.items += c.Items
		r.text += string(c.Text)
		if c.FinishReason != "" {
			r.finish = c.FinishReason
		}
		if c.Usage != nil {
			r.usage = c.Usage
		}
	}
	r.empty = d.Empty(Chunk{Text: []byte(r.text), Items: r.items})
	return r
}

func ntCheckReads(t *testing.T, cases []ntReadCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(string(tc.kind)+"/"+tc.file, func(t *testing.T) {
			got := ntRead(t, tc.kind, tc.file)
			var se *ServerError
			switch {
			case tc.serverErr != "":
				if !errors.As(got.err, &se) || !strings.Contains(se.Message, tc.serverErr) {
					t.Fatalf("error = %v, want a server error with %q", got.err, tc.serverErr)
				}
				return
			case tc.errHas != "":
				if got.err == nil || IsServerError(got.err) || !strings.Contains(got.err.Error(), tc.errHas) {
					t.Fatalf("error = %v, want one with %q", got.err, tc.errHas)
				}
				return
			case got.err != nil:
				t.Fatal(got.err)
			}
			if got.items != tc.items || got.text != tc.text || got.finish != tc.finish {
				t.Errorf("items %d, text %q, finish %q; want %d, %q, %q", got.items, got.text, got.finish, tc.items, tc.text, tc.finish)
			}
			if !reflect.DeepEqual(got.usage, tc.usage) {
				t.Errorf("usage %+v, want %+v", got.usage, tc.usage)
			}
			if (got.empty != "") != tc.empty {
				t.Errorf("Empty = %q, want empty %v", got.empty, tc.empty)
			}
		})
	}
}

func TestNonTextReadRefusesStreams(t *testing.T) {
	for _, k := range ntKinds {
		if k.Caps().Streams {
			continue
		}
		if _, err := k.Type().Read([]byte(`{}`), true, &State{}); err == nil || !strings.Contains(err.Error(), "--streaming") {
			t.Errorf("%s: Read(streaming) error = %v, want one about --streaming", k, err)
		}
	}
}

func TestCountElements(t *testing.T) {
	for _, tc := range []struct {
		data string
		n    int
		ok   bool
	}{
		{`[]`, 0, true},
		{`[ ]`, 0, true},
		{`[1]`, 1, true},
		{` [ 1 , -2.5e3 ] `, 2, true},
		{`[[1,2],[3]]`, 2, true},
		{`[[],{}]`, 2, true},
		{`["a,b","c]",",\"]"]`, 3, true},
		{`[{"a":[1,2],"b":{"c":","}},{}]`, 2, true},
		{`[null,true,false]`, 3, true},
		{`{"a":1}`, 0, false},
		{`"[1,2]"`, 0, false},
		{``, 0, false},
	} {
		n, ok := countElements([]byte(tc.data))
		if n != tc.n || ok != tc.ok {
			t.Errorf("countElements(%s) = %d, %v; want %d, %v", tc.data, n, ok, tc.n, tc.ok)
		}
	}
}

func TestErrorMembers(t *testing.T) {
	for _, tc := range []struct {
		data     string
		answered bool
		code     int
		msg      string // "": no error
	}{
		{`{"error":{"message":"bad input","type":"invalid_request_error","code":"context_length_exceeded"}}`, false, 0, "bad input"},
		{`{"error":{"message":"overloaded","code":503}}`, true, 503, "overloaded"},
		{`{"error":{"type":"x"}}`, false, 0, `{"type":"x"}`},
		{`{"error":"Input validation error","error_type":"Validation"}`, true, 0, "Input validation error"},
		{`{"object":"error","message":"too long","code":400}`, false, 400, "too long"},
		{`{"object":"error"}`, false, 0, "an error object without a message"},
		{`{"message":"invalid request"}`, false, 0, "invalid request"},
		{`{"message":"invalid request"}`, true, 0, ""},
		{`{"error":null,"object":"list","message":null}`, false, 0, ""},
		{`{"message":""}`, false, 0, ""},
	} {
		var e errorMembers
		if err := jsonUnmarshalForTest(tc.data, &e); err != nil {
			t.Fatal(err)
		}
		err := e.err(tc.answered)
		if tc.msg == "" {
			if err != nil {
				t.Errorf("%s: %v, want no error", tc.data, err)
			}
			continue
		}
		var se *ServerError
		if !errors.As(err, &se) || se.Message != tc.msg || se.Code != tc.code {
			t.Errorf("%s (answered %v): %#v, want code %d message %q", tc.data, tc.answered, err, tc.code, tc.msg)
		}
	}
}

func jsonUnmarshalForTest(data string, v any) error { return unmarshalAnswer("test", []byte(data), v) }

// FuzzNonTextRead: no bytes make a Read panic; an error a server sent
// has a message; a type without a stream refuses stream events; TGI's
// and embeddings' one-pass readings agree with encoding/json's.
func FuzzNonTextRead(f *testing.F) {
	for _, k := range ntKinds {
		entries, err := os.ReadDir(filepath.Join("testdata", string(k)))
		if err != nil {
			f.Fatal(err)
		}
		for _, e := range entries {
			data := ntFixture(f, k, e.Name())
			f.Add(data)
			for _, ev := range ntEvents(data) {
				f.Add(ev)
			}
		}
	}
	for _, s := range []string{`[`, `{"data":[{"object":"embedding","embedding":null}]}`, `{"embeddings":[1]}`, `{"embedding":[[]]}`,
		`{"data":{}}`, `{"data":"x"}`, `{"token":{"text":"a\u00e9","special":null},"generated_text":"x","details":{"finish_reason":null}}`,
		`[null]`, `[{"generated_text":null}]`, `{"results":{}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, k := range ntKinds {
			typ := k.Type()
			for _, streaming := range []bool{false, true} {
				c, err := typ.Read(data, streaming, &State{})
				if streaming && !typ.Caps().Streams && err == nil {
					t.Fatalf("%s read a stream event %q", k, data)
				}
				var se *ServerError
				if errors.As(err, &se) && se.Message == "" {
					t.Fatalf("%s: a server error without a message from %q", k, data)
				}
				if err != nil {
					continue
				}
				if c.Items < 0 {
					t.Fatalf("%s: %d items from %q", k, c.Items, data)
				}
				if msg := typ.Empty(c); (msg == "") != c.HasContent() {
					t.Fatalf("%s: Empty %q for %+v", k, msg, c)
				}
			}
		}
		if got, ok := scanEmbeddings(data); ok {
			for _, k := range []Kind{Embeddings, ChatEmbeddings, NIMEmbeddings} {
				want, err := parseEmbeddings(k, data)
				if err != nil || !reflect.DeepEqual(got, want) {
					t.Fatalf("%s %q:\nscanEmbeddings %+v\nencoding/json %+v, %v", k, data, got, want, err)
				}
			}
		}
		var fast, slow State
		got, ok := scanTGIEvent(data, &fast)
		if !ok {
			return
		}
		want, err := readTGIEvent(data, &slow)
		if err != nil {
			t.Fatalf("scanTGIEvent read %q, encoding/json refused it: %v", data, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\nscanTGIEvent %+v\nencoding/json %+v", data, got, want)
		}
	})
}

package endpoint

import (
	"bytes"
	"reflect"
	"testing"
)

// usualChunks are shapes servers send; the Decoder must read each on its
// fast path.
var usualChunks = []struct {
	kind      Kind
	streaming bool
	data      string
}{
	{Chat, true, `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" bako"},"finish_reason":null}]}`},
	{Chat, true, `{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"usage":null}`},
	{Chat, true, `{"choices":[{"index":0,"delta":{"reasoning_content":"think \"hard\"\n"},"finish_reason":null}]}`},
	{Chat, true, `{"choices":[{"index":0,"delta":{"content":"caf\u00e9 ☕"},"finish_reason":"stop","stop_reason":null}]}`},
	{Chat, true, `{"id":"c","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":7,"total_tokens":12,"completion_tokens_details":{"reasoning_tokens":2}}}`},
	{Chat, false, `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hello world","reasoning":null},"finish_reason":"length"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5,"prompt_tokens_details":null}}`},
	{Completions, true, `{"id":"cmpl-1","object":"text_completion","choices":[{"index":0,"text":" bako","logprobs":null,"finish_reason":null}]}`},
	{Completions, false, `{"choices":[{"text":"abc","index":0,"finish_reason":"length"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`},
}

func TestDecoderScansUsualChunks(t *testing.T) {
	for _, tc := range usualChunks {
		want, err := tc.kind.parse([]byte(tc.data), tc.streaming)
		if err != nil {
			t.Fatalf("%s: %v", tc.data, err)
		}
		got, ok := tc.kind.NewDecoder().scan([]byte(tc.data), tc.streaming)
		if !ok {
			t.Errorf("%s: left to encoding/json", tc.data)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.data, got, want)
		}
	}
}

// TestScanLeavesToEncodingJSON: shapes the one-pass scan gives up on (for
// encoding/json to read), and unusual ones it reads.
func TestScanLeavesToEncodingJSON(t *testing.T) {
	for _, tc := range []struct {
		data string
		read bool
	}{
		{`{"choices":[{"delta":{"content":"a\u0062\u00e9\ud83d\ude00"}}]}`, true},
		{`{"choices":[{"delta":{"content":"a\ud83d"}}]}`, false}, // a lone surrogate: U+FFFD
		{`{"choices":[{"delta":{"content":"a\ude00\ud83d"}}]}`, false},
		{`{"choices":[{"delta":{"content":"\ud83d\u0041"}}]}`, false},
		{"{\"choices\":[{\"delta\":{\"content\":\"a\tb\"}}]}", false}, // a raw tab in a string is not JSON
		{"{\"choices\":[{\"delta\":{\"content\":\"a\"}}],\"x\":\"\v\"}", false},
		{`{"choices":[{"delta":{"content":"a"}}],"x":"\ud800\xff"}`, false}, // an escape encoding/json refuses
		{`{"cho\u0069ces":[{"delta":{"content":"a"}}]}`, false},             // an escaped key encoding/json matches
		{`{"choices":[{"delta":{"reasoning":"b","reasoning_content":"a"}}]}`, false},
		{`{"choices":[{"Delta":{"content":"a"}}]}`, false},
		{`{"usage":{"prompt_tokens":99999999999999999999}}`, false},
		{`{"choices":[{"delta":{"content":"a"}}]} x`, false},
		{`{"choices":[{"delta":{"content":"a"}}],}`, false},
		{`{"choices":[{"delta":{"content":"a"},"logprobs":{"x":[1,-2.5e3,true,false,null,"\u00e9",{}]}}]}`, true},
		{`{"choices":[{"delta":{"content":"a\n\"b\"\\\/\t"}}]}`, true},
		{`{"choices":[{"delta":{"reasoning_content":"a","reasoning":"b"}}]}`, true},
		{` { "choices" : [ null , { "delta" : null , "finish_reason" : "stop" } ] } `, true},
	} {
		want, wantErr := Chat.parse([]byte(tc.data), true)
		d := Chat.NewDecoder()
		got, ok := d.scan([]byte(tc.data), true)
		if ok != tc.read {
			t.Errorf("%s: read %v, want %v", tc.data, ok, tc.read)
		}
		if ok && (wantErr != nil || !reflect.DeepEqual(got, want)) {
			t.Errorf("%s:\n got %+v\nwant %+v (%v)", tc.data, got, want, wantErr)
		}
		if got, err := d.Chunk([]byte(tc.data)); (err == nil) != (wantErr == nil) || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: Chunk %+v %v, want %+v %v", tc.data, got, err, want, wantErr)
		}
	}
}

// TestDecoderUnusualShapes: each of these is read by encoding/json, and
// the Decoder gives exactly its answer.
func TestDecoderUnusualShapes(t *testing.T) {
	for _, data := range []string{
		`{"Choices":[{"delta":{"content":"a"}}]}`,               // encoding/json matches keys case-insensitively
		`{"choices":[{"delta":{"content":"a"}}],"choices":[]}`,  // a repeated key: the last wins
		`{"choices":[{"delta":{"content":"a","content":"b"}}]}`, // in a nested object too
		`{"choices":[{"delta":{"content":"\ud800"}}]}`,          // a lone surrogate becomes U+FFFD
		"{\"choices\":[{\"delta\":{\"content\":\"\xff\"}}]}",    // invalid UTF-8 too
		`{"choices":[{"delta":{"content":5}}]}`,                 // a type error
		`{"usage":{"prompt_tokens":1.5}}`,                       // not an int
		`{"usage":{"prompt_tokens":1e2}}`,                       // nor this
		`{"error":{"message":"overloaded","code":503}}`,         // a server error
		`{"object":"error","message":"bad","code":400}`,         // vLLM's
		`null`, `[]`, `"x"`, `{"choices":[`, `{"a":nan}`, `{"a":01}`, "{\"a\":\"\x01\"}", // not an object, or not JSON
	} {
		for _, kind := range []Kind{Chat, Completions} {
			d := kind.NewDecoder()
			// A completion's delta is only type-checked, so any string will do there.
			if _, ok := d.scan([]byte(data), true); ok && kind == Chat {
				t.Errorf("%s: read by the one-pass scan", data)
			}
			got, gotErr := d.Chunk([]byte(data))
			want, wantErr := kind.parse([]byte(data), true)
			if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() || !reflect.DeepEqual(got, want) {
				t.Errorf("%s: got %+v %v\nwant %+v %v", data, got, gotErr, want, wantErr)
			}
		}
	}
}

// FuzzDecoderMatchesEncodingJSON: on any data, a Decoder (reused from the
// previous input) answers as encoding/json does.
func FuzzDecoderMatchesEncodingJSON(f *testing.F) {
	for _, tc := range usualChunks {
		f.Add(tc.data, tc.streaming)
	}
	f.Add(`{"error":null,"choices":null,"usage":{"completion_tokens_details":{"reasoning_tokens":null}}}`, false)
	f.Add(`{"choices":[null,{"text":null,"finish_reason":""}]}`, true)
	decoders := map[Kind]*Decoder{Chat: Chat.NewDecoder(), Completions: Completions.NewDecoder()}
	f.Fuzz(func(t *testing.T, data string, streaming bool) {
		for kind, d := range decoders {
			got, gotErr := d.decode(bytes.TrimSpace([]byte(data)), streaming)
			want, wantErr := kind.parse(bytes.TrimSpace([]byte(data)), streaming)
			if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
				t.Fatalf("%s %q: error %v, encoding/json's %v", kind, data, gotErr, wantErr)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s %q:\n got %+v\nwant %+v", kind, data, got, want)
			}
		}
	})
}

// BenchmarkDecoderChunk is one stream event's data read by a reused
// Decoder: the per-token cost of the client's hot path.
func BenchmarkDecoderChunk(b *testing.B) {
	data := []byte(usualChunks[0].data)
	d := Chat.NewDecoder()
	b.ReportAllocs()
	for b.Loop() {
		if c, err := d.Chunk(data); err != nil || len(c.Text) == 0 {
			b.Fatal(err)
		}
	}
}

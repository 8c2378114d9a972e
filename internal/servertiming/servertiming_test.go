package servertiming

import (
	"bufio"
	"math"
	"net/http"
	"net/textproto"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var nan = math.NaN()

// add keeps a derived expectation at run-time float64 rounding, the way the
// parser computes it, rather than Go's exact constant arithmetic.
func add(a, b float64) float64 { return a + b }

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func readHeaderFixture(t testing.TB, name string) http.Header {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mh, err := textproto.NewReader(bufio.NewReader(f)).ReadMIMEHeader()
	if err != nil {
		t.Fatal(err)
	}
	return http.Header(mh)
}

func sameF(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }

func equal(a, b Timings) bool {
	return a.Source == b.Source &&
		sameF(a.QueueMs, b.QueueMs) && sameF(a.PrefillMs, b.PrefillMs) &&
		sameF(a.DecodeMs, b.DecodeMs) && sameF(a.InferenceMs, b.InferenceMs) &&
		sameF(a.TotalMs, b.TotalMs) && sameF(a.MeanITLMs, b.MeanITLMs) &&
		a.PromptTokens == b.PromptTokens && a.CachedPromptTokens == b.CachedPromptTokens &&
		a.OutputTokens == b.OutputTokens && a.Rejected == b.Rejected
}

// want builds expected Timings from Unknown with the given changes.
func want(f func(*Timings)) Timings {
	t := Unknown()
	f(&t)
	return t
}

func TestDocumentedExamples(t *testing.T) {
	tests := []struct {
		name    string
		body    string // fixture under testdata, see testdata/SOURCES.md
		headers string
		want    Timings
		ttft    float64
	}{
		{
			// docs.vllm.ai/en/latest/features/per_request_metrics, "Response Format".
			name: "vllm", body: "vllm.json",
			want: want(func(w *Timings) {
				w.Source = "vllm"
				w.QueueMs, w.PrefillMs, w.DecodeMs, w.MeanITLMs = 12.3, 85.2, 1240.5, 9.1
				w.InferenceMs = add(85.2, 1240.5)
			}),
			ttft: add(12.3, 85.2),
		},
		{
			// Same page, "Streaming": the final usage chunk.
			name: "vllm stream usage chunk", body: "vllm_stream_usage.json",
			want: want(func(w *Timings) {
				w.Source = "vllm"
				w.QueueMs, w.PrefillMs, w.DecodeMs, w.MeanITLMs = 12.3, 85.2, 1240.5, 9.1
				w.InferenceMs = add(85.2, 1240.5)
			}),
			ttft: add(12.3, 85.2),
		},
		{
			// llama.cpp tools/server/README.md, "Timings and context usage".
			name: "llamacpp", body: "llamacpp.json",
			want: want(func(w *Timings) {
				w.Source = "llamacpp"
				w.PrefillMs, w.DecodeMs = 30.958, 661.064
				w.InferenceMs = add(30.958, 661.064)
				w.PromptTokens, w.CachedPromptTokens, w.OutputTokens = 1+236, 236, 35
			}),
			ttft: nan, // llama.cpp reports no queue time
		},
		{
			// Final stream chunk of llama-server b6097: no cache_n, so no prompt size.
			name: "llamacpp stream final", body: "llamacpp_stream_final.json",
			want: want(func(w *Timings) {
				w.Source = "llamacpp"
				w.PrefillMs, w.DecodeMs = 203.378, 933.63
				w.InferenceMs = add(203.378, 933.63)
				w.OutputTokens = 247
			}),
			ttft: nan,
		},
		{
			// From tokenizer_manager.py (no documented example).
			// decode = (…115.25 − …115.0625) s = 187.5 ms; prefill = 234.375 − 187.5.
			name: "sglang", body: "sglang.json",
			want: want(func(w *Timings) {
				w.Source = "sglang"
				w.TotalMs, w.QueueMs, w.InferenceMs = 250, 15.625, 234.375
				w.DecodeMs, w.PrefillMs = 187.5, 46.875
				w.PromptTokens, w.CachedPromptTokens, w.OutputTokens = 7, 4, 10
			}),
			ttft: 62.5, // = prefill_finished_ts − request_received_ts
		},
		{
			// From router/src/server.rs (no documented example).
			name: "tgi", headers: "tgi_headers.txt",
			want: want(func(w *Timings) {
				w.Source = "tgi"
				w.QueueMs, w.InferenceMs, w.TotalMs = 15, 1354, 1372
				w.PromptTokens, w.OutputTokens = 23, 100
			}),
			ttft: nan, // TGI does not split prefill from decode
		},
		{
			// docs.nvidia.com/nim/large-language-models/latest/nim-per-request-metrics.html.
			name: "nim", body: "nim.json",
			want: want(func(w *Timings) {
				w.Source = "nim"
				w.QueueMs, w.PrefillMs, w.InferenceMs = 0.25, 21.75, 47.5
				w.DecodeMs = 25.75
				w.PromptTokens, w.OutputTokens = 16, 3
			}),
			ttft: 22,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body []byte
			var h http.Header
			if tt.body != "" {
				body = readFixture(t, tt.body)
			}
			if tt.headers != "" {
				h = readHeaderFixture(t, tt.headers)
			}
			got, ok := Read(h, body)
			if !ok {
				t.Fatalf("Read found nothing")
			}
			if !equal(got, tt.want) {
				t.Errorf("Read\n got %+v\nwant %+v", got, tt.want)
			}
			if g := got.TTFTMs(); !sameF(g, tt.ttft) {
				t.Errorf("TTFTMs = %v, want %v", g, tt.ttft)
			}

			// The format alone reads the same thing.
			var f Format
			for _, c := range Formats() {
				if c.Name() == tt.want.Source {
					f = c
				}
			}
			var direct Timings
			if h != nil {
				direct, ok = f.FromHeaders(h)
			} else {
				direct, ok = f.FromBody(body)
			}
			if !ok || !equal(direct, tt.want) {
				t.Errorf("%s alone: ok=%v\n got %+v\nwant %+v", f.Name(), ok, direct, tt.want)
			}
		})
	}
}

func TestStreamMerge(t *testing.T) {
	tests := []struct {
		name   string
		chunks []string // the last data payloads of a stream, in order
		want   Timings
	}{
		{
			// vLLM: the finish_reason chunk has no metrics, the usage chunk after it does.
			name: "vllm finish then usage",
			chunks: []string{
				`{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
				string(readFixture(t, "vllm_stream_usage.json")),
			},
			want: want(func(w *Timings) {
				w.Source = "vllm"
				w.QueueMs, w.PrefillMs, w.DecodeMs, w.MeanITLMs = 12.3, 85.2, 1240.5, 9.1
				w.InferenceMs = add(85.2, 1240.5)
			}),
		},
		{
			// SGLang native stream: every chunk has meta_info, only the last e2e_latency.
			name: "sglang partial then final",
			chunks: []string{
				`{"text":" Paris","meta_info":{"id":"x","finish_reason":null,"prompt_tokens":7,"completion_tokens":3,"cached_tokens":4}}`,
				`{"text":" Paris.","meta_info":{"id":"x","finish_reason":{"type":"stop"},"prompt_tokens":7,"completion_tokens":10,"cached_tokens":4,"e2e_latency":0.25}}`,
			},
			want: want(func(w *Timings) {
				w.Source = "sglang"
				w.TotalMs = 250
				w.PromptTokens, w.CachedPromptTokens, w.OutputTokens = 7, 4, 10
			}),
		},
		{
			// Later known values win, unknown ones keep the earlier value,
			// rejections add up across chunks. Derived values come from one
			// payload only: neither chunk knew prefill and decode together.
			name: "later wins, rejections add",
			chunks: []string{
				`{"timings":{"prompt_n":5,"cache_n":1,"prompt_ms":10,"predicted_n":2,"predicted_ms":"x"}}`,
				`{"timings":{"predicted_n":9,"predicted_ms":30,"prompt_ms":-4}}`,
			},
			want: want(func(w *Timings) {
				w.Source = "llamacpp"
				w.PrefillMs, w.DecodeMs = 10, 30
				w.PromptTokens, w.CachedPromptTokens, w.OutputTokens = 6, 1, 9
				w.Rejected = 2
			}),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Unknown()
			any := false
			for _, c := range tt.chunks {
				if u, ok := Read(nil, []byte(c)); ok {
					got, any = Merge(got, u), true
				}
			}
			if !any || !equal(got, tt.want) {
				t.Errorf("merged (found=%v)\n got %+v\nwant %+v", any, got, tt.want)
			}
		})
	}
}

func TestReadHostile(t *testing.T) {
	deep := `{"a":` + strings.Repeat("[", 200000) + `,"metrics":{"queue_time_ms":1}}`
	tests := []struct {
		name   string
		h      http.Header
		body   string
		wantOK bool
		want   Timings
	}{
		{name: "nil", body: ""},
		{name: "done", body: "[DONE]"},
		{name: "not json", body: `"metrics" "timings" "meta_info" "stats"`},
		{name: "top-level array", body: `[{"metrics":{"queue_time_ms":1}}]`},
		{
			// The answer's text quotes a metrics object: escaped quotes never match.
			name: "escaped in content",
			body: `{"choices":[{"message":{"content":"here: {\"metrics\": {\"queue_time_ms\": 5}, \"timings\": {\"prompt_ms\": 1}}"}}]}`,
		},
		{
			// The bare word as a string value passes the fast check, then is not a key.
			name: "word as value", body: `{"choices":[{"message":{"content":"metrics"}}],"x":"stats"}`,
		},
		{name: "same key nested", body: `{"choices":[{"metrics":{"queue_time_ms":5},"timings":{"prompt_ms":3}}],"usage":{"meta_info":{"e2e_latency":1}}}`},
		{name: "metrics null", body: `{"metrics":null}`},
		{name: "all fields null", body: `{"metrics":{"time_to_first_token_ms":null,"generation_time_ms":null,"queue_time_ms":null,"mean_itl_ms":null}}`},
		{name: "empty object", body: `{"metrics":{}}`},
		{name: "metrics array", body: `{"metrics":[1,2]}`},
		{name: "truncated", body: `{"metrics":{"queue_time_ms":12.3`},
		{name: "deep nesting", body: deep},
		{name: "unknown fields only", body: `{"stats":{"hits":3,"misses":1}}`},
		{
			name: "string number", body: `{"metrics":{"queue_time_ms":"12.3","time_to_first_token_ms":8}}`,
			wantOK: true, want: want(func(w *Timings) { w.Source = "vllm"; w.PrefillMs = 8; w.Rejected = 1 }),
		},
		{
			name: "only rejected values still reports", body: `{"metrics":{"queue_time_ms":-1}}`,
			wantOK: true, want: want(func(w *Timings) { w.Source = "vllm"; w.Rejected = 1 }),
		},
		{
			name:   "wrong types and absurd values",
			body:   `{"metrics":{"queue_time_ms":true,"time_to_first_token_ms":{"v":1},"generation_time_ms":1e10,"mean_itl_ms":1e400}}`,
			wantOK: true, want: want(func(w *Timings) { w.Source = "vllm"; w.Rejected = 4 }),
		},
		{
			name: "non-JSON literals", body: `{"metrics":{"queue_time_ms":NaN,"time_to_first_token_ms":Infinity,"generation_time_ms":0x10,"mean_itl_ms":01}}`,
			wantOK: true, want: want(func(w *Timings) { w.Source = "vllm"; w.Rejected = 4 }),
		},
		{
			name: "MaxMs itself is kept", body: `{"metrics":{"queue_time_ms":1e9,"time_to_first_token_ms":0}}`,
			wantOK: true, want: want(func(w *Timings) {
				w.Source = "vllm"
				w.QueueMs, w.PrefillMs = 1e9, 0
			}),
		},
		{
			name:   "fractional and huge token counts",
			body:   `{"timings":{"prompt_n":1.5,"cache_n":-2,"predicted_n":1e300,"prompt_ms":4}}`,
			wantOK: true, want: want(func(w *Timings) {
				w.Source = "llamacpp"
				w.PrefillMs = 4
				w.Rejected = 3
			}),
		},
		{
			name: "whitespace around the colon", body: "{\"metrics\" \t\n: {\"queue_time_ms\" :\t7}}",
			wantOK: true, want: want(func(w *Timings) { w.Source = "vllm"; w.QueueMs = 7 }),
		},
		{
			name: "duplicate key, last wins", body: `{"metrics":{"queue_time_ms":1},"metrics":{"queue_time_ms":2}}`,
			wantOK: true, want: want(func(w *Timings) { w.Source = "vllm"; w.QueueMs = 2 }),
		},
		{
			// Decode would be negative: the server contradicts itself.
			name:   "sglang stamps out of order",
			body:   `{"meta_info":{"prefill_finished_ts":1756340115.5,"decode_finished_ts":1756340115.25,"inference_time":0.5}}`,
			wantOK: true, want: want(func(w *Timings) { w.Source = "sglang"; w.InferenceMs = 500; w.Rejected = 1 }),
		},
		{
			// Derived values that would be negative are dropped silently.
			name:   "nim ttft above total",
			body:   `{"stats":{"generation_time_in_ms":10,"response_tokens":{"time_to_first_token_in_ms":20}}}`,
			wantOK: true, want: want(func(w *Timings) { w.Source = "nim"; w.InferenceMs, w.PrefillMs = 10, 20 }),
		},
		{
			name: "tgi garbage headers",
			h: http.Header{
				"X-Queue-Time": {"abc"}, "X-Total-Time": {"-5"}, "X-Inference-Time": {"7"},
				"X-Prompt-Tokens": {"1.5"}, "X-Generated-Tokens": {"12"},
			},
			wantOK: true, want: want(func(w *Timings) {
				w.Source = "tgi"
				w.InferenceMs, w.OutputTokens = 7, 12
				w.Rejected = 3
			}),
		},
		{name: "unrelated headers", h: http.Header{"Content-Type": {"application/json"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Read(tt.h, []byte(tt.body))
			w := tt.want
			if !tt.wantOK {
				w = Unknown()
			}
			if ok != tt.wantOK || !equal(got, w) {
				t.Errorf("Read = %v\n got %+v\nwant %+v", ok, got, w)
			}
		})
	}
}

func TestAsk(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range Formats() {
		if seen[f.Name()] {
			t.Errorf("duplicate format %q", f.Name())
		}
		seen[f.Name()] = true
		if a := f.Ask(false); a.Body != nil || a.Header != nil {
			t.Errorf("%s: non-streaming Ask = %+v, want nothing", f.Name(), a)
		}
	}
	a := VLLM{}.Ask(true)
	so, _ := a.Body["stream_options"].(map[string]any)
	if so["include_usage"] != true || len(a.Body) != 1 || a.Header != nil {
		t.Errorf("vllm streaming Ask = %+v", a)
	}
	for _, f := range []Format{LlamaCpp{}, SGLang{}, TGI{}, NIM{}} {
		if a := f.Ask(true); a.Body != nil || a.Header != nil {
			t.Errorf("%s: streaming Ask = %+v, want nothing", f.Name(), a)
		}
	}
}

func TestTTFTRule(t *testing.T) {
	tm := Unknown()
	if !math.IsNaN(tm.TTFTMs()) {
		t.Error("TTFT of nothing is not NaN")
	}
	tm.QueueMs = 3
	if !math.IsNaN(tm.TTFTMs()) {
		t.Error("TTFT with only the queue is not NaN")
	}
	tm.PrefillMs = 4.5
	if got := tm.TTFTMs(); got != 7.5 {
		t.Errorf("TTFT = %v, want 7.5", got)
	}
}

// checkInvariants is what every Read result must satisfy, whatever the input.
func checkInvariants(t *testing.T, got Timings, ok bool) {
	t.Helper()
	for name, v := range map[string]float64{
		"QueueMs": got.QueueMs, "PrefillMs": got.PrefillMs, "DecodeMs": got.DecodeMs,
		"InferenceMs": got.InferenceMs, "TotalMs": got.TotalMs, "MeanITLMs": got.MeanITLMs,
	} {
		if !math.IsNaN(v) && !(v >= 0 && v <= MaxMs) {
			t.Fatalf("%s = %v", name, v)
		}
	}
	for name, v := range map[string]int{
		"PromptTokens": got.PromptTokens, "CachedPromptTokens": got.CachedPromptTokens, "OutputTokens": got.OutputTokens,
	} {
		if v < -1 || v > maxTokens {
			t.Fatalf("%s = %d", name, v)
		}
	}
	if ttft := got.TTFTMs(); !math.IsNaN(ttft) && ttft < 0 {
		t.Fatalf("TTFTMs = %v", ttft)
	}
	if got.Rejected < 0 {
		t.Fatalf("Rejected = %d", got.Rejected)
	}
	if !ok && !equal(got, Unknown()) {
		t.Fatalf("not ok but %+v", got)
	}
	if ok && got.Source == "" {
		t.Fatalf("ok without a source: %+v", got)
	}
}

func FuzzRead(f *testing.F) {
	entries, err := os.ReadDir("testdata")
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".json") {
			f.Add(readFixture(f, e.Name()), "")
		}
	}
	f.Add([]byte(`{"metrics":{"queue_time_ms":"1"}}`), "15")
	f.Add([]byte(`{"meta_info":{"prefill_finished_ts":2,"decode_finished_ts":1}}`), "-1")
	f.Add([]byte(`{"stats":{"response_tokens":{"time_to_first_token_in_ms":1e9}}}`), "1e400")
	f.Fuzz(func(t *testing.T, body []byte, queue string) {
		var h http.Header
		if queue != "" {
			h = http.Header{"X-Queue-Time": {queue}, "X-Total-Time": {queue}}
		}
		got, ok := Read(h, body)
		checkInvariants(t, got, ok)
		for _, fm := range Formats() {
			u, ok := fm.FromBody(body)
			checkInvariants(t, u, ok)
		}
	})
}

// A typical final chat chunk without timings, about 300 bytes.
const chunkNoTimings = `{"id":"chatcmpl-8f3b2c1a9d7e4f6a0b1c2d3e","object":"chat.completion.chunk","created":1756340115,"model":"meta-llama/Llama-3.1-8B-Instruct","system_fingerprint":"fp_44709d6fcb","choices":[{"index":0,"delta":{"content":" and that is why the sky looks blue at noon."},"logprobs":null,"finish_reason":"stop"}]}`

func typicalHeaders() http.Header {
	return http.Header{
		"Content-Type": {"text/event-stream; charset=utf-8"},
		"Date":         {"Thu, 28 Aug 2025 00:15:15 GMT"},
		"Server":       {"uvicorn"},
	}
}

func BenchmarkReadNoTimings(b *testing.B) {
	body, h := []byte(chunkNoTimings), typicalHeaders()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := Read(h, body); ok {
			b.Fatal("found timings")
		}
	}
}

func BenchmarkReadVLLM(b *testing.B) {
	body, h := readFixture(b, "vllm.json"), typicalHeaders()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := Read(h, body); !ok {
			b.Fatal("no timings")
		}
	}
}

func BenchmarkReadVLLMLongAnswer(b *testing.B) {
	// A non-streaming body whose answer is 64 KiB of text, metrics last.
	body := []byte(`{"id":"c","choices":[{"index":0,"message":{"role":"assistant","content":"` +
		strings.Repeat(`lorem ipsum \"dolor\" sit amet `, 2200) +
		`"},"finish_reason":"stop"}],"metrics":{"time_to_first_token_ms":85.2,"generation_time_ms":1240.5,"queue_time_ms":12.3,"mean_itl_ms":9.1}}`)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := Read(nil, body); !ok {
			b.Fatal("no timings")
		}
	}
}

// TestAskOnlyUsage: the only thing a format may ask of a request is a
// stream's usage chunk, which is all llmbench sends for timings
// (AsksForUsage); a format that asks for more must have it wired into the
// request first.
func TestAskOnlyUsage(t *testing.T) {
	for _, f := range Formats() {
		for _, stream := range []bool{false, true} {
			a := f.Ask(stream)
			if len(a.Header) > 0 {
				t.Errorf("%s (stream %v) asks for headers %v", f.Name(), stream, a.Header)
			}
			for k, v := range a.Body {
				so, ok := v.(map[string]any)
				if k != "stream_options" || !ok || len(so) != 1 || so["include_usage"] != true || !stream {
					t.Errorf("%s (stream %v) asks for %s: %v", f.Name(), stream, k, v)
				}
			}
		}
	}
	if !AsksForUsage(true) || AsksForUsage(false) {
		t.Errorf("AsksForUsage: stream %v, whole %v; want true, false (vLLM)", AsksForUsage(true), AsksForUsage(false))
	}
}

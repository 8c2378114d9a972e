package client

import (
	"context"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/llmbench/llmbench/internal/endpoint"
	"github.com/llmbench/llmbench/internal/record"
)

// TestServerTimings reads each engine's per-request timings, in the shapes
// of their documented examples, through both transports, and nothing when
// the option is off or the server says nothing. A total the server did not
// give is its queue plus its prefill and decode, when it gave those.
func TestServerTimings(t *testing.T) {
	nan := math.NaN()
	vllmStream := []string{
		`{"choices":[{"delta":{"content":"the \"metrics\": {\"queue_time_ms\": 999}"}}]}`,
		`{"choices":[{"delta":{},"finish_reason":"stop"}]}`,
		`{"choices":[],"usage":{"prompt_tokens":42,"completion_tokens":128,"total_tokens":170},"metrics":{"time_to_first_token_ms":85.2,"generation_time_ms":1240.5,"queue_time_ms":12.3,"mean_itl_ms":9.1,"tokens_per_second":103.2}}`,
		`[DONE]`,
	}
	llamaStream := []string{
		`{"choices":[{"delta":{"content":"hi"}}]}`,
		`{"choices":[{"finish_reason":"stop","index":0,"delta":{}}],"timings":{"prompt_n":1085,"prompt_ms":203.378,"predicted_n":247,"predicted_ms":933.63}}`,
		`[DONE]`,
	}
	tests := []struct {
		name    string
		stream  bool
		chunks  []string          // a stream's data payloads
		body    string            // a whole response
		headers map[string]string // response headers
		off     bool
		want    *record.ServerTimings
	}{
		{name: "vLLM stream, usage chunk", stream: true, chunks: vllmStream,
			want: &record.ServerTimings{Source: "vllm", Queue: 12.3, Prefill: 85.2, Decode: 1240.5, Total: 1338}},
		{name: "vLLM whole", body: `{"choices":[{"message":{"content":"hi"},"finish_reason":"stop"}],"metrics":{"time_to_first_token_ms":85.2,"generation_time_ms":1240.5,"queue_time_ms":12.3}}`,
			want: &record.ServerTimings{Source: "vllm", Queue: 12.3, Prefill: 85.2, Decode: 1240.5, Total: 1338}},
		{name: "llama.cpp stream, finish chunk", stream: true, chunks: llamaStream,
			want: &record.ServerTimings{Source: "llamacpp", Queue: nan, Prefill: 203.378, Decode: 933.63, Total: nan}},
		{name: "TGI headers", body: `{"choices":[{"message":{"content":"hi"},"finish_reason":"stop"}]}`,
			headers: map[string]string{"x-queue-time": "15", "x-inference-time": "1354", "x-total-time": "1372", "x-validation-time": "2"},
			want:    &record.ServerTimings{Source: "tgi", Queue: 15, Prefill: nan, Decode: nan, Total: 1372}},
		{name: "TGI headers without a total", body: `{"choices":[{"message":{"content":"hi"},"finish_reason":"stop"}]}`,
			headers: map[string]string{"X-Queue-Time": "15", "X-Inference-Time": "1354"},
			want:    &record.ServerTimings{Source: "tgi", Queue: 15, Prefill: nan, Decode: nan, Total: 1369}},
		{name: "off", stream: true, chunks: vllmStream, off: true},
		{name: "none", stream: true, chunks: []string{`{"choices":[{"delta":{"content":"hi"},"finish_reason":"stop"}]}`, `[DONE]`}},
	}
	for _, tt := range tests {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			for k, v := range tt.headers {
				w.Header()[k] = []string{v} // as sent, not canonicalised
			}
			if !tt.stream {
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, tt.body)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			for _, c := range tt.chunks {
				io.WriteString(w, "data: "+c+"\n\n")
			}
		}))
		for _, stdlib := range []bool{false, true} {
			name := tt.name + map[bool]string{false: " (lean)", true: " (net/http)"}[stdlib]
			c := New(Options{URL: srv.URL, Kind: endpoint.Chat, Streaming: tt.stream, Timeout: 5 * time.Second, MaxConns: 1,
				Clock: record.NewClock(), StdlibTransport: stdlib, ServerTimings: !tt.off})
			rec := &record.Record{}
			c.Do(context.Background(), rec, []byte(`{}`))
			c.Close()
			if rec.Err != nil {
				t.Errorf("%s: %+v", name, rec.Err)
				continue
			}
			got := rec.ServerTimings
			if (got == nil) != (tt.want == nil) {
				t.Errorf("%s: timings %+v, want %+v", name, got, tt.want)
				continue
			}
			if got == nil {
				continue
			}
			same := func(a, b float64) bool { return math.IsNaN(a) && math.IsNaN(b) || math.Abs(a-b) < 1e-9 }
			if got.Source != tt.want.Source || !same(got.Queue, tt.want.Queue) || !same(got.Prefill, tt.want.Prefill) ||
				!same(got.Decode, tt.want.Decode) || !same(got.Total, tt.want.Total) || got.Rejected != 0 {
				t.Errorf("%s: timings %+v, want %+v", name, *got, *tt.want)
			}
		}
		srv.Close()
	}
}

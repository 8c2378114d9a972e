package mockserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/llmbench/llmbench/internal/client"
	"github.com/llmbench/llmbench/internal/dataset"
	"github.com/llmbench/llmbench/internal/endpoint"
	"github.com/llmbench/llmbench/internal/record"
	"github.com/llmbench/llmbench/internal/tokenizer"
)

func start(t *testing.T, cfg Config) (*Server, string) {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	url, stop, err := s.Start(context.Background(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return s, url
}

func body(t *testing.T, kind endpoint.Kind, prompt string, maxTokens int, stream bool) []byte {
	t.Helper()
	b, err := kind.Body(endpoint.Input{Model: "m", Prompt: prompt, MaxTokens: maxTokens, Streaming: stream, IncludeUsage: true})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func do(t *testing.T, url string, kind endpoint.Kind, stream bool, payload []byte) *record.Record {
	t.Helper()
	c := client.New(client.Options{URL: url + kind.Path(stream), Kind: kind, Streaming: stream, Timeout: 10 * time.Second, MaxConns: 8, Clock: record.NewClock()})
	defer c.Close()
	rec := &record.Record{}
	c.Do(context.Background(), rec, payload)
	return rec
}

// TestInjectedLatencies checks that the client measures what the server
// was told to inject. Tolerances: TTFT may be late by timer slack and
// loopback overhead (up to 6 ms), never early by more than 0.2 ms; the
// mean ITL within 1 ms, since tokens follow an absolute schedule and timer
// slack does not accumulate. Lateness from a loaded machine is one-sided
// and comes in bursts, so each measurement gets up to five attempts and is
// judged by its best one: being early fails at once, and an injected
// latency the server or client got systematically wrong fails every time.
func TestInjectedLatencies(t *testing.T) {
	const ttft, itl, tokens = 40 * time.Millisecond, 8 * time.Millisecond, 20
	cfg := DefaultConfig()
	cfg.TTFT, cfg.ITL = ttft, itl
	_, url := start(t, cfg)
	for _, kind := range []endpoint.Kind{endpoint.Chat, endpoint.Completions} {
		bestOfFive(t, string(kind), func() string {
			rec := do(t, url, kind, true, body(t, kind, "bako tire lumo", tokens, true))
			if !rec.Valid() {
				t.Fatalf("%s: %+v", kind, rec.Err)
			}
			if got := (tokenizer.Words{}).Count(rec.OutputText); got != tokens || len(rec.ResponsePerfs) != tokens {
				t.Fatalf("%s: %d tokens in %d chunks, want %d", kind, got, len(rec.ResponsePerfs), tokens)
			}
			if rec.Usage == nil || rec.Usage.PromptTokens != 3 || rec.Usage.CompletionTokens != tokens || rec.Usage.TotalTokens != tokens+3 {
				t.Fatalf("%s: usage %+v, want 3 prompt and %d completion tokens", kind, rec.Usage, tokens)
			}
			gotTTFT := time.Duration(rec.ResponsePerfs[0] - rec.StartPerf)
			gotITL := time.Duration(rec.ResponsePerfs[tokens-1]-rec.ResponsePerfs[0]) / (tokens - 1)
			if gotTTFT < ttft-200*time.Microsecond || gotITL < itl-time.Millisecond {
				t.Fatalf("%s: TTFT %v and mean ITL %v: earlier than the %v and %v injected", kind, gotTTFT, gotITL, ttft, itl)
			}
			if gotTTFT > ttft+6*time.Millisecond || gotITL > itl+time.Millisecond {
				return fmt.Sprintf("TTFT %v (want %v +6ms), mean ITL %v (want %v ±1ms)", gotTTFT, ttft, gotITL, itl)
			}
			return ""
		})
	}
	// Non-streaming: the whole response arrives after TTFT + (n-1)·ITL = 192 ms.
	bestOfFive(t, "non-streaming", func() string {
		rec := do(t, url, endpoint.Chat, false, body(t, endpoint.Chat, "x", tokens, false))
		want := ttft + (tokens-1)*itl
		got := time.Duration(rec.EndPerf - rec.StartPerf)
		if !rec.Valid() || got < want-time.Millisecond {
			t.Fatalf("non-streaming latency %v (err %+v), want %v", got, rec.Err, want)
		}
		if got > want+8*time.Millisecond {
			return fmt.Sprintf("latency %v, want %v +8ms", got, want)
		}
		return ""
	})
}

// bestOfFive runs attempt until it reports no problem (""), at most five
// times, and fails with the last problem if every attempt had one.
func bestOfFive(t *testing.T, what string, attempt func() string) {
	t.Helper()
	var problem string
	for range 5 {
		if problem = attempt(); problem == "" {
			return
		}
	}
	t.Errorf("%s, in each of 5 attempts; the last: %s", what, problem)
}

func TestZeroLatencyAndOutputDistribution(t *testing.T) {
	cfg := DefaultConfig()
	cfg.TTFT, cfg.ITL, cfg.OutputMean = 0, 0, 7
	_, url := start(t, cfg)
	// No max_tokens: the configured mean (7, stddev 0) is used.
	rec := do(t, url, endpoint.Completions, false, body(t, endpoint.Completions, "a b", 0, false))
	if !rec.Valid() || (tokenizer.Words{}).Count(rec.OutputText) != 7 {
		t.Fatalf("output %q err %+v, want 7 tokens", rec.OutputText, rec.Err)
	}
}

func TestNonStreamingShape(t *testing.T) {
	cfg := DefaultConfig()
	cfg.TTFT, cfg.ITL = 0, 0
	_, url := start(t, cfg)
	resp, err := http.Post(url+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"my-model","messages":[{"role":"user","content":[{"type":"text","text":"one two"}]}],"max_completion_tokens":3}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got struct {
		Object  string `json:"object"`
		Model   string `json:"model"`
		Choices []struct {
			Message      struct{ Role, Content string }
			FinishReason string `json:"finish_reason"`
		}
		Usage struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.Object != "chat.completion" || got.Model != "my-model" || len(got.Choices) != 1 ||
		got.Choices[0].Message.Role != "assistant" || got.Choices[0].FinishReason != "length" ||
		(tokenizer.Words{}).Count(got.Choices[0].Message.Content) != 3 || got.Usage.PromptTokens != 2 || got.Usage.CompletionTokens != 3 {
		t.Fatalf("response %+v", got)
	}
	for path, want := range map[string]string{"/v1/models": `"id":"mock-model"`, "/health": ""} {
		r, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if r.StatusCode != 200 || !bytes.Contains(b, []byte(want)) {
			t.Fatalf("GET %s: %d %s", path, r.StatusCode, b)
		}
	}
}

func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

func value(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	t.Helper()
	f, ok := fams[name]
	if !ok {
		t.Fatalf("no metric family %s", name)
	}
	for _, m := range f.Metric {
		match := true
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, lp := range m.Label {
				if lp.GetName() == labels[i] && lp.GetValue() == labels[i+1] {
					found = true
				}
			}
			match = match && found
		}
		if !match {
			continue
		}
		switch {
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	t.Fatalf("no series %s%v", name, labels)
	return 0
}

func TestMetricsFollowLoad(t *testing.T) {
	cfg := DefaultConfig()
	cfg.TTFT, cfg.ITL = 0, 0
	_, url := start(t, cfg)
	const n, prompt, out = 6, 4, 5
	for range n {
		if rec := do(t, url, endpoint.Chat, true, body(t, endpoint.Chat, "a b c d", out, true)); !rec.Valid() {
			t.Fatal(rec.Err)
		}
	}
	fams := scrape(t, url)
	checks := []struct {
		name   string
		labels []string
		want   float64
	}{
		{"vllm:request_success_total", []string{"finished_reason", "length"}, n},
		{"vllm:generation_tokens_total", nil, n * out},
		{"vllm:prompt_tokens_total", nil, n * prompt},
		{"vllm:time_to_first_token_seconds", nil, n},
		{"vllm:inter_token_latency_seconds", nil, n * (out - 1)},
		{"vllm:e2e_request_latency_seconds", nil, n},
		{"vllm:num_requests_running", []string{"model_name", "mock-model"}, 0},
		{"vllm:kv_cache_usage_perc", nil, 0},
		{"vllm:cache_config_info", []string{"block_size", "16"}, 1},
	}
	for _, c := range checks {
		if got := value(t, fams, c.name, c.labels...); got != c.want {
			t.Errorf("%s = %v, want %v", c.name, got, c.want)
		}
	}
	if fams["vllm:time_to_first_token_seconds"].GetType() != dto.MetricType_HISTOGRAM {
		t.Error("TTFT is not a histogram")
	}
}

func TestGaugesUnderLoadAndQueue(t *testing.T) {
	cfg := DefaultConfig()
	cfg.TTFT, cfg.ITL, cfg.MaxNumSeqs, cfg.KVCacheTokens = 0, 50*time.Millisecond, 2, 100
	_, url := start(t, cfg)
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() { do(t, url, endpoint.Chat, true, body(t, endpoint.Chat, "a b c d e", 10, true)) })
	}
	time.Sleep(150 * time.Millisecond)
	fams := scrape(t, url)
	if r, w := value(t, fams, "vllm:num_requests_running"), value(t, fams, "vllm:num_requests_waiting"); r != 2 || w != 1 {
		t.Errorf("running %v waiting %v, want 2 and 1", r, w)
	}
	// Two running requests each hold 5 prompt tokens plus a few generated ones.
	if kv := value(t, fams, "vllm:kv_cache_usage_perc"); kv < 0.12 || kv > 0.3 {
		t.Errorf("kv cache usage %v, want between 0.12 and 0.3", kv)
	}
	wg.Wait()
	if r := value(t, scrape(t, url), "vllm:num_requests_running"); r != 0 {
		t.Errorf("running %v after the load, want 0", r)
	}
}

func TestFaults(t *testing.T) {
	tests := []struct {
		name     string
		cfg      func(*Config)
		stream   bool
		wantType string
	}{
		{"error every 2", func(c *Config) { c.ErrorEvery = 2 }, true, "InternalServerError"},
		{"drop every 2 streaming", func(c *Config) { c.DropEvery = 2 }, true, record.ErrConnect},
		{"drop every 2 whole", func(c *Config) { c.DropEvery = 2 }, false, record.ErrConnect},
		{"garbage every 2 streaming", func(c *Config) { c.GarbageEvery = 2 }, true, record.ErrMalformed},
		{"garbage every 2 whole", func(c *Config) { c.GarbageEvery = 2 }, false, record.ErrMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.TTFT, cfg.ITL = 0, 0
			tc.cfg(&cfg)
			s, url := start(t, cfg)
			var failed []string
			for range 4 {
				rec := do(t, url, endpoint.Chat, tc.stream, body(t, endpoint.Chat, "a", 6, tc.stream))
				if !rec.Valid() {
					failed = append(failed, rec.Err.Type)
				}
			}
			if len(failed) != 2 || failed[0] != tc.wantType || failed[1] != tc.wantType {
				t.Fatalf("failures %v, want 2 × %s", failed, tc.wantType)
			}
			if s.Requests() != 4 {
				t.Fatalf("server saw %d requests, want 4", s.Requests())
			}
		})
	}
}

func TestBadRequest(t *testing.T) {
	_, url := start(t, DefaultConfig())
	resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader("{nope"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("status %d, want 400", resp.StatusCode)
	}
}

// TestNamedFaults reads each fault's raw response with a plain HTTP client
// (no Accept-Encoding, no decompression) and checks what is on the wire.
func TestNamedFaults(t *testing.T) {
	tests := []struct {
		fault       string
		stream      bool
		contentType string
		encoding    string
		check       func(body string) bool
	}{
		{"empty-body", true, "text/event-stream", "", func(b string) bool { return b == "" }},
		{"empty-body", false, "application/json", "", func(b string) bool { return b == "" }},
		{"no-data", true, "text/event-stream", "", func(b string) bool { return b != "" && !strings.Contains(b, "data:") }},
		{"empty-choices", true, "text/event-stream", "", func(b string) bool {
			return strings.Count(b, `"choices":[]`) == 3 && strings.HasSuffix(b, "data: [DONE]\n\n")
		}},
		{"empty-choices", false, "application/json", "", func(b string) bool { return strings.Contains(b, `"choices":[]`) }},
		{"null-content", true, "text/event-stream", "", func(b string) bool { return strings.Count(b, `"content":null`) == 2 }},
		{"null-content", false, "application/json", "", func(b string) bool { return strings.Contains(b, `"content":null`) }},
		{"html", true, "text/html; charset=utf-8", "", func(b string) bool { return strings.HasPrefix(b, "<!DOCTYPE html>") }},
		{"ignore-stream", true, "application/json", "", func(b string) bool { return json.Valid([]byte(b)) && strings.Contains(b, `"chat.completion"`) }},
		{"force-stream", false, "text/event-stream", "", func(b string) bool { return strings.HasSuffix(b, "data: [DONE]\n\n") }},
		{"truncate", true, "text/event-stream", "", func(b string) bool {
			return strings.Count(b, `"content":"`) == 1+3 && !strings.Contains(b, "[DONE]") && !strings.Contains(b, `"finish_reason":"`)
		}},
		{"truncate", false, "application/json", "", func(b string) bool { return len(b) > 10 && !json.Valid([]byte(b)) }},
		{"gzip", true, "text/event-stream", "gzip", func(b string) bool { return strings.HasPrefix(b, "\x1f\x8b") }},
		{"gzip", false, "application/json", "gzip", func(b string) bool { return strings.HasPrefix(b, "\x1f\x8b") }},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s stream=%v", tc.fault, tc.stream), func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.TTFT, cfg.ITL = 0, 0
			cfg.Faults = []FaultRule{{Name: tc.fault, Every: 2}}
			_, url := start(t, cfg)
			hc := &http.Client{Transport: &http.Transport{DisableCompression: true}}
			for i := 1; i <= 2; i++ {
				resp, err := hc.Post(url+"/v1/chat/completions", "application/json", bytes.NewReader(body(t, endpoint.Chat, "hello there", 6, tc.stream)))
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if i == 1 {
					// Every 2nd: the first request is served normally.
					if !strings.Contains(string(b), `"content":`) || resp.Header.Get("Content-Encoding") != "" {
						t.Fatalf("request 1 not served normally: %q", b)
					}
					continue
				}
				if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != tc.contentType || resp.Header.Get("Content-Encoding") != tc.encoding || !tc.check(string(b)) {
					t.Fatalf("status %d, type %q, encoding %q, body %q", resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Content-Encoding"), b)
				}
			}
		})
	}
}

func TestHangFaultAndRules(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Faults = []FaultRule{{Name: "hang", Every: 1}}
	_, url := start(t, cfg)
	hc := &http.Client{Timeout: 100 * time.Millisecond}
	if _, err := hc.Post(url+"/v1/chat/completions", "application/json", bytes.NewReader(body(t, endpoint.Chat, "x", 2, false))); err == nil {
		t.Fatal("a hanging request answered")
	}
	for _, bad := range []string{"nope", "html:0", "html:x"} {
		if _, err := ParseFaultRule(bad); err == nil {
			t.Fatalf("ParseFaultRule(%q) accepted", bad)
		}
	}
	if r, err := ParseFaultRule("gzip:3"); err != nil || r != (FaultRule{Name: "gzip", Every: 3}) {
		t.Fatalf("gzip:3 -> %+v, %v", r, err)
	}
	cfg.Faults = []FaultRule{{Name: "bogus", Every: 1}}
	if _, err := New(cfg); err == nil {
		t.Fatal("New accepted an unknown fault")
	}
}

// TestCorpusLanguage: with a real tokenizer's language, answers are corpus
// text of exactly max_tokens under that tokenizer, one piece per chunk,
// JSON-escaped however the text reads, and prompts count as it counts.
func TestCorpusLanguage(t *testing.T) {
	tok, err := tokenizer.O200k()
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.TTFT, cfg.ITL = 0, 0
	cfg.Language = dataset.NewCorpus(tok)
	_, url := start(t, cfg)
	const prompt = "Call me Ishmael. \"Quoted\"\n\ttabbed — dashed"
	for _, stream := range []bool{true, false} {
		for _, n := range []int{1, 17, 200} {
			rec := do(t, url, endpoint.Chat, stream, body(t, endpoint.Chat, prompt, n, stream))
			if !rec.Valid() {
				t.Fatalf("stream %v: %+v", stream, rec.Err)
			}
			if got := tok.Count(rec.OutputText); got != n {
				t.Errorf("stream %v: %d tokens in %q, want %d", stream, got, rec.OutputText, n)
			}
			if stream && len(rec.ResponsePerfs) != n {
				t.Errorf("%d chunks, want %d", len(rec.ResponsePerfs), n)
			}
			if rec.Usage == nil || rec.Usage.PromptTokens != tok.Count(prompt) || rec.Usage.CompletionTokens != n {
				t.Errorf("usage %+v, want %d prompt tokens", rec.Usage, tok.Count(prompt))
			}
		}
	}
}

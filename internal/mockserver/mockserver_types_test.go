package mockserver

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestFaultsOnEveryRoute: the faults strike every 2nd request whatever
// its route; the first is served normally.
func TestFaultsOnEveryRoute(t *testing.T) {
	wavBody, wavType := multipartBody(t, map[string]string{"stream": "true"}, map[string][]byte{"file": wav(2)})
	routes := []struct {
		name, path, contentType string
		body                    []byte
		stream                  bool
	}{
		{"embeddings", "/v1/embeddings", "", []byte(`{"input":["a b","c d"]}`), false},
		{"nim rankings", "/v1/ranking", "", []byte(`{"query":{"text":"q"},"passages":[{"text":"a"},{"text":"b"}]}`), false},
		{"messages stream", "/v1/messages", "", []byte(`{"messages":[{"role":"user","content":"hi"}],"max_tokens":6,"stream":true}`), true},
		{"images stream", "/v1/images/generations", "", []byte(`{"prompt":"p","stream":true,"partial_images":3}`), true},
		{"transcription stream", "/v1/audio/transcriptions", wavType, wavBody, true},
	}
	faults := []struct {
		name  string
		cfg   func(*Config)
		check func(code int, h http.Header, b []byte, stream bool) bool
	}{
		{"error-every", func(c *Config) { c.ErrorEvery = 2 }, func(code int, _ http.Header, _ []byte, _ bool) bool { return code == 500 }},
		{"html", func(c *Config) { c.Faults = []FaultRule{{Name: "html", Every: 2}} }, func(_ int, h http.Header, b []byte, _ bool) bool {
			return strings.HasPrefix(h.Get("Content-Type"), "text/html") && bytes.HasPrefix(b, []byte("<!DOCTYPE html>"))
		}},
		{"gzip", func(c *Config) { c.Faults = []FaultRule{{Name: "gzip", Every: 2}} }, func(code int, h http.Header, b []byte, _ bool) bool {
			return code == 200 && h.Get("Content-Encoding") == "gzip" && bytes.HasPrefix(b, []byte("\x1f\x8b"))
		}},
		{"truncate", func(c *Config) { c.Faults = []FaultRule{{Name: "truncate", Every: 2}} }, func(code int, _ http.Header, b []byte, stream bool) bool {
			if !stream {
				return code == 200 && len(b) > 0 && !json.Valid(b)
			}
			// Fewer events than a whole stream, each of them whole.
			return code == 200 && len(b) > 0 && bytes.HasSuffix(b, []byte("\n\n"))
		}},
		{"garbage-every", func(c *Config) { c.GarbageEvery = 2 }, func(code int, _ http.Header, b []byte, _ bool) bool {
			return code == 200 && !json.Valid(b) && !allEventsValid(b)
		}},
	}
	for _, f := range faults {
		for _, rt := range routes {
			t.Run(f.name+" "+rt.name, func(t *testing.T) {
				cfg := typesConfig()
				f.cfg(&cfg)
				s, url := start(t, cfg)
				var whole []byte
				for i := 1; i <= 2; i++ {
					code, h, b := post(t, url+rt.path, rt.contentType, rt.body)
					if i == 1 {
						if code != 200 || h.Get("Content-Encoding") != "" || (!json.Valid(b) && !allEventsValid(b)) {
							t.Fatalf("request 1 not served normally: status %d, %.300s", code, b)
						}
						whole = b
						continue
					}
					if !f.check(code, h, b, rt.stream) {
						t.Fatalf("status %d, type %q, encoding %q, body %.300q", code, h.Get("Content-Type"), h.Get("Content-Encoding"), b)
					}
					if f.name == "truncate" && rt.stream && len(events(t, b)) >= len(events(t, whole)) {
						t.Fatalf("truncated stream has %d events, the whole one %d", len(events(t, b)), len(events(t, whole)))
					}
				}
				if s.Requests() != 2 {
					t.Fatalf("server counted %d requests, want 2", s.Requests())
				}
			})
		}
	}
	// drop closes the connection: the client gets no answer.
	cfg := typesConfig()
	cfg.DropEvery = 1
	_, url := start(t, cfg)
	for _, rt := range routes {
		req, _ := http.NewRequest(http.MethodPost, url+rt.path, bytes.NewReader(rt.body))
		if rt.contentType != "" {
			req.Header.Set("Content-Type", rt.contentType)
		}
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		if err == nil {
			t.Errorf("drop %s: the answer arrived whole", rt.name)
		}
	}
}

// allEventsValid reports whether b is a stream of events whose data are
// all JSON.
func allEventsValid(b []byte) bool {
	if !bytes.Contains(b, []byte("data:")) {
		return false
	}
	for _, block := range strings.Split(string(b), "\n\n") {
		for _, line := range strings.Split(block, "\n") {
			if data, ok := strings.CutPrefix(line, "data:"); ok && !json.Valid([]byte(strings.TrimSpace(data))) {
				return false
			}
		}
	}
	return true
}

// TestOtherTypesInMetrics: requests of the other types count in the
// engine's metrics, and wait for a slot like chat's.
func TestOtherTypesInMetrics(t *testing.T) {
	cfg := typesConfig()
	cfg.MaxNumSeqs = 1
	cfg.PoolingOverhead = 300 * time.Millisecond
	_, url := start(t, cfg)
	before := scrape(t, url)
	prompt0 := value(t, before, "vllm:prompt_tokens_total")
	done := make(chan struct{}, 2)
	for range 2 {
		go func() {
			defer func() { done <- struct{}{} }()
			resp, err := http.Post(url+"/v1/embeddings", "application/json", strings.NewReader(`{"input":"one two three four"}`))
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
	}
	// One runs, one waits for the slot, for 300 ms each.
	deadline := time.Now().Add(3 * time.Second)
	for {
		m := scrape(t, url)
		if value(t, m, "vllm:num_requests_running") == 1 && value(t, m, "vllm:num_requests_waiting") == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("never saw one embeddings request running and one waiting")
		}
		time.Sleep(5 * time.Millisecond)
	}
	<-done
	<-done
	after := scrape(t, url)
	if got := value(t, after, "vllm:prompt_tokens_total") - prompt0; got != 8 {
		t.Errorf("prompt tokens grew by %v, want 8", got)
	}
	if got := value(t, after, "vllm:request_success_total", "finished_reason", "stop"); got != 2 {
		t.Errorf("%v requests succeeded, want 2", got)
	}
	if value(t, after, "vllm:num_requests_running") != 0 || value(t, after, "vllm:num_requests_waiting") != 0 {
		t.Error("requests still counted after their answers")
	}
}

package mockserver

// These tests speak each endpoint type's protocol by hand, with net/http
// and encoding/json only: requests built from the documented formats,
// answers decoded and checked, so that the server is judged against the
// protocols and not against llmbench's own client.

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// typesConfig is a quick server: no latency but what a test sets.
func typesConfig() Config {
	cfg := DefaultConfig()
	cfg.TTFT, cfg.ITL = 0, 0
	cfg.PoolingOverhead, cfg.PoolingPerToken = 0, 0
	cfg.ImageTime, cfg.VideoTime = 0, 0
	cfg.TranscriptionRTF = 0
	cfg.OutputMean = 7
	return cfg
}

// post sends body (JSON unless contentType says otherwise) and returns the
// status, the headers and the whole body.
func post(t *testing.T, url, contentType string, body []byte, header ...string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType == "" {
		contentType = "application/json"
	}
	req.Header.Set("Content-Type", contentType)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	hc := &http.Client{Transport: &http.Transport{DisableCompression: true}, Timeout: 10 * time.Second}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

// postOK posts and requires a 200 with the given Content-Type.
func postOK(t *testing.T, url, wantType string, body []byte) []byte {
	t.Helper()
	code, h, b := post(t, url, "", body)
	if code != http.StatusOK || h.Get("Content-Type") != wantType {
		t.Fatalf("POST %s: status %d, type %q, body %.300s", url, code, h.Get("Content-Type"), b)
	}
	return b
}

func decode(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("decode %.300s: %v", b, err)
	}
}

// wantError requires a 4xx answer of the given status with a JSON error
// member.
func wantError(t *testing.T, what string, code int, b []byte, want int) {
	t.Helper()
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if code != want || json.Unmarshal(b, &e) != nil || len(e.Error) == 0 || string(e.Error) == "null" {
		t.Errorf("%s: status %d body %s, want %d with an error member", what, code, b, want)
	}
}

// sseEvent is one Server-Sent Event: its event: name (if any) and data.
type sseEvent struct {
	name string
	data []byte
}

// events splits a text/event-stream body into its events.
func events(t *testing.T, b []byte) []sseEvent {
	t.Helper()
	var out []sseEvent
	for _, block := range strings.Split(string(b), "\n\n") {
		if strings.TrimSpace(block) == "" {
			continue
		}
		var ev sseEvent
		for _, line := range strings.Split(block, "\n") {
			switch {
			case strings.HasPrefix(line, "event:"):
				ev.name = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
			case strings.HasPrefix(line, "data:"):
				ev.data = []byte(strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
			}
		}
		out = append(out, ev)
	}
	return out
}

// eventType is an event's data "type" member.
func eventType(t *testing.T, ev sseEvent) string {
	t.Helper()
	var v struct {
		Type string `json:"type"`
	}
	decode(t, ev.data, &v)
	return v.Type
}

func wordCount(s string) int { return len(strings.Fields(s)) }

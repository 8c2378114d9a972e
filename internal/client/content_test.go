package client

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/llmbench/llmbench/internal/record"
)

func gzipped(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	io.WriteString(zw, s)
	zw.Close()
	return b.Bytes()
}

const (
	okChunk   = `data: {"choices":[{"delta":{"content":"hello"}}]}` + "\n\n"
	okWhole   = `{"choices":[{"message":{"content":"hello"},"finish_reason":"stop"}]}`
	stopChunk = `data: {"choices":[{"delta":{},"finish_reason":"stop"}]}` + "\n\n"
)

// respond writes a 200 with the given Content-Type (none when empty; an
// explicit empty header keeps net/http from sniffing one) and body.
func respond(contentType, encoding string, body []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if contentType == "" {
			w.Header()["Content-Type"] = nil
		} else {
			w.Header().Set("Content-Type", contentType)
		}
		if encoding != "" {
			w.Header().Set("Content-Encoding", encoding)
		}
		w.Write(body)
	}
}

// TestInvalidResults checks that every 200 without usable content is an
// InvalidInferenceResultError with a message saying what was missing and
// the cause the end-of-run warning names.
func TestInvalidResults(t *testing.T) {
	const sse, js, html = "text/event-stream", "application/json", "text/html; charset=utf-8"
	tests := []struct {
		name      string
		streaming bool
		handler   http.HandlerFunc
		wantMsg   string
		wantCause record.Cause
		partial   string
	}{
		{"empty stream", true, respond(sse, "", nil), emptyBodyMessage, record.CauseNoContent, ""},
		{"empty body", false, respond(js, "", nil), emptyBodyMessage, record.CauseNoContent, ""},
		{"whitespace body", false, respond(js, "", []byte(" \n")), emptyBodyMessage, record.CauseNoContent, ""},
		{"no data lines", true, respond(sse, "", []byte(": keep-alive\n\nevent: ping\n\n")), noDataMessage, record.CauseNoContent, ""},
		{"empty choices in every chunk", true, respond(sse, "", []byte(strings.Repeat(`data: {"choices":[]}`+"\n\n", 3)+"data: [DONE]\n\n")),
			"every chunk had empty choices or empty content", record.CauseNoContent, ""},
		{"null content chunks", true, respond(sse, "", []byte(`data: {"choices":[{"delta":{"content":null},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")),
			"every chunk had empty choices or empty content", record.CauseNoContent, ""},
		{"content null", false, respond(js, "", []byte(`{"choices":[{"message":{"role":"assistant","content":null},"finish_reason":"stop"}]}`)),
			"carry no content (content null or empty)", record.CauseNoContent, ""},
		{"no choices", false, respond(js, "", []byte(`{"id":"x","object":"chat.completion","choices":[]}`)), "has no choices", record.CauseNoContent, ""},
		{"html page streaming", true, respond(html, "", []byte("<!doctype html><title>404</title>")), htmlMessage, record.CauseWrongPath, ""},
		{"html page", false, respond(html, "", []byte("<html><body>Welcome to nginx!</body></html>")), htmlMessage, record.CauseWrongPath, ""},
		{"html without content type, streaming", true, respond("", "", []byte("<html>proxy login</html>")), htmlMessage, record.CauseWrongPath, ""},
		{"html as json", false, respond(js, "", []byte("\n<html>proxy login</html>")), htmlMessage, record.CauseWrongPath, ""},
		{"plain json when streaming", true, respond(js, "", []byte(okWhole)), plainJSONMessage, record.CauseStreamingMismatch, ""},
		{"plain json when streaming, no content type", true, respond("", "", []byte(okWhole)), plainJSONMessage, record.CauseStreamingMismatch, ""},
		{"sse when not streaming", false, respond(sse, "", []byte(okChunk+"data: [DONE]\n\n")), sseMessage, record.CauseStreamingMismatch, ""},
		{"sse when not streaming, json content type", false, respond(js, "", []byte(okChunk+"data: [DONE]\n\n")), sseMessage, record.CauseStreamingMismatch, ""},
		{"gzip stream", true, respond(sse, "gzip", gzipped(t, okChunk+"data: [DONE]\n\n")), compressedMessage("gzip"), record.CauseProxy, ""},
		{"gzip body", false, respond(js, "gzip", gzipped(t, okWhole)), compressedMessage("gzip"), record.CauseProxy, ""},
		{"gzip body without header", false, respond(js, "", gzipped(t, okWhole)), compressedMessage("gzip"), record.CauseProxy, ""},
		{"gzip stream without header", true, respond(sse, "", gzipped(t, okChunk)), compressedMessage("gzip"), record.CauseProxy, ""},
		{"truncated stream", true, respond(sse, "", []byte(okChunk+okChunk)), "ended without [DONE] and without a finish_reason", record.CauseTruncated, "hellohello"},
		{"truncated after a usage chunk", true, respond(sse, "", []byte(okChunk+`data: {"choices":[],"usage":{"prompt_tokens":3}}`+"\n\n"+okChunk)),
			"ended without [DONE] and without a finish_reason", record.CauseTruncated, "hellohello"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.handler)
			defer srv.Close()
			rec := &record.Record{}
			newClient(srv.URL, tc.streaming, 5*time.Second).Do(context.Background(), rec, []byte(`{}`))
			if rec.Valid() {
				t.Fatalf("accepted as a success: text %q, %d chunks", rec.OutputText, len(rec.ResponsePerfs))
			}
			if rec.Err.Type != record.ErrInvalidResult || !strings.HasPrefix(rec.Err.Message, "Invalid inference result: ") || !strings.Contains(rec.Err.Message, tc.wantMsg) {
				t.Fatalf("error %+v, want %s containing %q", rec.Err, record.ErrInvalidResult, tc.wantMsg)
			}
			if rec.Cause != tc.wantCause {
				t.Fatalf("cause %q, want %q", rec.Cause, tc.wantCause)
			}
			if rec.OutputText != tc.partial {
				t.Fatalf("output kept %q, want %q", rec.OutputText, tc.partial)
			}
			if rec.EndPerf < rec.StartPerf || rec.EndPerf == 0 {
				t.Fatalf("end %d, start %d", rec.EndPerf, rec.StartPerf)
			}
		})
	}
}

// TestValidEndings: a stream is complete with [DONE], with a finish
// reason (llama.cpp and others may close without [DONE]), or ending
// cleanly right after its usage chunk, which comes after the content.
func TestValidEndings(t *testing.T) {
	for name, body := range map[string]string{
		"done only":          okChunk + "data: [DONE]\n\n",
		"finish reason only": okChunk + stopChunk,
		"finish in content":  `data: {"choices":[{"delta":{"content":"hello"},"finish_reason":"length"}]}` + "\n\n",
		"usage last":         okChunk + `data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}` + "\n\n",
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(respond("text/event-stream", "", []byte(body)))
			defer srv.Close()
			rec := &record.Record{}
			newClient(srv.URL, true, 5*time.Second).Do(context.Background(), rec, []byte(`{}`))
			if !rec.Valid() || rec.OutputText != "hello" || rec.Cause != record.CauseNone {
				t.Fatalf("error %+v, text %q", rec.Err, rec.OutputText)
			}
		})
	}
}

func TestServerErrorAsPlainJSONWhenStreaming(t *testing.T) {
	srv := httptest.NewServer(respond("application/json", "", []byte(`{"object":"error","message":"model not loaded","code":503}`)))
	defer srv.Close()
	rec := &record.Record{}
	newClient(srv.URL, true, 5*time.Second).Do(context.Background(), rec, []byte(`{}`))
	if rec.Valid() || rec.Err.Type != record.ErrServer || !strings.Contains(rec.Err.Message, "model not loaded") {
		t.Fatalf("error %+v, want a ServerError", rec.Err)
	}
}

func TestNotFoundNamesTheURL(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	rec := &record.Record{}
	url := srv.URL + "/v1/chat/completions"
	newClient(url, false, 5*time.Second).Do(context.Background(), rec, []byte(`{}`))
	if rec.Valid() || rec.Err.Code != 404 || rec.Err.Type != "NotFound" || !strings.Contains(rec.Err.Message, "POST "+url) {
		t.Fatalf("error %+v, want a NotFound naming %s", rec.Err, url)
	}
}

func TestBasicAuthFromURL(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("Authorization"))
		io.WriteString(w, okWhole)
	}))
	defer srv.Close()
	user := url.UserPassword("alice", "pa:ss")
	for _, apiKey := range []string{"", "sk-1"} {
		c := New(Options{URL: srv.URL, Kind: "chat", Timeout: time.Second, Clock: record.NewClock(), User: user, APIKey: apiKey})
		rec := &record.Record{}
		c.Do(context.Background(), rec, []byte(`{}`))
		if !rec.Valid() {
			t.Fatal(rec.Err)
		}
	}
	// base64("alice:pa:ss"); an API key wins, as an explicit -H would.
	if len(got) != 2 || got[0] != "Basic YWxpY2U6cGE6c3M=" || got[1] != "Bearer sk-1" {
		t.Fatalf("Authorization headers %q", got)
	}
}

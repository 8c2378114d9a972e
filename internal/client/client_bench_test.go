package client

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/llmbench/llmbench/internal/endpoint"
	"github.com/llmbench/llmbench/internal/record"
)

// cannedServer answers every request on its connections with resp, reading
// requests with a fixed buffer, so a benchmark's allocations are the
// client's.
func cannedServer(b *testing.B, resp []byte) string {
	b.Helper()
	return "http://" + serveConns(b, func(conn net.Conn) {
		br := bufio.NewReaderSize(conn, 64<<10)
		for {
			length := 0
			for {
				line, err := br.ReadSlice('\n')
				if err != nil {
					return
				}
				if len(line) <= 2 {
					break
				}
				if v, ok := bytes.CutPrefix(line, []byte("Content-Length: ")); ok {
					length, _ = strconv.Atoi(string(bytes.TrimSpace(v)))
				}
			}
			if _, err := br.Discard(length); err != nil {
				return
			}
			if _, err := conn.Write(resp); err != nil {
				return
			}
		}
	})
}

// BenchmarkDo is one request through the lean transport against a server
// that answers at once: the client's CPU and allocations per request,
// non-streaming and streaming (16 content chunks), and streaming with the
// server's per-request timings read from its usage chunk.
func BenchmarkDo(b *testing.B) {
	content := `{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"bako tire mune"},"finish_reason":"stop"}],"usage":{"prompt_tokens":64,"completion_tokens":3,"total_tokens":67}}`
	whole := "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(content)) + "\r\n\r\n" + content
	var stream bytes.Buffer
	stream.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
	chunk := func(data string) {
		ev := "data: " + data + "\n\n"
		stream.WriteString(strconv.FormatInt(int64(len(ev)), 16) + "\r\n" + ev + "\r\n")
	}
	for range 16 {
		chunk(`{"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":" bako"},"finish_reason":null}]}`)
	}
	chunk(`{"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
	// The usage chunk with vLLM's per-request metrics, read with
	// ServerTimings on.
	chunk(`{"id":"c","object":"chat.completion.chunk","model":"m","choices":[],"usage":{"prompt_tokens":64,"completion_tokens":16,"total_tokens":80},"metrics":{"time_to_first_token_ms":85.2,"generation_time_ms":1240.5,"queue_time_ms":12.3,"mean_itl_ms":9.1,"tokens_per_second":103.2}}`)
	chunk("[DONE]")
	stream.WriteString("0\r\n\r\n")
	body := []byte(`{"model":"m","messages":[{"role":"user","content":"` + string(bytes.Repeat([]byte("bako "), 64)) + `"}]}`)
	for _, tc := range []struct {
		name      string
		streaming bool
		resp      []byte
		chars     int
		timings   bool
	}{
		{"non-streaming", false, []byte(whole), len("bako tire mune"), false},
		{"streaming", true, stream.Bytes(), 16 * len(" bako"), false},
		{"streaming, server timings", true, stream.Bytes(), 16 * len(" bako"), true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			url := cannedServer(b, tc.resp)
			c := New(Options{URL: url + "/v1/chat/completions", Kind: endpoint.Chat, Streaming: tc.streaming, Timeout: time.Minute,
				MaxConns: 1, Clock: record.NewClock(), ServerTimings: tc.timings})
			defer c.Close()
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				rec := record.Record{XRequestID: "0a1b2c3d-0000-4000-8000-000000000000"}
				c.Do(ctx, &rec, body)
				if rec.Err != nil || len(rec.OutputText) != tc.chars || (rec.ServerTimings != nil) != tc.timings {
					b.Fatalf("%+v %q %+v", rec.Err, rec.OutputText, rec.ServerTimings)
				}
			}
		})
	}
}

package client

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmbench/llmbench/internal/endpoint"
	"github.com/llmbench/llmbench/internal/record"
)

// TestIdleConnectionClosedByServer: a connection idle 150 ms is checked
// and, still open, used again; one the server's keep-alive timeout
// (500 ms) closed is not used: the next request goes out on a new
// connection, once.
func TestIdleConnectionClosedByServer(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, okWhole)
	}))
	srv.Config.IdleTimeout = 500 * time.Millisecond
	srv.Start()
	defer srv.Close()
	c := newClient(srv.URL, false, 5*time.Second)
	defer c.Close()
	if c.h1 == nil {
		t.Fatal("the lean transport is not in use for a plain http URL")
	}
	recs := []*record.Record{{}, {}, {}, {}}
	c.Do(context.Background(), recs[0], []byte(`{}`))
	c.Do(context.Background(), recs[1], []byte(`{}`)) // at once: the same connection
	time.Sleep(150 * time.Millisecond)                // checked (over 50 ms idle), still open
	c.Do(context.Background(), recs[2], []byte(`{}`))
	time.Sleep(time.Second) // past the server's 500 ms idle timeout
	c.Do(context.Background(), recs[3], []byte(`{}`))
	var reused []bool
	for i, r := range recs {
		if !r.Valid() {
			t.Fatalf("request %d: %+v", i+1, r.Err)
		}
		reused = append(reused, r.Trace.ConnReused)
	}
	if want := []bool{false, true, true, false}; !slices.Equal(reused, want) {
		t.Fatalf("reused %v, want %v (the third's connection checked and kept, the fourth's closed by the server)", reused, want)
	}
	if n := requests.Load(); n != 4 {
		t.Fatalf("the server saw %d requests, want 4", n)
	}
}

// TestDroppedRequestNotReplayed: a server that reads a request and drops
// the connection without answering may have acted on it; the request is a
// ConnectionError, never sent a second time.
func TestDroppedRequestNotReplayed(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if requests.Add(1) == 2 {
			panic(http.ErrAbortHandler)
		}
		io.WriteString(w, okWhole)
	}))
	defer srv.Close()
	c := newClient(srv.URL, false, 5*time.Second)
	defer c.Close()
	first, second := &record.Record{}, &record.Record{}
	c.Do(context.Background(), first, []byte(`{}`))
	c.Do(context.Background(), second, []byte(`{}`))
	if !first.Valid() || second.Err == nil || second.Err.Type != record.ErrConnect || !second.Trace.ConnReused {
		t.Fatalf("first %+v, second %+v reused %v: want the second a ConnectionError on the reused connection", first.Err, second.Err, second.Trace.ConnReused)
	}
	if !strings.Contains(second.Err.Message, "closed the connection without a response") {
		t.Fatalf("message %q", second.Err.Message)
	}
	if n := requests.Load(); n != 2 {
		t.Fatalf("the server saw %d requests, want 2 (no replay)", n)
	}
}

// scriptedServer answers every request on a connection with the next of
// responses, written as they are; it returns the requests' raw heads.
func scriptedServer(t *testing.T, responses ...string) (string, <-chan string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	heads := make(chan string, len(responses))
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		br := bufio.NewReader(conn)
		for _, resp := range responses {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			var head bytes.Buffer
			req.Header.Write(&head)
			io.Copy(io.Discard, req.Body)
			heads <- req.Method + " " + req.RequestURI + "\n" + head.String()
			io.WriteString(conn, resp)
		}
	}()
	return "http://" + ln.Addr().String(), heads
}

// TestH1ResponseFraming: interim 100 Continue, chunk extensions, chunks
// split inside SSE lines and trailers are read as HTTP/1.1 says, and the
// connection is used again after each (one accept serves all three);
// the request carries the run's headers and its ids.
func TestH1ResponseFraming(t *testing.T) {
	stream := "data: {\"choices\":[{\"delta\":{\"content\":\"he\"}}]}\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"llo\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
	chunked := func(parts ...string) string {
		var b strings.Builder
		for i, p := range parts {
			ext := ""
			if i == 0 {
				ext = ";name=value"
			}
			b.WriteString(strings.ToUpper(strconv.FormatInt(int64(len(p)), 16)) + ext + "\r\n" + p + "\r\n")
		}
		return b.String()
	}
	resp := "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n" +
		chunked(stream[:7], stream[7:60], stream[60:]) + "0\r\nX-Trailer: 1\r\n\r\n"
	url, heads := scriptedServer(t, resp, resp, resp)
	c := New(Options{URL: url + "/v1/chat/completions", Kind: endpoint.Chat, Streaming: true, Timeout: 5 * time.Second, MaxConns: 1, Clock: record.NewClock(),
		APIKey: "sk-abc", Headers: []string{"X-Custom: 1"}})
	defer c.Close()
	for i := range 3 {
		r := &record.Record{XRequestID: "req-1", CorrelationID: "corr-1"}
		c.Do(context.Background(), r, []byte(`{"x":1}`))
		if !r.Valid() || r.OutputText != "hello" || len(r.ResponsePerfs) != 2 || (i > 0) != r.Trace.ConnReused {
			t.Fatalf("request %d: err %+v text %q chunks %d reused %v", i, r.Err, r.OutputText, len(r.ResponsePerfs), r.Trace.ConnReused)
		}
		if r.Trace.BytesReceived != int64(len(resp)) {
			t.Fatalf("request %d: %d bytes received, want %d", i, r.Trace.BytesReceived, len(resp))
		}
	}
	head := <-heads
	for _, want := range []string{"POST /v1/chat/completions\n", "Authorization: Bearer sk-abc\r\n", "X-Custom: 1\r\n", "X-Request-Id: req-1\r\n",
		"X-Correlation-Id: corr-1\r\n", "Accept: text/event-stream\r\n", "Content-Type: application/json\r\n"} {
		if !strings.Contains(head, want) {
			t.Fatalf("request head lacks %q:\n%s", want, head)
		}
	}
}

// TestChunkDataNotHeldForItsCRLF: a chunk whose closing CRLF comes in a
// later write (300 ms on) is delivered, and its event timed, when its data
// arrives, not when the CRLF does.
func TestChunkDataNotHeldForItsCRLF(t *testing.T) {
	ev := func(text string) string {
		return "data: {\"choices\":[{\"delta\":{\"content\":\"" + text + "\"}}]}\n\n"
	}
	first, rest := ev("he"), ev("llo")+"data: [DONE]\n\n"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		if _, err := http.ReadRequest(bufio.NewReader(conn)); err != nil {
			return
		}
		io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"+
			strconv.FormatInt(int64(len(first)), 16)+"\r\n"+first)
		time.Sleep(300 * time.Millisecond)
		io.WriteString(conn, "\r\n"+strconv.FormatInt(int64(len(rest)), 16)+"\r\n"+rest+"\r\n0\r\n\r\n")
	}()
	c := New(Options{URL: "http://" + ln.Addr().String(), Kind: endpoint.Chat, Streaming: true, Timeout: 5 * time.Second, MaxConns: 1, Clock: record.NewClock()})
	defer c.Close()
	r := &record.Record{}
	c.Do(context.Background(), r, []byte(`{}`))
	if !r.Valid() || r.OutputText != "hello" || len(r.ResponsePerfs) != 2 {
		t.Fatalf("err %+v text %q events %d", r.Err, r.OutputText, len(r.ResponsePerfs))
	}
	if gap := time.Duration(r.ResponsePerfs[1] - r.ResponsePerfs[0]); gap < 250*time.Millisecond {
		t.Fatalf("the events arrived %v apart, want about 300 ms: the first was held until its CRLF came", gap)
	}
}

// TestH1BodyEndings: a sized body and a body that runs to the
// connection's end (HTTP/1.0, no length) are read whole; only the sized
// one's connection is kept.
func TestH1BodyEndings(t *testing.T) {
	sized := "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(okWhole)) + "\r\n\r\n" + okWhole
	toEOF := "HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n" + okWhole
	url, _ := scriptedServer(t, sized, toEOF)
	c := New(Options{URL: url, Kind: endpoint.Chat, Timeout: 5 * time.Second, MaxConns: 1, Clock: record.NewClock()})
	defer c.Close()
	a, b := &record.Record{}, &record.Record{}
	c.Do(context.Background(), a, []byte(`{}`))
	c.Do(context.Background(), b, []byte(`{}`))
	if !a.Valid() || !b.Valid() || a.OutputText == "" || a.OutputText != b.OutputText || !b.Trace.ConnReused {
		t.Fatalf("a %+v %q, b %+v %q reused %v", a.Err, a.OutputText, b.Err, b.OutputText, b.Trace.ConnReused)
	}
	if n := len(c.h1.idle); n != 0 {
		t.Fatalf("%d idle connections after a body read to the connection's end, want 0", n)
	}
}

// FuzzH1Response reads arbitrary bytes as a response: never a panic, and
// whenever net/http's own reader takes the response and its body whole,
// this transport reads the same status and the same body bytes.
func FuzzH1Response(f *testing.F) {
	f.Add([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n0\r\nT: 1\r\n\r\n"))
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"))
	f.Add([]byte("HTTP/1.1 500 Internal Server Error\r\nContent-Length: 2\r\nConnection: close\r\n\r\nno"))
	f.Add([]byte("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n"))
	f.Add([]byte("HTTP/1.0 200 OK\r\n\r\nto the end"))
	f.Add([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		ours, oursCode, oursErr := readWithH1(raw)
		want, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), &http.Request{Method: http.MethodPost})
		if err != nil || want.StatusCode < 200 || len(want.TransferEncoding) > 1 || want.ProtoMajor != 1 || want.ProtoMinor > 1 {
			return // only HTTP/1.0 and 1.1 are spoken here, as servers do
		}
		wantBody, err := io.ReadAll(want.Body)
		if err != nil {
			return
		}
		if oursErr != nil {
			t.Fatalf("net/http reads status %d body %q; this transport fails: %v", want.StatusCode, wantBody, oursErr)
		}
		if oursCode != want.StatusCode || !bytes.Equal(ours, wantBody) {
			t.Fatalf("status %d body %q, net/http %d %q", oursCode, ours, want.StatusCode, wantBody)
		}
	})
}

// readWithH1 reads raw as the transport reads a response.
func readWithH1(raw []byte) ([]byte, int, error) {
	client, server := net.Pipe()
	go func() {
		server.Write(raw)
		server.Close()
	}()
	defer client.Close()
	pc := &h1Conn{conn: client, br: bufio.NewReaderSize(client, 32<<10)}
	body := &h1Body{t: &h1Transport{maxIdle: 1}, pc: pc, stop: func() bool { return true }}
	resp := &body.resp
	for {
		if err := readResponseHead(pc.br, resp, false); err != nil {
			return nil, 0, err
		}
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			break
		}
	}
	body.start()
	b, err := io.ReadAll(body)
	body.Close()
	return b, resp.StatusCode, err
}

// TestEarlyAnswer: a server that answers before it has read the request's
// body (413 for a body over its limit) and closes the connection makes
// the client's write fail; the answer it sent is still what the record
// holds (the status and its text), not a connection error. (net/http's
// transport reads the answer on one goroutine while another writes, and
// reports whichever of the answer and the failed write it sees first:
// here, the failed write in most runs.)
func TestEarlyAnswer(t *testing.T) {
	const answer = "request body over the limit"
	addr := serveConns(t, func(conn net.Conn) {
		if _, err := http.ReadRequest(bufio.NewReader(conn)); err != nil {
			return
		}
		io.WriteString(conn, "HTTP/1.1 413 Payload Too Large\r\nContent-Type: text/plain\r\nConnection: close\r\nContent-Length: "+
			strconv.Itoa(len(answer))+"\r\n\r\n"+answer)
		// Closed with the body unread: the client gets a reset.
	})
	// Far more than the socket buffers take, so the write is still going
	// when the answer comes.
	body := bytes.Repeat([]byte("x"), 64<<20)
	c := New(Options{URL: "http://" + addr, Kind: endpoint.Chat, Timeout: 10 * time.Second, MaxConns: 1, Clock: record.NewClock()})
	defer c.Close()
	for i := range 3 {
		rec := &record.Record{}
		c.Do(context.Background(), rec, body)
		if rec.Err == nil || rec.Err.Code != 413 || rec.Err.Type != "RequestEntityTooLarge" || !strings.Contains(rec.Err.Message, answer) {
			t.Fatalf("request %d: error %+v, want the server's 413 and its text", i, rec.Err)
		}
	}
	if n := len(c.h1.idle); n != 0 {
		t.Fatalf("%d idle connections after answers that closed them, want 0", n)
	}
}

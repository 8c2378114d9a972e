package client

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmbench/llmbench/internal/endpoint"
	"github.com/llmbench/llmbench/internal/record"
)

// testOptions are a test client's options: chat, 4 connections, an API key.
func testOptions(url string, streaming bool, timeout time.Duration) Options {
	return Options{URL: url, Kind: endpoint.Chat, Streaming: streaming, Timeout: timeout, MaxConns: 4, Clock: record.NewClock(), APIKey: "sk-secret"}
}

func newClient(url string, streaming bool, timeout time.Duration) *Client {
	return New(testOptions(url, streaming, timeout))
}

func sseServer(t *testing.T, body func(w http.ResponseWriter, r *http.Request)) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		body(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestStreamRecordsChunks(t *testing.T) {
	var gotAuth, gotReqID string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth, gotReqID = r.Header.Get("Authorization"), r.Header.Get("X-Request-ID")
		f := w.(http.Flusher)
		for _, c := range []string{
			`{"choices":[{"delta":{"role":"assistant","content":""}}]}`,
			`{"choices":[{"delta":{"content":"hello"}}]}`,
			`{"choices":[{"delta":{"content":" world"}}]}`,
			`{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`,
			`[DONE]`,
		} {
			io.WriteString(w, "data: "+c+"\n\n")
			f.Flush()
			time.Sleep(5 * time.Millisecond)
		}
	}))
	defer srv.Close()
	c := newClient(srv.URL, true, 5*time.Second)
	rec := &record.Record{XRequestID: "req-1"}
	c.Do(context.Background(), rec, []byte(`{}`))
	if rec.Err != nil {
		t.Fatalf("unexpected error %+v", rec.Err)
	}
	if gotAuth != "Bearer sk-secret" || gotReqID != "req-1" {
		t.Fatalf("headers: auth %q request id %q", gotAuth, gotReqID)
	}
	if rec.OutputText != "hello world" || len(rec.ResponsePerfs) != 2 {
		t.Fatalf("text %q with %d content chunks, want 'hello world' in 2", rec.OutputText, len(rec.ResponsePerfs))
	}
	if gap := time.Duration(rec.ResponsePerfs[1] - rec.ResponsePerfs[0]); gap < 4*time.Millisecond {
		t.Fatalf("chunks 5ms apart were timed %v apart", gap)
	}
	if rec.Usage == nil || rec.Usage.TotalTokens != 5 {
		t.Fatalf("usage %+v", rec.Usage)
	}
	if rec.Trace.FirstByte == 0 || rec.Trace.FirstByte > rec.ResponsePerfs[0] || rec.EndPerf < rec.ResponsePerfs[1] {
		t.Fatalf("trace first byte %d, chunks %v, end %d out of order", rec.Trace.FirstByte, rec.ResponsePerfs, rec.EndPerf)
	}
}

func TestErrorPaths(t *testing.T) {
	tests := []struct {
		name      string
		handler   http.HandlerFunc
		streaming bool
		timeout   time.Duration
		wantType  string
		wantCode  int
		wantMsg   string
		partial   string
	}{
		{
			name: "http 500",
			handler: func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, `{"error":{"message":"engine dead"}}`, http.StatusInternalServerError)
			},
			wantType: "InternalServerError", wantCode: 500, wantMsg: "engine dead",
		},
		{
			name:     "http 429",
			handler:  func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTooManyRequests) },
			wantType: "TooManyRequests", wantCode: 429, wantMsg: "429 Too Many Requests",
		},
		{
			name: "garbage sse",
			handler: func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, "data: {\"choices\":[{\"delta\":{\"content\":\"ok\"}}]}\n\ndata: {not json\n\n")
			},
			streaming: true, wantType: record.ErrMalformed, wantMsg: "parse chat response", partial: "ok",
		},
		{
			name: "error object mid-stream",
			handler: func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, "data: {\"error\":{\"message\":\"out of memory\",\"code\":500}}\n\n")
			},
			streaming: true, wantType: record.ErrServer, wantMsg: "out of memory",
		},
		{
			name: "dropped connection",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, "data: {\"choices\":[{\"delta\":{\"content\":\"half\"}}]}\n\n")
				w.(http.Flusher).Flush()
				panic(http.ErrAbortHandler)
			},
			streaming: true, wantType: record.ErrConnect, wantMsg: "unexpected EOF", partial: "half",
		},
		{
			name: "malformed whole body",
			handler: func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, `{"choices": [`)
			},
			wantType: record.ErrMalformed, wantMsg: "parse chat response",
		},
		{
			name: "timeout",
			handler: func(w http.ResponseWriter, r *http.Request) {
				// The server notices a gone client only once the body is read.
				io.Copy(io.Discard, r.Body)
				select {
				case <-time.After(2 * time.Second):
				case <-r.Context().Done():
				}
			},
			timeout: 50 * time.Millisecond, wantType: record.ErrTimeout, wantCode: 408, wantMsg: "timed out after 0.05 seconds",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.handler)
			defer srv.Close()
			timeout := tc.timeout
			if timeout == 0 {
				timeout = 5 * time.Second
			}
			rec := &record.Record{}
			newClient(srv.URL, tc.streaming, timeout).Do(context.Background(), rec, []byte(`{}`))
			if rec.Valid() {
				t.Fatal("request should have failed")
			}
			if rec.Err.Type != tc.wantType || rec.Err.Code != tc.wantCode || !strings.Contains(rec.Err.Message, tc.wantMsg) {
				t.Fatalf("error %+v, want type %s code %d message containing %q", rec.Err, tc.wantType, tc.wantCode, tc.wantMsg)
			}
			if rec.OutputText != tc.partial {
				t.Fatalf("partial output %q, want %q", rec.OutputText, tc.partial)
			}
			if rec.EndPerf < rec.StartPerf {
				t.Fatalf("end %d before start %d", rec.EndPerf, rec.StartPerf)
			}
		})
	}
}

func TestConnectionRefused(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	rec := &record.Record{}
	newClient(url, false, time.Second).Do(context.Background(), rec, []byte(`{}`))
	if rec.Valid() || rec.Err.Type != record.ErrConnect || !strings.Contains(rec.Err.Message, "refused") {
		t.Fatalf("error %+v, want a refused ConnectionError", rec.Err)
	}
}

func TestCancelled(t *testing.T) {
	srv := sseServer(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-time.After(2 * time.Second):
		case <-r.Context().Done():
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	rec := &record.Record{}
	newClient(srv.URL, true, 10*time.Second).Do(ctx, rec, []byte(`{}`))
	if rec.Valid() || rec.Err.Type != record.ErrCancelled || rec.Err.Code != 499 || !rec.Cancelled || rec.CancelledPerf == 0 {
		t.Fatalf("record %+v error %+v, want a cancellation", rec, rec.Err)
	}
}

// TestStreamsReuseTheirConnection: a stream read to its [DONE] gives its
// connection back to the pool, so the next request does not pay a new
// handshake inside its measured time; a server that keeps the stream open
// after [DONE] costs the client DrainWait, then the connection.
func TestStreamsReuseTheirConnection(t *testing.T) {
	for _, tc := range []struct {
		name      string
		holdOpen  bool
		drainWait time.Duration // generous where the wait must not end
		wantConns int64
	}{
		// The end of the chunked body comes in its own packet, after the
		// client has read [DONE].
		{"ends just after [DONE]", false, 10 * time.Second, 1},
		{"held open after [DONE]", true, 20 * time.Millisecond, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var conns atomic.Int64
			release := make(chan struct{})
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n")
				w.(http.Flusher).Flush()
				if !tc.holdOpen {
					time.Sleep(time.Millisecond)
					return
				}
				select {
				case <-r.Context().Done():
				case <-release:
				}
			}))
			srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
				if s == http.StateNew {
					conns.Add(1)
				}
			}
			srv.Start()
			defer srv.Close()
			defer close(release)
			c := New(Options{URL: srv.URL, Kind: endpoint.Chat, Streaming: true, Timeout: 30 * time.Second, MaxConns: 4,
				Clock: record.NewClock(), DrainWait: tc.drainWait})
			defer c.Close()
			for i := range 5 {
				rec := &record.Record{}
				start := time.Now()
				c.Do(context.Background(), rec, []byte(`{}`))
				if rec.Err != nil || rec.OutputText != "hi" {
					t.Fatalf("request %d: %+v %q", i, rec.Err, rec.OutputText)
				}
				if took := time.Since(start); tc.holdOpen && took > 10*time.Second {
					t.Fatalf("request %d took %v: the wait after [DONE] is not bounded", i, took)
				}
			}
			if got := conns.Load(); got != tc.wantConns {
				t.Fatalf("%d connections for 5 sequential streams, want %d", got, tc.wantConns)
			}
		})
	}
}

// TestCancelAfterSent: a request still streaming its delay after it was
// fully sent is cancelled there and recorded so; one answered sooner is
// not; the server sees the disconnect.
func TestCancelAfterSent(t *testing.T) {
	gone := make(chan struct{}, 4)
	srv := sseServer(t, func(w http.ResponseWriter, r *http.Request) {
		f := w.(http.Flusher)
		for i := range 40 {
			if r.URL.Query().Get("fast") != "" && i == 2 {
				io.WriteString(w, "data: [DONE]\n\n")
				return
			}
			io.WriteString(w, `data: {"choices":[{"delta":{"content":"x"}}]}`+"\n\n")
			f.Flush()
			select {
			case <-time.After(20 * time.Millisecond):
			case <-r.Context().Done():
				gone <- struct{}{}
				return
			}
		}
	})
	c := newClient(srv.URL, true, 5*time.Second)
	rec := &record.Record{}
	c.DoCancelAfter(context.Background(), rec, []byte(`{}`), 100*time.Millisecond)
	if !rec.Cancelled || rec.Err == nil || rec.Err.Code != 499 || rec.Err.Type != record.ErrCancelled {
		t.Fatalf("record %+v, want cancelled with 499", rec.Err)
	}
	if d := time.Duration(rec.CancelledPerf - rec.Trace.WroteRequest); d < 100*time.Millisecond || d > 600*time.Millisecond {
		t.Fatalf("cancelled %v after the request was sent, want 100 ms", d)
	}
	if len(rec.ResponsePerfs) == 0 {
		t.Fatal("the chunks before the cancellation were not recorded")
	}
	select {
	case <-gone:
	case <-time.After(2 * time.Second):
		t.Fatal("the server never saw the client go")
	}
	fast := newClient(srv.URL+"?fast=1", true, 5*time.Second)
	rec = &record.Record{}
	fast.DoCancelAfter(context.Background(), rec, []byte(`{}`), 500*time.Millisecond)
	if rec.Cancelled || rec.Err != nil {
		t.Fatalf("a request answered before its cancellation: %+v", rec.Err)
	}
}

// TestTimeoutEachTransport: a request past its timeout is recorded as a
// timeout by both transports, whether the server is silent before the
// response head or stops mid-stream (the tokens received are kept); a
// request cancelled by its caller is a cancellation, not a timeout; and
// the connection a timed-out request used is not given to the next one,
// which succeeds within its own timeout.
func TestTimeoutEachTransport(t *testing.T) {
	var slow atomic.Bool
	srv := sseServer(t, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.URL.Query().Get("at") == "head" && slow.Load() {
			select {
			case <-time.After(2 * time.Second):
			case <-r.Context().Done():
			}
			return
		}
		io.WriteString(w, "data: {\"choices\":[{\"delta\":{\"content\":\"part\"}}]}\n\n")
		w.(http.Flusher).Flush()
		if slow.Load() {
			select {
			case <-time.After(2 * time.Second):
			case <-r.Context().Done():
			}
			return
		}
		io.WriteString(w, "data: [DONE]\n\n")
	})
	for _, stdlib := range []bool{false, true} {
		for _, at := range []string{"head", "stream"} {
			t.Run(fmt.Sprintf("stdlib=%v/%s", stdlib, at), func(t *testing.T) {
				c := New(Options{URL: srv.URL + "/?at=" + at, Kind: endpoint.Chat, Streaming: true, Timeout: 300 * time.Millisecond,
					MaxConns: 1, Clock: record.NewClock(), StdlibTransport: stdlib})
				defer c.Close()
				slow.Store(true)
				rec := &record.Record{}
				start := time.Now()
				c.Do(context.Background(), rec, []byte(`{}`))
				took := time.Since(start)
				if rec.Err == nil || rec.Err.Type != record.ErrTimeout || rec.Err.Code != 408 || rec.Cancelled {
					t.Fatalf("error %+v cancelled %v, want a timeout", rec.Err, rec.Cancelled)
				}
				if took < 300*time.Millisecond || took > 1500*time.Millisecond {
					t.Fatalf("timed out after %v, want about 300 ms", took)
				}
				if want := map[string]string{"head": "", "stream": "part"}[at]; rec.OutputText != want {
					t.Fatalf("partial output %q, want %q", rec.OutputText, want)
				}

				slow.Store(false)
				rec = &record.Record{}
				c.Do(context.Background(), rec, []byte(`{}`))
				if rec.Err != nil || rec.OutputText != "part" {
					t.Fatalf("the next request: %+v %q, want success", rec.Err, rec.OutputText)
				}

				slow.Store(true)
				ctx, cancel := context.WithCancel(context.Background())
				time.AfterFunc(30*time.Millisecond, cancel)
				rec = &record.Record{}
				c.Do(ctx, rec, []byte(`{}`))
				if rec.Err == nil || rec.Err.Type != record.ErrCancelled || !rec.Cancelled {
					t.Fatalf("error %+v, want a cancellation", rec.Err)
				}
			})
		}
	}
}

// TestOneAuthorizationHeader: -H Authorization, --api-key and a URL's
// user:pw each set the one Authorization header, in that precedence, on
// both transports; never two.
func TestOneAuthorizationHeader(t *testing.T) {
	var mu sync.Mutex
	var got [][]string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Values("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"choices":[{"message":{"content":"hi"},"finish_reason":"stop"}]}`))
	}))
	defer srv.Close()
	user := url.UserPassword("u", "p")
	for _, tc := range []struct {
		key     string
		headers []string
		want    string
	}{
		{"k1", []string{"authorization: Bearer h1"}, "Bearer h1"},
		{"k1", nil, "Bearer k1"},
		{"", nil, "Basic dTpw"},
	} {
		for _, stdlib := range []bool{false, true} {
			got = nil
			c := New(Options{URL: srv.URL, Kind: endpoint.Chat, Timeout: 5 * time.Second, MaxConns: 1, Clock: record.NewClock(),
				APIKey: tc.key, Headers: tc.headers, User: user, StdlibTransport: stdlib})
			rec := &record.Record{}
			c.Do(context.Background(), rec, []byte(`{}`))
			c.Close()
			if rec.Err != nil || len(got) != 1 || len(got[0]) != 1 || got[0][0] != tc.want {
				t.Errorf("key %q headers %v (net/http %v): Authorization %v, want one %q (%v)", tc.key, tc.headers, stdlib, got, tc.want, rec.Err)
			}
		}
	}
}

// TestRedirects: a 307 or 308 is followed with the POST's method and body
// (credentials only to the configured host), on both transports, and the
// record says where it led; a 301 is an error naming its target; a loop
// stops after 10 hops.
func TestRedirects(t *testing.T) {
	const ok = `{"choices":[{"message":{"content":"hi"},"finish_reason":"stop"}]}`
	var mu sync.Mutex
	var seen []string // method, body and Authorization at the target
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, r.Method+" "+string(b)+" auth="+r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(ok))
	}))
	defer target.Close()
	elsewhere := strings.Replace(target.URL, "127.0.0.1", "localhost", 1)
	var origin *httptest.Server
	origin = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		switch r.URL.Path {
		case "/away": // another host name: no credentials there
			http.Redirect(w, r, elsewhere+"/v1/chat/completions", http.StatusTemporaryRedirect)
		case "/moved":
			http.Redirect(w, r, "/here", http.StatusPermanentRedirect) // relative, same host
		case "/here":
			b := r.Header.Get("Authorization")
			mu.Lock()
			seen = append(seen, r.Method+" same-host auth="+b)
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(ok))
		case "/old":
			http.Redirect(w, r, target.URL+"/new", http.StatusMovedPermanently)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusTemporaryRedirect)
		}
	}))
	defer origin.Close()
	for _, stdlib := range []bool{false, true} {
		do := func(path string) *record.Record {
			c := New(Options{URL: origin.URL + path, Kind: endpoint.Chat, Timeout: 5 * time.Second, MaxConns: 1, Clock: record.NewClock(),
				APIKey: "k-1234", StdlibTransport: stdlib})
			defer c.Close()
			rec := &record.Record{}
			c.Do(context.Background(), rec, []byte(`{"x":1}`))
			return rec
		}
		seen = nil
		if rec := do("/away"); !rec.Valid() || rec.RedirectedTo != elsewhere+"/v1/chat/completions" || len(seen) != 1 || seen[0] != `POST {"x":1} auth=` {
			t.Errorf("net/http %v, 307 to another host: err %+v, redirected to %q, target saw %q", stdlib, rec.Err, rec.RedirectedTo, seen)
		}
		seen = nil
		if rec := do("/moved"); !rec.Valid() || rec.RedirectedTo != origin.URL+"/here" || len(seen) != 1 || seen[0] != "POST same-host auth=Bearer k-1234" {
			t.Errorf("net/http %v, 308 on the same host: err %+v, redirected to %q, saw %q", stdlib, rec.Err, rec.RedirectedTo, seen)
		}
		if rec := do("/old"); rec.Valid() || rec.Err.Code != 301 || !strings.Contains(rec.Err.Message, target.URL+"/new") {
			t.Errorf("net/http %v, 301: %+v", stdlib, rec.Err)
		}
		if rec := do("/loop"); rec.Valid() || !strings.Contains(rec.Err.Message, "stopped after 10 redirects") {
			t.Errorf("net/http %v, loop: %+v", stdlib, rec.Err)
		}
	}
}

// TestServerDate: with ServerDates, both transports record the response's
// Date header (here a fixed one, and Go's own); without, nothing.
func TestServerDate(t *testing.T) {
	for _, fixed := range []bool{true, false} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if fixed {
				w.Header().Set("Date", "Tue, 24 Nov 2026 10:00:07 GMT")
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"choices":[{"message":{"content":"hi"}}]}`))
		}))
		for _, stdlib := range []bool{false, true} {
			for _, ask := range []bool{true, false} {
				c := New(Options{URL: srv.URL, Kind: endpoint.Chat, Timeout: 5 * time.Second, MaxConns: 1, Clock: record.NewClock(),
					StdlibTransport: stdlib, ServerDates: ask})
				rec := &record.Record{}
				before := time.Now().Unix()
				c.Do(context.Background(), rec, []byte(`{}`))
				c.Close()
				want := int64(0)
				switch {
				case ask && fixed:
					want = 1795514407
				case ask:
					if rec.ServerDate >= before-1 && rec.ServerDate <= time.Now().Unix() {
						want = rec.ServerDate
					}
				}
				if rec.Err != nil || rec.ServerDate != want || ask && rec.ServerDate == 0 {
					t.Errorf("fixed %v, net/http %v, asked %v: ServerDate %d, want %d (%v)", fixed, stdlib, ask, rec.ServerDate, want, rec.Err)
				}
			}
		}
		srv.Close()
	}
}

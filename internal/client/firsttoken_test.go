package client

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/llmbench/llmbench/internal/record"
)

// TestFirstTokenHook: the hook runs once, at the first chunk with content
// (not the role-only chunk before it), on both transports, and never for a
// response that is not streamed.
func TestFirstTokenHook(t *testing.T) {
	srv := sseServer(t, func(w http.ResponseWriter, r *http.Request) {
		f := w.(http.Flusher)
		for _, c := range []string{
			`{"choices":[{"delta":{"role":"assistant","content":""}}]}`,
			`{"choices":[{"delta":{"content":"hello"}}]}`,
			`{"choices":[{"delta":{"content":" world"}}]}`,
			`[DONE]`,
		} {
			io.WriteString(w, "data: "+c+"\n\n")
			f.Flush()
			time.Sleep(3 * time.Millisecond)
		}
	})
	for _, stdlib := range []bool{false, true} {
		transport := map[bool]string{false: "lean", true: "net/http"}[stdlib]
		base := newClient(srv.URL, true, 5*time.Second)
		opts := base.opts
		base.Close()
		opts.StdlibTransport = stdlib
		c := New(opts)
		calls, at := 0, int64(0)
		ctx := WithFirstToken(context.Background(), func() { calls++; at = c.opts.Clock.Now() })
		rec := &record.Record{}
		c.Do(ctx, rec, []byte(`{}`))
		c.Close()
		if rec.Err != nil {
			t.Fatalf("%s: %+v", transport, rec.Err)
		}
		if calls != 1 || at < rec.ResponsePerfs[0] || at >= rec.ResponsePerfs[1] {
			t.Errorf("%s: hook called %d times at %d; want once, after the first content chunk (%d) and before the second (%d)",
				transport, calls, at, rec.ResponsePerfs[0], rec.ResponsePerfs[1])
		}
	}

	whole := newClient(srv.URL, false, 5*time.Second)
	defer whole.Close()
	calls := 0
	whole.Do(WithFirstToken(context.Background(), func() { calls++ }), &record.Record{}, []byte(`{}`))
	if calls != 0 {
		t.Errorf("a response read whole called the hook %d times", calls)
	}
}

// TestKeepRaw: with KeepRaw a record carries its body as sent, the status
// and every server-sent event (named ones with their name, [DONE] too) at
// its arrival, or a whole response with its content type; without it,
// nothing.
func TestKeepRaw(t *testing.T) {
	srv := sseServer(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "event: ping\ndata: {}\n\n")
		io.WriteString(w, "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\n")
		io.WriteString(w, "data: [DONE]\n\n")
	})
	body := []byte(`{"model":"m"}`)
	for _, keep := range []bool{true, false} {
		base := newClient(srv.URL, true, 5*time.Second)
		opts := base.opts
		base.Close()
		opts.KeepRaw = keep
		c := New(opts)
		rec := &record.Record{}
		c.Do(context.Background(), rec, body)
		c.Close()
		if !keep {
			if rec.Raw != nil {
				t.Errorf("without KeepRaw the record keeps %+v", rec.Raw)
			}
			continue
		}
		if rec.Err != nil || rec.Raw == nil {
			t.Fatalf("err %+v, raw %v", rec.Err, rec.Raw)
		}
		got := rec.Raw.Responses
		if string(rec.Raw.Payload) != string(body) || rec.Raw.Status != 200 || len(got) != 3 ||
			got[0].Event != "ping" || got[0].Data != "{}" || got[1].Data != `{"choices":[{"delta":{"content":"hi"}}]}` || got[2].Data != "[DONE]" ||
			got[1].Perf != rec.ResponsePerfs[0] || got[0].Whole {
			t.Errorf("raw %+v", rec.Raw)
		}
	}

	whole := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"choices":[{"message":{"content":"hi"}}]}`)
	}))
	defer whole.Close()
	base := newClient(whole.URL, false, 5*time.Second)
	opts := base.opts
	base.Close()
	opts.KeepRaw = true
	c := New(opts)
	defer c.Close()
	rec := &record.Record{}
	c.Do(context.Background(), rec, body)
	if rec.Err != nil || rec.Raw == nil || len(rec.Raw.Responses) != 1 {
		t.Fatalf("err %+v, raw %+v", rec.Err, rec.Raw)
	}
	if r := rec.Raw.Responses[0]; !r.Whole || r.Body != `{"choices":[{"message":{"content":"hi"}}]}` || r.ContentType != "application/json" || r.Perf != rec.EndPerf {
		t.Errorf("whole response %+v", r)
	}
}

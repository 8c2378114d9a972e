package client

import (
	"context"
	"io"
	"net/http"
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
		opts := testOptions(srv.URL, true, 5*time.Second)
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

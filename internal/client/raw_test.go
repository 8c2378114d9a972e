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
		opts := testOptions(srv.URL, true, 5*time.Second)
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
	opts := testOptions(whole.URL, false, 5*time.Second)
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

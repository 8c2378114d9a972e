package client

import (
	"math"
	"net/http"

	"github.com/llmbench/llmbench/internal/record"
	"github.com/llmbench/llmbench/internal/servertiming"
)

// timingsReader gathers what a server said of one request's time
// (Options.ServerTimings): from the response's headers, and from the body
// or the stream's chunks that can carry it (those without content: the
// finish, the usage, a trailing metrics chunk), never from content chunks,
// which no engine puts timings in and which are most of a stream. Nothing
// it reads can fail or slow the request: what is not understood is left
// out.
type timingsReader struct {
	t     servertiming.Timings
	found bool
}

func (tr *timingsReader) reset() { tr.t, tr.found = servertiming.Unknown(), false }

// read merges what headers (may be nil) and body (may be nil) say.
func (tr *timingsReader) read(h http.Header, body []byte) {
	if t, ok := servertiming.Read(h, body); ok {
		tr.t, tr.found = servertiming.Merge(tr.t, t), true
	}
}

// store puts what was found in rec.
func (tr *timingsReader) store(rec *record.Record) {
	if !tr.found {
		return
	}
	t := tr.t
	st := &record.ServerTimings{Source: t.Source, Queue: t.QueueMs, Prefill: t.PrefillMs, Decode: t.DecodeMs, Total: t.TotalMs, Rejected: t.Rejected}
	// A server that gives only prefill + decode together (TGI's
	// inference time) still gives its whole time with the queue.
	if math.IsNaN(st.Total) && !math.IsNaN(t.InferenceMs) && !math.IsNaN(t.QueueMs) {
		st.Total = t.QueueMs + t.InferenceMs
	}
	rec.ServerTimings = st
}

package mockserver

import (
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"time"

	"github.com/llmbench/llmbench/internal/hrtimer"
)

// call is one inference request on any route: its number, its arrival,
// and the faults it gets. Every route answers through it, so that the
// faults of Config and --fault apply to all of them alike.
type call struct {
	s       *Server
	w       http.ResponseWriter
	ctx     context.Context
	arrival time.Time
	seq     uint64
	// stream is whether the answer is streamed; the ignore-stream and
	// force-stream faults flip it.
	stream bool
	// drop closes the connection halfway; garbage sends a malformed chunk
	// (or body); truncate ends the answer cleanly halfway.
	drop, garbage, truncate bool
	fault                   *fault
	opened                  bool // a non-token stream has sent its headers
}

// newCall starts serving an inference request: it checks the API key and
// numbers the request. It returns nil when it has answered already (401).
func (s *Server) newCall(w http.ResponseWriter, r *http.Request) *call {
	arrival := time.Now()
	if !s.authorized(r) {
		writeError(w, http.StatusUnauthorized, "invalid API key: send it as Authorization: Bearer <key> or x-api-key: <key>")
		return nil
	}
	seq := s.seq.Add(1)
	ctx := r.Context()
	if s.cfg.NoAbort {
		// The engine does not notice the client leaving: the request
		// waits for its slot and is served to its end, unread.
		ctx = context.WithoutCancel(ctx)
	}
	return &call{
		s: s, w: w, ctx: ctx, arrival: arrival, seq: seq,
		drop:    every(s.cfg.DropEvery, seq),
		garbage: every(s.cfg.GarbageEvery, seq),
		fault:   s.faultFor(seq),
	}
}

// authorized reports whether r carries Config.APIKey, as OpenAI's
// Authorization: Bearer or Anthropic's x-api-key; any request does when
// no key is set.
func (s *Server) authorized(r *http.Request) bool {
	key := s.cfg.APIKey
	return key == "" || r.Header.Get("Authorization") == "Bearer "+key || r.Header.Get("X-Api-Key") == key
}

// decode reads a JSON request body into v, answering 400 when it cannot.
func (c *call) decode(r *http.Request, v any) bool {
	if err := json.NewDecoder(io.LimitReader(r.Body, maxBody)).Decode(v); err != nil {
		writeError(c.w, http.StatusBadRequest, "invalid JSON body: "+err.Error())
		return false
	}
	return true
}

// maxBody bounds a request body the server reads.
const maxBody = 64 << 20

// refused answers in place of the route when ErrorEvery or a responding
// fault picks the request, and reports whether it did.
func (c *call) refused(r *http.Request) bool {
	if every(c.s.cfg.ErrorEvery, c.seq) {
		writeError(c.w, http.StatusInternalServerError, "simulated internal server error")
		return true
	}
	if c.fault != nil && c.fault.respond != nil {
		c.fault.respond(c.w, r, c.stream)
		return true
	}
	return false
}

// reshape applies the request's altering fault, if any; the function it
// returns finishes the fault's work (closing a gzip stream) and must run
// when the answer is written.
func (c *call) reshape() (after func()) {
	if c.fault != nil && c.fault.alter != nil {
		if after := c.fault.alter(c); after != nil {
			return after
		}
	}
	return func() {}
}

// reply writes a whole answer that is no token stream, with the faults
// that apply to one: drop, garbage and truncate.
func (c *call) reply(contentType string, body []byte) {
	if c.drop {
		panic(http.ErrAbortHandler) // closes the connection
	}
	c.w.Header().Set("Content-Type", contentType)
	if c.garbage {
		_, _ = c.w.Write([]byte(`{"id": "truncated", "data": [`))
		return
	}
	if c.truncate {
		body = body[:len(body)/2]
	}
	_, _ = c.w.Write(body)
}

// event sends event k of the n of a stream that is no token stream (an
// image's partials, a transcription's deltas), sending the headers with
// the first. The stream's faults strike at the middle event; event
// reports false when the stream must end there (truncate).
func (c *call) event(k, n int, b []byte) bool {
	if !c.opened {
		c.opened = true
		c.w.Header().Set("Content-Type", "text/event-stream")
		c.w.Header().Set("Cache-Control", "no-cache")
		c.w.WriteHeader(http.StatusOK)
	}
	if k == n/2 {
		switch {
		case c.truncate:
			return false
		case c.drop:
			panic(http.ErrAbortHandler)
		case c.garbage:
			c.send([]byte("data: {\"type\":\n\n"))
		}
	}
	c.send(b)
	return true
}

func (c *call) send(b []byte) {
	if _, err := c.w.Write(b); err != nil {
		return
	}
	if f, ok := c.w.(http.Flusher); ok {
		f.Flush()
	}
}

// slot is a request's place in the simulated engine, from its admission
// to its release.
type slot struct {
	s        *Server
	admitted time.Time
	// kv is what the request holds of the KV cache, in tokens.
	kv       int64
	released bool
}

// admit waits for a free slot (Config.MaxNumSeqs), the request counting
// as waiting meanwhile, then counts it as running and holding kvTokens of
// the KV cache. The slot is taken at the request's arrival, or when one
// frees on the engine's clock. admit returns nil when ctx ends first.
func (s *Server) admit(ctx context.Context, arrival time.Time, kvTokens int) *slot {
	admitted := arrival
	if s.slots != nil {
		s.state.waiting.Add(1)
		select {
		case freed := <-s.slots:
			s.state.waiting.Add(-1)
			if freed.After(admitted) {
				admitted = freed
			}
		case <-ctx.Done():
			s.state.waiting.Add(-1)
			s.engine().aborted()
			return nil
		}
	}
	s.state.running.Add(1)
	// The simulated GPUs take the request when the engine does, but with a
	// slot limit when it gets its slot here: the request it took the slot
	// from left the GPUs' count only when it got to release it, and
	// counting from the slot's instant would count that time twice.
	gpuAdmitted := admitted
	if s.slots != nil {
		gpuAdmitted = time.Now()
	}
	s.gpu.change(gpuAdmitted, 1)
	s.state.kvTokens.Add(int64(kvTokens))
	return &slot{s: s, admitted: admitted, kv: int64(kvTokens)}
}

// release retires the request from the engine's gauges and frees its slot
// at freed, an instant of the engine's clock. Only the first call counts.
//
// The engine retires a request when its work is done, before the final
// bytes reach the client, so a client that has its answer sees the
// gauges without it.
func (sl *slot) release(freed time.Time) {
	if sl.released {
		return
	}
	sl.released = true
	s := sl.s
	s.state.running.Add(-1)
	s.gpu.change(time.Now(), -1)
	s.state.kvTokens.Add(-sl.kv)
	if s.slots != nil {
		s.slots <- freed
	}
}

// occupy serves a request that produces no tokens (a pooling or media
// request): it holds a slot for d from admission, holding promptTokens of
// the KV cache, and calls step(k) at each of phases evenly spaced
// instants, the last at admission + d, once the engine has retired the
// request and counted it in the metrics. A step returning false ends the
// request there. occupy returns false when the client left first.
func (s *Server) occupy(c *call, promptTokens, outputTokens int, d time.Duration, phases int, step func(k int) bool) bool {
	sl := s.admit(c.ctx, c.arrival, promptTokens)
	if sl == nil {
		return false
	}
	defer func() { sl.release(time.Now()) }()
	w := hrtimer.New(c.ctx)
	defer w.Stop()
	phases = max(1, phases)
	for k := range phases {
		at := sl.admitted.Add(d * time.Duration(k+1) / time.Duration(phases))
		if !w.Until(at) {
			s.engine().aborted()
			return false
		}
		if k == phases-1 {
			s.engine().served(sl.admitted.Sub(c.arrival).Seconds(), at.Sub(c.arrival).Seconds(), promptTokens, outputTokens)
			sl.release(at)
		}
		if step != nil && !step(k) {
			return true
		}
	}
	return true
}

// parseForm reads a multipart request's form, answering 400 when it
// cannot.
func parseForm(w http.ResponseWriter, r *http.Request) (*multipart.Form, bool) {
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	if err := r.ParseMultipartForm(32 << 20); err != nil {
		writeError(w, http.StatusBadRequest, "invalid multipart/form-data body: "+err.Error())
		return nil, false
	}
	return r.MultipartForm, true
}

// formValue is a form field's first value, "" without one.
func formValue(v map[string][]string, name string) string {
	if vs := v[name]; len(vs) > 0 {
		return vs[0]
	}
	return ""
}

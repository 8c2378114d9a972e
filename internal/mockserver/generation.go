package mockserver

import (
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/llmbench/llmbench/internal/hrtimer"
)

// textRequest is what a token-producing route (chat, completions,
// responses, messages, TGI's generate, RAG) asks of the engine, whatever
// its API.
type textRequest struct {
	model  string
	prompt string
	// extraPromptTokens count in the prompt beyond its text (the passages
	// a RAG server retrieves and prepends).
	extraPromptTokens int
	// maxTokens is the exact output length; 0 draws it from
	// Config.OutputMean and OutputStddev, and the answer ends naturally.
	maxTokens int
	stream    bool
	requestID string
}

// emitter writes one API's answer from the tokens a generation produces:
// the events of a stream, or one whole body. Stream events go out with
// g.write, one flush each.
type emitter interface {
	// open sends what a stream sends once the request is admitted, before
	// its first token (may be nothing).
	open(g *generation)
	// token sends token i's event.
	token(g *generation, i int, piece string)
	// close sends a stream's last events; text is the whole answer,
	// JSON-escaped, and timings vLLM's per-request metrics member (led by
	// its comma, nil when off).
	close(g *generation, text, timings []byte)
	// whole is the body of an answer not streamed.
	whole(g *generation, text, timings []byte) []byte
}

// serveText runs a token-producing request: the faults, the prompt's
// count and prefix-cache lookup, the output length, the queue, and the
// generation itself, whose bytes em writes.
func (s *Server) serveText(c *call, r *http.Request, tr textRequest, em emitter) {
	c.stream = tr.stream
	if c.refused(r) {
		return
	}
	var promptTokens, cached int
	if s.cfg.PrefixCaching {
		ids := s.lang.Encode(tr.prompt)
		promptTokens, cached = len(ids), s.prefix.lookup(ids)
		s.engine().prefixCache(promptTokens, cached)
	} else {
		promptTokens = s.lang.Count(tr.prompt)
	}
	promptTokens += tr.extraPromptTokens

	rng := rand.New(rand.NewPCG(s.cfg.Seed, c.seq))
	outTokens, reason := tr.maxTokens, "length"
	if outTokens <= 0 {
		outTokens = max(1, int(math.Round(rng.NormFloat64()*s.cfg.OutputStddev+s.cfg.OutputMean)))
		reason = "stop"
	}

	// The simulated engine keeps a clock of its own: it takes a request at
	// its arrival, or when a slot frees on that clock, and produces its
	// tokens at the instants its prefill and inter-token latencies set.
	// The latency histograms observe those instants, not the moments this
	// goroutine gets to run: when the host is loaded (the client in the
	// same process parsing its streams, the race detector's GC, other
	// processes), parsing the request takes a while and tokens reach the
	// client late, as over a slow network, but what the engine reports
	// follows from its configuration and the requests alone, as a real
	// server's does on a machine of its own. A token is never sent before
	// its instant, so the engine times an interval inside the one the
	// client times.
	sl := s.admit(c.ctx, c.arrival, promptTokens)
	if sl == nil {
		return
	}
	// release runs when the last token is generated (or on an early
	// return); see slot.release.
	defer func() { sl.release(time.Now()) }()

	g := &generation{
		call: c, em: em, rng: rng, model: tr.model,
		promptTokens: promptTokens, cachedTokens: cached, outTokens: outTokens, reason: reason,
		slot: sl, requestID: tr.requestID,
	}
	defer c.reshape()()
	g.run()
}

func every(n int, seq uint64) bool { return n > 0 && seq%uint64(n) == 0 }

// generation is one token-producing request being answered.
type generation struct {
	*call
	em           emitter
	rng          *rand.Rand
	model        string
	promptTokens int
	// cachedTokens of the prompt were prefix-cache hits: prefill skips them.
	cachedTokens int
	outTokens    int
	// reason is why the answer ends: "length" (the requested maximum) or
	// "stop"; each emitter names it as its API does.
	reason string
	slot   *slot
	// requestID is the X-Request-ID header, for Config.Observed.
	requestID string
	flusher   http.Flusher
	buf       []byte
}

func (g *generation) jittered(mean, std time.Duration) time.Duration {
	if std <= 0 {
		return mean
	}
	return max(0, time.Duration(g.rng.NormFloat64()*float64(std))+mean)
}

// prefill scales the time to first token by the share of the prompt that
// must be computed: a tenth of it is fixed cost (scheduling, the first
// decode step), the rest shrinks with the prefix-cache hits.
func (g *generation) prefill(ttft time.Duration) time.Duration {
	computed := g.promptTokens - g.cachedTokens
	perToken := time.Duration(computed) * g.s.cfg.PrefillPerToken
	if g.promptTokens == 0 || g.cachedTokens == 0 {
		return ttft + perToken
	}
	share := float64(computed) / float64(g.promptTokens)
	return time.Duration(float64(ttft)*(0.1+0.9*share)) + perToken
}

func (g *generation) run() {
	cfg := g.s.cfg
	arrival, admitted := g.arrival, g.slot.admitted
	// Tokens go out at their instants to tens of microseconds (Go's own
	// timers wake up to a millisecond late, which a client would read as
	// delivery time the server did not report).
	w := hrtimer.New(g.ctx)
	defer w.Stop()
	wait := w.Until

	pieces := g.s.lang.Pieces(g.rng, g.outTokens)
	g.flusher, _ = g.w.(http.Flusher)
	if g.stream {
		g.w.Header().Set("Content-Type", "text/event-stream")
		g.w.Header().Set("Cache-Control", "no-cache")
		g.w.WriteHeader(http.StatusOK)
		g.em.open(g)
	}

	// at is when the engine produces token i, on its clock (see serveText).
	at := admitted.Add(g.prefill(g.jittered(cfg.TTFT, cfg.TTFTJitter)))
	prev, first := admitted, at
	for i := range pieces {
		if !wait(at) {
			g.s.engine().aborted() // the client went away: vLLM aborts the request
			return
		}
		if i == 0 {
			g.s.engine().firstToken(admitted.Sub(arrival).Seconds(), at.Sub(admitted).Seconds(), g.promptTokens)
		} else {
			g.s.engine().token(at.Sub(prev).Seconds())
		}
		prev = at
		g.s.state.kvTokens.Add(1)
		g.s.gpu.token()
		g.slot.kv++
		if g.stream {
			if g.truncate && i == g.outTokens/2 {
				return
			}
			if g.drop && i == g.outTokens/2 {
				panic(http.ErrAbortHandler) // closes the connection mid-stream
			}
			if g.garbage && i == g.outTokens/2 {
				g.write(append(g.buf[:0], "data: {\"choices\":[{\"delta\":{\"content\":\n\n"...))
			}
			g.em.token(g, i, pieces[i])
		}
		at = at.Add(g.jittered(cfg.ITL, cfg.ITLJitter))
	}
	// vLLM times a request's end as it times its first token: when the
	// engine step that produced the token is processed, before the token's
	// bytes go out (IterationStats.iteration_timestamp). prev is that
	// instant for the last token; timing after the write would count the
	// socket's share too, and end after the client has the token (it did
	// for 14 of the README command's 200 requests, by up to 2 ms).
	e2e := prev.Sub(arrival)
	g.s.engine().finished(e2e.Seconds(), g.promptTokens, g.outTokens, g.reason)
	if f := g.s.cfg.Observed; f != nil {
		f(Observation{RequestID: g.requestID, TTFT: first.Sub(arrival), E2E: e2e, Arrival: arrival})
	}
	g.slot.release(prev)

	text := make([]byte, 0, 8*len(pieces))
	for _, p := range pieces {
		text = appendJSONString(text, p)
	}
	timings := g.perRequestMetrics(arrival, admitted, first, prev)
	if g.stream {
		g.em.close(g, text, timings)
		return
	}

	if g.drop {
		panic(http.ErrAbortHandler)
	}
	g.w.Header().Set("Content-Type", "application/json")
	if g.garbage {
		_, _ = g.w.Write([]byte(`{"id": "truncated", "choices": [`))
		return
	}
	body := g.em.whole(g, text, timings)
	if g.truncate {
		body = body[:len(body)/2]
	}
	_, _ = g.w.Write(body)
}

// perRequestMetrics is the request's timing as vLLM started with
// --enable-per-request-metrics reports it (a top-level "metrics" member,
// led by its comma), on the engine's clock: queue from arrival to
// admission, time to first token from admission, generation from the
// first token to the last. It is the truth about this request, which a
// client joins to its own timing to tell the server's share of its TTFT
// from the network's and its own. Config.NoPerRequestMetrics leaves it out.
func (g *generation) perRequestMetrics(arrival, admitted, first, last time.Time) []byte {
	if g.s.cfg.NoPerRequestMetrics {
		return nil
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	gen := last.Sub(first)
	meanITL, tps := 0.0, 0.0
	if g.outTokens > 1 {
		meanITL = ms(gen) / float64(g.outTokens-1)
	}
	if busy := last.Sub(admitted); busy > 0 {
		tps = float64(g.outTokens) / busy.Seconds()
	}
	return fmt.Appendf(nil, `,"metrics":{"time_to_first_token_ms":%.3f,"generation_time_ms":%.3f,"queue_time_ms":%.3f,"mean_itl_ms":%.3f,"tokens_per_second":%.1f}`,
		ms(first.Sub(admitted)), ms(gen), ms(admitted.Sub(arrival)), meanITL, tps)
}

// write sends one stream event and flushes it; b's array is reused for
// the next (g.buf).
func (g *generation) write(b []byte) {
	g.buf = b[:0]
	if _, err := g.w.Write(b); err != nil {
		return
	}
	if g.flusher != nil {
		g.flusher.Flush()
	}
}

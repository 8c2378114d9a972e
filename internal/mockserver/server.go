package mockserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/llmbench/llmbench/internal/hrtimer"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// DefaultModel is the model the server lists at /v1/models. It answers
// requests for any model name.
const DefaultModel = "mock-model"

// state is the server's live load, read by the metrics.
type state struct {
	running, waiting atomic.Int64
	kvTokens         atomic.Int64
	kvCapacity       int64
}

// Server is a simulated LLM server. Create it with New; serve it with
// Handler, Serve or Start.
type Server struct {
	cfg     Config
	lang    Language
	state   state
	seq     atomic.Uint64
	slots   chan time.Time // free slots, each with when it freed on the engine's clock; nil when MaxNumSeqs is 0
	metrics atomic.Pointer[engineSet]
	scrapes atomic.Int64
	replay  [][]byte
	mux     *http.ServeMux
	prefix  *prefixCache
	gpu     *gpuMeter // nil without simulated GPUs
}

// engineSet is a live engine with the registry behind its /metrics;
// replaced whole to simulate a restart that resets the counters.
type engineSet struct {
	engine  engineMetrics
	handler http.Handler
}

func (s *Server) newEngineSet() *engineSet {
	p, _ := profileFor(s.cfg.MetricsProfile, DefaultModel) // validated in New
	if p.infoLabels != nil && !s.cfg.PrefixCaching {
		p.infoLabels["enable_prefix_caching"] = "False"
	}
	reg := prometheus.NewRegistry()
	return &engineSet{engine: newEngine(reg, p, &s.state), handler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{})}
}

func (s *Server) engine() engineMetrics { return s.metrics.Load().engine }

// New makes a server from cfg.
func New(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, lang: cfg.Language, prefix: newPrefixCache(cfg.KVCacheTokens)}
	s.gpu = newGPUMeter(cfg.GPUs, cfg.GPUPower, cfg.Seed, time.Now())
	if s.lang == nil {
		s.lang = words{}
	}
	s.state.kvCapacity = int64(cfg.KVCacheTokens)
	if cfg.MaxNumSeqs > 0 {
		s.slots = make(chan time.Time, cfg.MaxNumSeqs)
		for range cfg.MaxNumSeqs {
			s.slots <- time.Time{}
		}
	}
	s.metrics.Store(s.newEngineSet())
	for _, f := range cfg.MetricsReplay {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("mock server metrics replay: %w", err)
		}
		s.replay = append(s.replay, b)
	}

	s.mux = http.NewServeMux()
	s.mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) { s.generate(w, r, apiChat) })
	s.mux.HandleFunc("POST /v1/completions", func(w http.ResponseWriter, r *http.Request) { s.generate(w, r, apiCompletions) })
	s.mux.HandleFunc("GET /v1/models", s.models)
	s.mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	// vLLM's reset of its prefix cache (AIPerf's --reset-kv-cache default).
	s.mux.HandleFunc("POST /reset_prefix_cache", func(w http.ResponseWriter, _ *http.Request) {
		s.ResetPrefixCache()
		w.WriteHeader(http.StatusOK)
	})
	if cfg.MetricsProfile == "trtllm" {
		// trtllm-serve: iteration stats as JSON at /metrics, Prometheus at
		// /prometheus/metrics.
		s.mux.HandleFunc("GET /metrics", s.iterationStats)
		s.mux.HandleFunc("GET /prometheus/metrics", s.serveMetrics)
	} else {
		s.mux.HandleFunc("GET /metrics", s.serveMetrics)
	}
	return s, nil
}

// Scrapes is the number of /metrics requests received.
func (s *Server) Scrapes() int64 { return s.scrapes.Load() }

func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) {
	n := s.scrapes.Add(1)
	if s.cfg.MetricsDieAfter > 0 && n > int64(s.cfg.MetricsDieAfter) {
		panic(http.ErrAbortHandler)
	}
	if d := s.cfg.MetricsDelay; d > 0 {
		select {
		case <-time.After(d):
		case <-r.Context().Done():
			return
		}
	}
	if len(s.replay) > 0 {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_, _ = w.Write(s.replay[min(int(n), len(s.replay))-1])
		return
	}
	if s.cfg.MetricsResetAfter > 0 && n == int64(s.cfg.MetricsResetAfter)+1 {
		s.metrics.Store(s.newEngineSet())
	}
	s.metrics.Load().handler.ServeHTTP(w, r)
}

func (s *Server) iterationStats(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `[{"iter":%d,"numActiveRequests":%d,"numQueuedRequests":%d,"gpuMemUsage":0}]`, s.seq.Load(), s.state.running.Load(), s.state.waiting.Load())
}

// Handler serves the OpenAI-compatible API, /health and /metrics.
func (s *Server) Handler() http.Handler { return s.mux }

// Requests is the number of generation requests received so far.
func (s *Server) Requests() uint64 { return s.seq.Load() }

// ResetPrefixCache empties the simulated prefix cache, as vLLM's POST
// /reset_prefix_cache does.
func (s *Server) ResetPrefixCache() { s.prefix.reset() }

// Start serves on addr (for example "127.0.0.1:0") until ctx ends or stop is
// called, and returns the base URL it listens on.
func (s *Server) Start(ctx context.Context, addr string) (baseURL string, stop func(), err error) {
	baseURL, stop, err = listenAndServe(ctx, addr, s.mux)
	if err != nil {
		return "", nil, fmt.Errorf("mock server: %w", err)
	}
	return baseURL, stop, nil
}

// listenAndServe serves h on addr until ctx ends or stop is called.
func listenAndServe(ctx context.Context, addr string, h http.Handler) (baseURL string, stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	stopCtx, cancel := context.WithCancel(ctx)
	go func() {
		<-stopCtx.Done()
		_ = srv.Close()
	}()
	stop = func() {
		cancel()
		<-done
	}
	return "http://" + ln.Addr().String(), stop, nil
}

type api int

const (
	apiChat api = iota
	apiCompletions
)

type generateRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Prompt              json.RawMessage `json:"prompt"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	Stream              bool            `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

// promptText gathers the text of a message content or prompt, which may be a
// string, a list of strings, or a list of {"type":"text","text":...} parts.
func promptText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return ""
	}
	var texts []string
	for _, item := range list {
		var part struct {
			Text string `json:"text"`
		}
		if json.Unmarshal(item, &s) == nil {
			texts = append(texts, s)
		} else if json.Unmarshal(item, &part) == nil {
			texts = append(texts, part.Text)
		}
	}
	return strings.Join(texts, "\n")
}

func writeError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": http.StatusText(code), "code": code}})
	_, _ = w.Write(b)
}

func (s *Server) generate(w http.ResponseWriter, r *http.Request, kind api) {
	arrival := time.Now()
	seq := s.seq.Add(1)
	var req generateRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<20)).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid JSON body: "+err.Error())
		return
	}
	if every(s.cfg.ErrorEvery, seq) {
		writeError(w, http.StatusInternalServerError, "simulated internal server error")
		return
	}
	f := s.faultFor(seq)
	if f != nil && f.respond != nil {
		f.respond(w, r, req.Stream)
		return
	}
	var prompt string
	if kind == apiChat {
		texts := make([]string, len(req.Messages))
		for i, m := range req.Messages {
			texts[i] = promptText(m.Content)
		}
		prompt = strings.Join(texts, "\n")
	} else {
		prompt = promptText(req.Prompt)
	}
	var promptTokens, cached int
	if s.cfg.PrefixCaching {
		ids := s.lang.Encode(prompt)
		promptTokens, cached = len(ids), s.prefix.lookup(ids)
		s.engine().prefixCache(promptTokens, cached)
	} else {
		promptTokens = s.lang.Count(prompt)
	}

	rng := rand.New(rand.NewPCG(s.cfg.Seed, seq))
	outTokens, reason := 0, "length"
	switch {
	case req.MaxCompletionTokens != nil && *req.MaxCompletionTokens > 0:
		outTokens = *req.MaxCompletionTokens
	case req.MaxTokens != nil && *req.MaxTokens > 0:
		outTokens = *req.MaxTokens
	default:
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
	ctx := r.Context()
	if s.cfg.NoAbort {
		// The engine does not notice the client leaving: the request
		// waits for its slot and is generated to its end, unread.
		ctx = context.WithoutCancel(ctx)
	}
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
			return
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
	s.state.kvTokens.Add(int64(promptTokens))
	kv := int64(promptTokens)
	// The engine retires a request when its last token is generated, before
	// the final bytes reach the client: release runs then (or on an early
	// return), so a client that has its answer sees the gauges without it.
	// freed is when its slot frees on the engine's clock.
	released := false
	release := func(freed time.Time) {
		if released {
			return
		}
		released = true
		s.state.running.Add(-1)
		s.gpu.change(time.Now(), -1)
		s.state.kvTokens.Add(-kv)
		if s.slots != nil {
			s.slots <- freed
		}
	}
	defer func() { release(time.Now()) }()

	g := &generation{
		s: s, w: w, kind: kind, rng: rng, seq: seq, model: req.Model,
		stream: req.Stream, includeUsage: req.StreamOptions != nil && req.StreamOptions.IncludeUsage,
		promptTokens: promptTokens, cachedTokens: cached, outTokens: outTokens, reason: reason,
		drop:      every(s.cfg.DropEvery, seq),
		garbage:   every(s.cfg.GarbageEvery, seq),
		kv:        &kv,
		release:   release,
		requestID: r.Header.Get("X-Request-ID"),
	}
	if f != nil && f.alter != nil {
		if after := f.alter(g); after != nil {
			defer after()
		}
	}
	g.run(ctx, arrival, admitted)
}

func every(n int, seq uint64) bool { return n > 0 && seq%uint64(n) == 0 }

// generation is one request being answered.
type generation struct {
	s            *Server
	w            http.ResponseWriter
	kind         api
	rng          *rand.Rand
	seq          uint64
	model        string
	stream       bool
	includeUsage bool
	promptTokens int
	// cachedTokens of the prompt were prefix-cache hits: prefill skips them.
	cachedTokens int
	outTokens    int
	reason       string
	drop         bool
	garbage      bool
	// truncate ends the response cleanly halfway (the "truncate" fault).
	truncate bool
	kv       *int64
	// release retires the request from the engine's gauges and frees its
	// slot at the given instant of the engine's clock; idempotent.
	release func(freed time.Time)
	// requestID is the X-Request-ID header, for Config.Observed.
	requestID string
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

func (g *generation) run(ctx context.Context, arrival, admitted time.Time) {
	cfg := g.s.cfg
	// Tokens go out at their instants to tens of microseconds (Go's own
	// timers wake up to a millisecond late, which a client would read as
	// delivery time the server did not report).
	w := hrtimer.New(ctx)
	defer w.Stop()
	wait := w.Until

	pieces := g.s.lang.Pieces(g.rng, g.outTokens)
	id := "cmpl-" + strconv.FormatUint(g.seq, 10)
	if g.kind == apiChat {
		id = "chatcmpl-" + strconv.FormatUint(g.seq, 10)
	}
	modelJSON, _ := json.Marshal(g.model)
	created := strconv.FormatInt(arrival.Unix(), 10)

	object := "text_completion"
	if g.kind == apiChat {
		object = "chat.completion.chunk"
	}
	flusher, _ := g.w.(http.Flusher)
	var prefix []byte
	if g.stream {
		g.w.Header().Set("Content-Type", "text/event-stream")
		g.w.Header().Set("Cache-Control", "no-cache")
		g.w.WriteHeader(http.StatusOK)
		prefix = fmt.Appendf(nil, `data: {"id":%q,"object":%q,"created":%s,"model":%s,"choices":[{"index":0,`, id, object, created, modelJSON)
		if g.kind == apiChat {
			// vLLM opens with a role-only chunk as soon as the request is admitted.
			g.write(append(append(g.buf[:0], prefix...), `"delta":{"role":"assistant","content":""},"finish_reason":null}]}`+"\n\n"...), flusher)
		}
	}

	// at is when the engine produces token i, on its clock (see generate).
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
		*g.kv++
		if g.stream {
			if g.truncate && i == g.outTokens/2 {
				return
			}
			if g.drop && i == g.outTokens/2 {
				panic(http.ErrAbortHandler) // closes the connection mid-stream
			}
			if g.garbage && i == g.outTokens/2 {
				g.write(append(g.buf[:0], "data: {\"choices\":[{\"delta\":{\"content\":\n\n"...), flusher)
			}
			b := append(g.buf[:0], prefix...)
			b = g.appendText(b, pieces[i])
			g.write(append(b, `,"finish_reason":null}]}`+"\n\n"...), flusher)
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
	g.release(prev)

	usage := fmt.Appendf(nil, `{"prompt_tokens":%d,"total_tokens":%d,"completion_tokens":%d}`, g.promptTokens, g.promptTokens+g.outTokens, g.outTokens)
	timings := g.perRequestMetrics(arrival, admitted, first, prev)
	if g.stream {
		b := append(g.buf[:0], prefix...)
		if g.kind == apiChat {
			b = append(b, `"delta":{},"finish_reason":"`...)
		} else {
			b = append(b, `"text":"","finish_reason":"`...)
		}
		g.write(append(append(b, g.reason...), "\"}]}\n\n"...), flusher)
		if g.includeUsage {
			// vLLM streams its per-request metrics on the usage chunk
			// only: a stream without it has none.
			b = fmt.Appendf(g.buf[:0], `data: {"id":%q,"object":%q,"created":%s,"model":%s,"choices":[],"usage":%s%s}`+"\n\n", id, object, created, modelJSON, usage, timings)
			g.write(b, flusher)
		}
		g.write([]byte("data: [DONE]\n\n"), flusher)
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
	text := make([]byte, 0, 8*len(pieces))
	for _, p := range pieces {
		text = appendJSONString(text, p)
	}
	var body []byte
	defer func() {
		if g.truncate {
			body = body[:len(body)/2]
		}
		_, _ = g.w.Write(body)
	}()
	if g.kind == apiChat {
		body = fmt.Appendf(nil, `{"id":%q,"object":"chat.completion","created":%s,"model":%s,"choices":[{"index":0,"message":{"role":"assistant","content":"%s"},"finish_reason":%q}],"usage":%s%s}`,
			id, created, modelJSON, text, g.reason, usage, timings)
	} else {
		body = fmt.Appendf(nil, `{"id":%q,"object":"text_completion","created":%s,"model":%s,"choices":[{"index":0,"text":"%s","logprobs":null,"finish_reason":%q}],"usage":%s%s}`,
			id, created, modelJSON, text, g.reason, usage, timings)
	}
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

// appendText appends one token's text field.
func (g *generation) appendText(b []byte, piece string) []byte {
	if g.kind == apiChat {
		b = append(b, `"delta":{"content":"`...)
	} else {
		b = append(b, `"text":"`...)
	}
	b = appendJSONString(b, piece)
	b = append(b, '"')
	if g.kind == apiChat {
		b = append(b, '}')
	}
	return b
}

func (g *generation) write(b []byte, f http.Flusher) {
	g.buf = b[:0]
	if _, err := g.w.Write(b); err != nil {
		return
	}
	if f != nil {
		f.Flush()
	}
}

func (s *Server) models(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"object":"list","data":[{"id":%q,"object":"model","created":0,"owned_by":"llmbench"}]}`, DefaultModel)
}

package mockserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

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
	videos  videoJobs
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
	s := &Server{cfg: cfg, lang: cfg.Language, prefix: newPrefixCache(cfg.KVCacheTokens), videos: videoJobs{jobs: map[string]*videoJob{}}}
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
	s.mux.HandleFunc("POST /v1/responses", s.responses)
	s.mux.HandleFunc("POST /v1/messages", s.messages)
	s.mux.HandleFunc("POST /generate", func(w http.ResponseWriter, r *http.Request) { s.tgiGenerate(w, r, false) })
	s.mux.HandleFunc("POST /generate_stream", func(w http.ResponseWriter, r *http.Request) { s.tgiGenerate(w, r, true) })
	s.mux.HandleFunc("POST /rag/api/prompt", s.solidoRAG)
	s.mux.HandleFunc("POST /v1/embeddings", s.embeddings)
	s.mux.HandleFunc("POST /v2/rerank", s.cohereRerank)
	s.mux.HandleFunc("POST /rerank", s.teiRerank)
	s.mux.HandleFunc("POST /v1/ranking", s.nimRanking)
	s.mux.HandleFunc("POST /v1/infer", s.imageRetrieval)
	s.mux.HandleFunc("POST /v1/images/generations", s.imageGenerations)
	s.mux.HandleFunc("POST /v1/images/edits", s.imageEdits)
	s.mux.HandleFunc("POST /v1/audio/transcriptions", s.transcription)
	s.mux.HandleFunc("POST /v1/videos", s.videoSubmit)
	s.mux.HandleFunc("GET /v1/videos/{id}", s.videoStatus)
	s.mux.HandleFunc("GET /v1/videos/{id}/content", s.videoContent)
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

// Handler serves every endpoint type's API, /v1/models, /health and
// /metrics.
func (s *Server) Handler() http.Handler { return s.mux }

// Requests is the number of inference requests received so far, on every
// route (a video job's once, at its submission; its polls do not count).
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
	c := s.newCall(w, r)
	if c == nil {
		return
	}
	var req generateRequest
	if !c.decode(r, &req) {
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
	maxTokens := 0
	switch {
	case req.MaxCompletionTokens != nil && *req.MaxCompletionTokens > 0:
		maxTokens = *req.MaxCompletionTokens
	case req.MaxTokens != nil && *req.MaxTokens > 0:
		maxTokens = *req.MaxTokens
	}
	em := newOpenAIEmitter(kind, c, req.Model, req.StreamOptions != nil && req.StreamOptions.IncludeUsage)
	s.serveText(c, r, textRequest{model: req.Model, prompt: prompt, maxTokens: maxTokens, stream: req.Stream, requestID: r.Header.Get("X-Request-ID")}, em)
}

// openaiEmitter writes OpenAI's chat completions and completions, as vLLM
// serves them.
type openaiEmitter struct {
	kind         api
	id, created  string
	modelJSON    []byte
	includeUsage bool
	// prefix opens every stream chunk, up to its choice's fields.
	prefix []byte
}

func newOpenAIEmitter(kind api, c *call, model string, includeUsage bool) *openaiEmitter {
	e := &openaiEmitter{kind: kind, includeUsage: includeUsage, created: strconv.FormatInt(c.arrival.Unix(), 10)}
	e.id = "cmpl-" + strconv.FormatUint(c.seq, 10)
	object := "text_completion"
	if kind == apiChat {
		e.id = "chatcmpl-" + strconv.FormatUint(c.seq, 10)
		object = "chat.completion.chunk"
	}
	e.modelJSON, _ = json.Marshal(model)
	e.prefix = fmt.Appendf(nil, `data: {"id":%q,"object":%q,"created":%s,"model":%s,"choices":[{"index":0,`, e.id, object, e.created, e.modelJSON)
	return e
}

func (e *openaiEmitter) open(g *generation) {
	if e.kind == apiChat {
		// vLLM opens with a role-only chunk as soon as the request is admitted.
		g.write(append(append(g.buf[:0], e.prefix...), `"delta":{"role":"assistant","content":""},"finish_reason":null}]}`+"\n\n"...))
	}
}

func (e *openaiEmitter) token(g *generation, _ int, piece string) {
	b := append(g.buf[:0], e.prefix...)
	if e.kind == apiChat {
		b = append(b, `"delta":{"content":"`...)
	} else {
		b = append(b, `"text":"`...)
	}
	b = appendJSONString(b, piece)
	b = append(b, '"')
	if e.kind == apiChat {
		b = append(b, '}')
	}
	g.write(append(b, `,"finish_reason":null}]}`+"\n\n"...))
}

func (e *openaiEmitter) usage(g *generation) []byte {
	return fmt.Appendf(nil, `{"prompt_tokens":%d,"total_tokens":%d,"completion_tokens":%d}`, g.promptTokens, g.promptTokens+g.outTokens, g.outTokens)
}

func (e *openaiEmitter) close(g *generation, _, timings []byte) {
	b := append(g.buf[:0], e.prefix...)
	if e.kind == apiChat {
		b = append(b, `"delta":{},"finish_reason":"`...)
	} else {
		b = append(b, `"text":"","finish_reason":"`...)
	}
	g.write(append(append(b, g.reason...), "\"}]}\n\n"...))
	if e.includeUsage {
		// vLLM streams its per-request metrics on the usage chunk
		// only: a stream without it has none.
		object := "text_completion"
		if e.kind == apiChat {
			object = "chat.completion.chunk"
		}
		g.write(fmt.Appendf(g.buf[:0], `data: {"id":%q,"object":%q,"created":%s,"model":%s,"choices":[],"usage":%s%s}`+"\n\n", e.id, object, e.created, e.modelJSON, e.usage(g), timings))
	}
	g.write([]byte("data: [DONE]\n\n"))
}

func (e *openaiEmitter) whole(g *generation, text, timings []byte) []byte {
	if e.kind == apiChat {
		return fmt.Appendf(nil, `{"id":%q,"object":"chat.completion","created":%s,"model":%s,"choices":[{"index":0,"message":{"role":"assistant","content":"%s"},"finish_reason":%q}],"usage":%s%s}`,
			e.id, e.created, e.modelJSON, text, g.reason, e.usage(g), timings)
	}
	return fmt.Appendf(nil, `{"id":%q,"object":"text_completion","created":%s,"model":%s,"choices":[{"index":0,"text":"%s","logprobs":null,"finish_reason":%q}],"usage":%s%s}`,
		e.id, e.created, e.modelJSON, text, g.reason, e.usage(g), timings)
}

func (s *Server) models(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"object":"list","data":[{"id":%q,"object":"model","created":0,"owned_by":"llmbench"}]}`, DefaultModel)
}

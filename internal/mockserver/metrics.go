package mockserver

import (
	"fmt"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// engineMetrics is what the server reports about its work; each simulated
// engine turns the events into its own metric families.
type engineMetrics interface {
	// firstToken is called when a request's first token is out, after
	// waiting queueWait and prefilling for ttft seconds.
	firstToken(queueWait, ttft float64, promptTokens int)
	// token is called for every later token, itl seconds after the one before.
	token(itl float64)
	finished(e2e float64, promptTokens, outputTokens int, reason string)
	// served is called when a request that streams no tokens (embeddings,
	// rankings, images, transcriptions, video jobs) is done, after
	// waiting queueWait seconds, e2e seconds from its arrival.
	served(queueWait, e2e float64, promptTokens, outputTokens int)
	// prefixCache is called when a prompt of queried tokens is looked up
	// in the prefix cache and hit of them are found.
	prefixCache(queried, hit int)
	// aborted is called when a client disconnects before its answer ends.
	aborted()
}

// profile names one engine's metric families for each role; an empty name
// means the engine has no such metric. Latencies are in seconds unless a
// scale says otherwise (Triton reports milliseconds and microseconds).
type profile struct {
	labels                    prometheus.Labels
	running, waiting, kvUsage string
	kvScale                   float64 // 1: ratio, 100: percent
	promptTokens, genTokens   string
	success, successLabel     string
	ttft, itl, e2e, queue     string
	prefill                   string
	ttftScale                 float64
	promptHist, genHist       string
	e2eMicrosCounter          string // Triton: cumulative request time in µs
	queueMicrosCounter        string
	inferenceCount, execCount string
	summary                   string // a summary family, which scrapers must ignore
	info                      string
	infoLabels                prometheus.Labels
	failure                   string // a failure counter by reason
	// prefixQueries and prefixHits count prompt tokens looked up in and
	// found in the prefix cache, cachedTokens the prompt tokens served
	// from it; hitRate is a gauge of hits/queries so far.
	prefixQueries, prefixHits, cachedTokens, hitRate string
	zeroCounter                                      string // a plain counter kept at 0
	extraConstGauges                                 map[string]float64
	latencyBuckets, tokBuckets                       []float64
}

var (
	latencyBuckets = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}
	ttftBuckets    = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}
	itlBuckets     = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}
	tokenBuckets   = []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000}
)

// Profiles are the engines whose /metrics the server can imitate.
var Profiles = []string{"vllm", "sglang", "trtllm", "dynamo", "triton"}

func profileFor(name, model string) (profile, error) {
	switch name {
	case "", "vllm":
		return profile{
			labels: prometheus.Labels{"model_name": model, "engine": "0"}, running: "vllm:num_requests_running", waiting: "vllm:num_requests_waiting",
			kvUsage: "vllm:kv_cache_usage_perc", kvScale: 1, promptTokens: "vllm:prompt_tokens_total", genTokens: "vllm:generation_tokens_total",
			success: "vllm:request_success_total", successLabel: "finished_reason",
			ttft: "vllm:time_to_first_token_seconds", itl: "vllm:inter_token_latency_seconds", e2e: "vllm:e2e_request_latency_seconds",
			queue: "vllm:request_queue_time_seconds", prefill: "vllm:request_prefill_time_seconds", ttftScale: 1,
			promptHist: "vllm:request_prompt_tokens", genHist: "vllm:request_generation_tokens",
			info: "vllm:cache_config_info", infoLabels: prometheus.Labels{"block_size": "16", "cache_dtype": "auto", "num_gpu_blocks": "16384", "enable_prefix_caching": "True"},
			zeroCounter:   "vllm:num_preemptions_total",
			prefixQueries: "vllm:prefix_cache_queries_total", prefixHits: "vllm:prefix_cache_hits_total", cachedTokens: "vllm:prompt_tokens_cached_total",
		}, nil
	case "sglang":
		return profile{
			labels: prometheus.Labels{"model_name": model, "tp_rank": "0"}, running: "sglang:num_running_reqs", waiting: "sglang:num_queue_reqs",
			kvUsage: "sglang:token_usage", kvScale: 1, promptTokens: "sglang:prompt_tokens_total", genTokens: "sglang:generation_tokens_total",
			ttft: "sglang:time_to_first_token_seconds", itl: "sglang:inter_token_latency_seconds", e2e: "sglang:e2e_request_latency_seconds",
			queue: "sglang:queue_time_seconds", ttftScale: 1,
			hitRate: "sglang:cache_hit_rate",
		}, nil
	case "trtllm":
		return profile{
			labels: prometheus.Labels{"model_name": model, "engine_type": "trtllm"}, running: "trtllm_num_requests_running", waiting: "trtllm_num_requests_waiting",
			kvUsage: "trtllm_kv_cache_utilization", kvScale: 1, promptTokens: "trtllm_prompt_tokens_total", genTokens: "trtllm_generation_tokens_total",
			success: "trtllm_request_success_total", successLabel: "finished_reason",
			ttft: "trtllm_time_to_first_token_seconds", itl: "trtllm_time_per_output_token_seconds", e2e: "trtllm_e2e_request_latency_seconds",
			queue: "trtllm_request_queue_time_seconds", prefill: "trtllm_request_prefill_time_seconds", ttftScale: 1,
			hitRate: "trtllm_kv_cache_hit_rate",
		}, nil
	case "dynamo":
		return profile{
			labels: prometheus.Labels{"model": model}, running: "dynamo_frontend_inflight_requests", waiting: "dynamo_frontend_queued_requests",
			kvUsage: "dynamo_component_gpu_cache_usage_percent", kvScale: 100, genTokens: "dynamo_frontend_output_tokens_total",
			success: "dynamo_frontend_requests_total", successLabel: "status",
			ttft: "dynamo_frontend_time_to_first_token_seconds", itl: "dynamo_frontend_inter_token_latency_seconds", e2e: "dynamo_frontend_request_duration_seconds",
			ttftScale: 1, promptHist: "dynamo_frontend_input_sequence_tokens", genHist: "dynamo_frontend_output_sequence_tokens",
		}, nil
	case "triton":
		return profile{
			labels: prometheus.Labels{"model": model, "version": "1"}, waiting: "nv_inference_pending_request_count",
			success: "nv_inference_request_success", ttft: "nv_inference_first_response_histogram_ms", ttftScale: 1000,
			e2eMicrosCounter: "nv_inference_request_duration_us", queueMicrosCounter: "nv_inference_queue_duration_us",
			inferenceCount: "nv_inference_count", execCount: "nv_inference_exec_count", summary: "nv_inference_request_summary_us",
			failure:          "nv_inference_request_failure",
			extraConstGauges: map[string]float64{"nv_gpu_utilization": 0.5},
		}, nil
	}
	return profile{}, fmt.Errorf("unknown metrics profile %q (use %s)", name, strings.Join(Profiles, ", "))
}

// engine is the generic engineMetrics: whatever families its profile names.
type engine struct {
	p                                  profile
	prefixQueries, prefixHits, cached  prometheus.Counter
	queried, hit                       atomic.Int64 // for the hit-rate gauge
	failure                            *prometheus.CounterVec
	promptTokens, genTokens            prometheus.Counter
	e2eMicros, queueMicros, infer, exe prometheus.Counter
	success                            *prometheus.CounterVec
	ttft, itl, e2e, queue, prefill     prometheus.Observer
	promptHist, genHist, summary       prometheus.Observer
}

func newEngine(reg *prometheus.Registry, p profile, s *state) *engine {
	e := &engine{p: p}
	help := func(name string) string { return "Simulated " + name + "." }
	gauge := func(name, h string, f func() float64) {
		if name != "" {
			reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: h, ConstLabels: p.labels}, f))
		}
	}
	// The HELP texts are the engines' own: units are inferred from them.
	kvHelp := "KV-cache usage. 1 means 100 percent usage."
	if p.kvScale != 1 {
		kvHelp = "GPU KV-cache usage in percent."
	}
	gauge(p.running, "Number of requests in model execution batches.", func() float64 { return float64(s.running.Load()) })
	gauge(p.waiting, "Number of requests waiting to be processed.", func() float64 { return float64(s.waiting.Load()) })
	gauge(p.kvUsage, kvHelp, func() float64 { return p.kvScale * min(1, float64(s.kvTokens.Load())/float64(s.kvCapacity)) })
	names := make([]string, 0, len(p.extraConstGauges))
	for n := range p.extraConstGauges {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		v := p.extraConstGauges[n]
		gauge(n, help(n), func() float64 { return v })
	}
	if p.info != "" {
		g := prometheus.NewGauge(prometheus.GaugeOpts{Name: p.info, Help: "Information of the engine configuration", ConstLabels: p.infoLabels})
		g.Set(1)
		reg.MustRegister(g)
	}
	counter := func(name, h string) prometheus.Counter {
		if name == "" {
			return nil
		}
		c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: h, ConstLabels: p.labels})
		reg.MustRegister(c)
		return c
	}
	e.promptTokens = counter(p.promptTokens, "Number of prefill tokens processed.")
	e.genTokens = counter(p.genTokens, "Number of generation tokens processed.")
	e.e2eMicros = counter(p.e2eMicrosCounter, "Cumulative inference request duration in microseconds")
	e.queueMicros = counter(p.queueMicrosCounter, "Cumulative inference queuing duration in microseconds")
	e.infer = counter(p.inferenceCount, "Number of inferences performed")
	e.exe = counter(p.execCount, "Number of model executions performed")
	counter(p.zeroCounter, "Cumulative number of preemptions.")
	if p.failure != "" {
		e.failure = prometheus.NewCounterVec(prometheus.CounterOpts{Name: p.failure, Help: help(p.failure), ConstLabels: p.labels}, []string{"reason"})
		e.failure.WithLabelValues("REJECTED")
		reg.MustRegister(e.failure)
	}
	e.prefixQueries = counter(p.prefixQueries, "Prefix cache queries, in terms of number of queried tokens.")
	e.prefixHits = counter(p.prefixHits, "Prefix cache hits, in terms of number of cached tokens.")
	e.cached = counter(p.cachedTokens, "Number of cached prompt tokens (local prefix cache hits).")
	gauge(p.hitRate, "Prefix cache hit rate.", func() float64 {
		if q := e.queried.Load(); q > 0 {
			return float64(e.hit.Load()) / float64(q)
		}
		return 0
	})
	if p.success != "" {
		var lbl []string
		if p.successLabel != "" {
			lbl = []string{p.successLabel}
		}
		e.success = prometheus.NewCounterVec(prometheus.CounterOpts{Name: p.success, Help: "Count of successfully processed requests.", ConstLabels: p.labels}, lbl)
		reg.MustRegister(e.success)
	}
	hist := func(name, h string, buckets []float64) prometheus.Observer {
		if name == "" {
			return nil
		}
		o := prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: h, ConstLabels: p.labels, Buckets: buckets})
		reg.MustRegister(o)
		return o
	}
	ttftB := ttftBuckets
	if p.ttftScale != 1 {
		ttftB = make([]float64, len(ttftBuckets))
		for i, b := range ttftBuckets {
			ttftB[i] = b * p.ttftScale
		}
	}
	e.ttft = hist(p.ttft, "Histogram of time to first token.", ttftB)
	e.itl = hist(p.itl, "Histogram of inter-token latency in seconds.", itlBuckets)
	e.e2e = hist(p.e2e, "Histogram of e2e request latency in seconds.", latencyBuckets)
	e.queue = hist(p.queue, "Histogram of time spent waiting in the queue in seconds.", latencyBuckets)
	e.prefill = hist(p.prefill, "Histogram of time spent in prefill in seconds.", latencyBuckets)
	e.promptHist = hist(p.promptHist, "Number of prefill tokens processed.", tokenBuckets)
	e.genHist = hist(p.genHist, "Number of generation tokens processed.", tokenBuckets)
	if p.summary != "" {
		sm := prometheus.NewSummary(prometheus.SummaryOpts{Name: p.summary, Help: "Summary of request durations.", ConstLabels: p.labels,
			Objectives: map[float64]float64{0.5: 0.05, 0.99: 0.001}})
		reg.MustRegister(sm)
		e.summary = sm
	}
	return e
}

func observe(o prometheus.Observer, v float64) {
	if o != nil {
		o.Observe(v)
	}
}

func add(c prometheus.Counter, v float64) {
	if c != nil {
		c.Add(v)
	}
}

func (e *engine) firstToken(queueWait, ttft float64, promptTokens int) {
	observe(e.queue, queueWait)
	observe(e.prefill, ttft)
	observe(e.ttft, (queueWait+ttft)*e.p.ttftScale)
	add(e.promptTokens, float64(promptTokens))
	add(e.genTokens, 1)
	add(e.queueMicros, queueWait*1e6)
}

func (e *engine) token(itl float64) {
	observe(e.itl, itl)
	add(e.genTokens, 1)
}

func (e *engine) prefixCache(queried, hit int) {
	add(e.prefixQueries, float64(queried))
	add(e.prefixHits, float64(hit))
	add(e.cached, float64(hit))
	e.queried.Add(int64(queried))
	e.hit.Add(int64(hit))
}

// aborted counts a request the client gave up on the way each engine
// does: vLLM and TensorRT-LLM as finished_reason "abort", Dynamo as
// status "cancelled", Triton as a failure with reason CANCELED.
func (e *engine) aborted() {
	switch {
	case e.success != nil && e.p.successLabel == "finished_reason":
		e.success.WithLabelValues("abort").Inc()
	case e.success != nil && e.p.successLabel == "status":
		e.success.WithLabelValues("cancelled").Inc()
	case e.failure != nil:
		e.failure.WithLabelValues("CANCELED").Inc()
	}
}

func (e *engine) served(queueWait, e2e float64, promptTokens, outputTokens int) {
	observe(e.queue, queueWait)
	add(e.queueMicros, queueWait*1e6)
	add(e.promptTokens, float64(promptTokens))
	add(e.genTokens, float64(outputTokens))
	e.finished(e2e, promptTokens, outputTokens, "stop")
}

func (e *engine) finished(e2e float64, promptTokens, outputTokens int, reason string) {
	observe(e.e2e, e2e)
	observe(e.promptHist, float64(promptTokens))
	observe(e.genHist, float64(outputTokens))
	observe(e.summary, e2e*1e6)
	add(e.e2eMicros, e2e*1e6)
	add(e.infer, 1)
	add(e.exe, 1)
	if e.success != nil {
		switch e.p.successLabel {
		case "":
			e.success.WithLabelValues().Inc()
		case "status":
			e.success.WithLabelValues("success").Inc()
		default:
			e.success.WithLabelValues(reason).Inc()
		}
	}
}

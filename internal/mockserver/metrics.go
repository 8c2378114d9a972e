package mockserver

import (
	"github.com/prometheus/client_golang/prometheus"
)

// engineMetrics is what the server reports about its work; each simulated
// engine (vLLM today) turns the events into its own metric families.
type engineMetrics interface {
	// firstToken is called when a request's first token is out, after
	// waiting queueWait and prefilling for ttft seconds.
	firstToken(queueWait, ttft float64, promptTokens int)
	// token is called for every later token, itl seconds after the one before.
	token(itl float64)
	finished(e2e float64, promptTokens, outputTokens int, reason string)
}

// vllmMetrics mimics vLLM's V1 engine metrics, with its bucket boundaries.
type vllmMetrics struct {
	promptTokens, generationTokens prometheus.Counter
	success                        *prometheus.CounterVec
	ttft, itl, e2e, queue, prefill prometheus.Observer
	promptHist, genHist            prometheus.Observer
}

func newVLLMMetrics(reg *prometheus.Registry, model string, s *state) *vllmMetrics {
	labels := prometheus.Labels{"model_name": model, "engine": "0"}
	gauge := func(name, help string, f func() float64) {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: labels}, f))
	}
	gauge("vllm:num_requests_running", "Number of requests in model execution batches.", func() float64 { return float64(s.running.Load()) })
	gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", func() float64 { return float64(s.waiting.Load()) })
	gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", func() float64 {
		return min(1, float64(s.kvTokens.Load())/float64(s.kvCapacity))
	})
	info := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "vllm:cache_config_info", Help: "Information of the LLMEngine CacheConfig",
		ConstLabels: prometheus.Labels{"block_size": "16", "cache_dtype": "auto", "num_gpu_blocks": "16384", "enable_prefix_caching": "True"},
	})
	info.Set(1)
	reg.MustRegister(info)

	counter := func(name, help string) prometheus.Counter {
		c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: labels})
		reg.MustRegister(c)
		return c
	}
	m := &vllmMetrics{
		promptTokens:     counter("vllm:prompt_tokens_total", "Number of prefill tokens processed."),
		generationTokens: counter("vllm:generation_tokens_total", "Number of generation tokens processed."),
	}
	counter("vllm:num_preemptions_total", "Cumulative number of preemption from the engine.")
	m.success = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vllm:request_success_total", Help: "Count of successfully processed requests.", ConstLabels: labels}, []string{"finished_reason"})
	reg.MustRegister(m.success)

	hist := func(name, help string, buckets []float64) prometheus.Observer {
		h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, ConstLabels: labels, Buckets: buckets})
		reg.MustRegister(h)
		return h
	}
	m.ttft = hist("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.",
		[]float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0})
	m.itl = hist("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.",
		[]float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0})
	latency := []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}
	m.e2e = hist("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", latency)
	m.queue = hist("vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", latency)
	m.prefill = hist("vllm:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.", latency)
	tokens := []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000}
	m.promptHist = hist("vllm:request_prompt_tokens", "Number of prefill tokens processed.", tokens)
	m.genHist = hist("vllm:request_generation_tokens", "Number of generation tokens processed.", tokens)
	return m
}

func (m *vllmMetrics) firstToken(queueWait, ttft float64, promptTokens int) {
	m.queue.Observe(queueWait)
	m.prefill.Observe(ttft)
	m.ttft.Observe(queueWait + ttft)
	m.promptTokens.Add(float64(promptTokens))
	m.generationTokens.Inc()
}

func (m *vllmMetrics) token(itl float64) {
	m.itl.Observe(itl)
	m.generationTokens.Inc()
}

func (m *vllmMetrics) finished(e2e float64, promptTokens, outputTokens int, reason string) {
	m.e2e.Observe(e2e)
	m.promptHist.Observe(float64(promptTokens))
	m.genHist.Observe(float64(outputTokens))
	m.success.WithLabelValues(reason).Inc()
}

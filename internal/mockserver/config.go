// Package mockserver is llmbench's built-in simulated LLM inference server:
// every endpoint type llmbench benchmarks (OpenAI chat, completions,
// responses, embeddings, images, transcriptions and videos; Anthropic
// messages; TGI generate; Cohere, TEI and NIM rankings; NIM image
// retrieval; Solido RAG), streaming or not, with configurable latency,
// output length and faults, and a Prometheus /metrics endpoint whose values
// follow the load it really serves.
package mockserver

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Config sets how the simulated server behaves.
type Config struct {
	// TTFT is the time from a request's admission to its first token.
	TTFT       time.Duration
	TTFTJitter time.Duration
	// NoAbort keeps generating a request whose client went away, holding
	// its place in the queue and its slot to the end, as an engine that
	// does not abort disconnected requests does (vLLM aborts them).
	NoAbort bool
	// PrefillPerToken adds to the time to first token for every prompt
	// token the engine computes (not served from the prefix cache), as a
	// real engine's prefill grows with the prompt.
	PrefillPerToken time.Duration
	// ITL is the mean time between tokens; ITLJitter its standard deviation.
	ITL       time.Duration
	ITLJitter time.Duration
	// OutputMean and OutputStddev give the output length in tokens when a
	// request has no max_tokens.
	OutputMean, OutputStddev float64
	// MaxNumSeqs is how many requests run at once; the rest wait in a queue
	// (0: no limit).
	MaxNumSeqs int
	// KVCacheTokens is the simulated KV-cache capacity behind kv_cache_usage_perc.
	KVCacheTokens int
	// PrefixCaching turns the simulated prefix cache on (vLLM's default):
	// a prompt's cached blocks shorten its time to first token.
	PrefixCaching bool
	Seed          uint64
	// Faults, each every Nth request (0: never).
	ErrorEvery   int // HTTP 500 with an error body
	DropEvery    int // connection closed halfway through the response
	GarbageEvery int // a malformed chunk (or body) instead of JSON
	// Faults are the named faults of --fault, each every Nth request; the
	// first rule matching a request applies.
	Faults []FaultRule

	// Language counts prompts and writes answers; nil: llmbench's word
	// tokenizer.
	Language Language `json:"-"`

	// MetricsProfile is the engine whose /metrics are imitated: vllm,
	// sglang, trtllm (JSON at /metrics, Prometheus at /prometheus/metrics),
	// dynamo or triton.
	MetricsProfile string
	// MetricsDelay slows every /metrics answer down.
	MetricsDelay time.Duration
	// MetricsDieAfter closes the connection of every scrape after the Nth.
	MetricsDieAfter int
	// MetricsResetAfter restarts the counters after the Nth scrape, as a
	// server restart would.
	MetricsResetAfter int
	// MetricsReplay serves these exposition files, one per scrape, staying
	// on the last, instead of live metrics.
	MetricsReplay []string

	// NoPerRequestMetrics leaves out the per-request "metrics" member
	// vLLM adds with --enable-per-request-metrics (its queue, prefill and
	// decode time for the request), which the server returns by default.
	NoPerRequestMetrics bool

	// GPUs is how many simulated GPUs serve the model, tensor parallel, and
	// report to a DCGM exporter of their own (0: none).
	GPUs int
	// GPUPower is what those GPUs draw.
	GPUPower GPUPowerProfile

	// APIKey, when set, is required of every inference request, as
	// Authorization: Bearer <key> or x-api-key: <key> (401 otherwise).
	APIKey string `json:"-"`

	// EmbeddingDim is the length of an embedding vector when the request
	// sets no dimensions (0: 384).
	EmbeddingDim int
	// PoolingOverhead and PoolingPerToken are how long a request without
	// generation (embeddings, rankings, image retrieval) takes: the
	// overhead, plus the time per input token (a ranking counts the query
	// once per passage, an image as imageTokens).
	PoolingOverhead time.Duration
	PoolingPerToken time.Duration
	// ImageTime is how long one 1024x1024 image takes to generate (or
	// edit); it scales with the pixels and the number of images.
	ImageTime time.Duration
	// VideoTime is how long a 4-second 1280x720 video job takes; it scales
	// with the seconds and pixels asked for. Jobs run one at a time.
	VideoTime time.Duration
	// MediaTimeScale multiplies ImageTime and VideoTime (0.01: a hundred
	// times faster), so that tests and demonstrations keep their
	// proportions without their wait.
	MediaTimeScale float64
	// TranscriptionRTF is a transcription's real-time factor: its time
	// over the audio's duration (0.05: a second of audio takes 50 ms).
	TranscriptionRTF float64

	// Observed, when set, is told every finished request's exact
	// latencies, the values its histograms observed before bucketing, so
	// that a test can tell the histograms' estimation error from a
	// difference in what is timed. No flag sets it.
	Observed func(Observation) `json:"-"`
}

// Observation is one finished request as the server timed it.
type Observation struct {
	// RequestID is the request's X-Request-ID header ("" without one),
	// which joins it to the client's record.
	RequestID string
	// TTFT is from the request's arrival to its first token's production,
	// queue included, as vLLM's; E2E from its arrival to its last token's
	// production. Each is the value its histogram observed.
	TTFT, E2E time.Duration
	// Arrival is when the request reached the engine.
	Arrival time.Time
}

// DefaultConfig is a quick, realistic-looking server.
func DefaultConfig() Config {
	return Config{
		TTFT:           50 * time.Millisecond,
		ITL:            10 * time.Millisecond,
		OutputMean:     100,
		KVCacheTokens:  262144,
		PrefixCaching:  true,
		Seed:           1,
		MetricsProfile: "vllm",
		GPUPower:       DefaultGPUPowerProfile(),

		EmbeddingDim:     384,
		PoolingOverhead:  5 * time.Millisecond,
		PoolingPerToken:  20 * time.Microsecond,
		ImageTime:        2 * time.Second,
		VideoTime:        10 * time.Second,
		MediaTimeScale:   1,
		TranscriptionRTF: 0.05,
	}
}

// Validate reports the first invalid setting.
func (c Config) Validate() error {
	if c.TTFT < 0 || c.TTFTJitter < 0 || c.ITL < 0 || c.ITLJitter < 0 || c.PrefillPerToken < 0 {
		return errors.New("mock server latencies cannot be negative")
	}
	if c.OutputMean < 1 || c.OutputStddev < 0 {
		return errors.New("mock server output length mean must be at least 1, stddev not negative")
	}
	if c.MaxNumSeqs < 0 || c.ErrorEvery < 0 || c.DropEvery < 0 || c.GarbageEvery < 0 {
		return errors.New("mock server counts cannot be negative")
	}
	if _, err := profileFor(c.MetricsProfile, DefaultModel); err != nil {
		return err
	}
	if c.MetricsDieAfter < 0 || c.MetricsResetAfter < 0 || c.MetricsDelay < 0 {
		return errors.New("mock server metrics faults cannot be negative")
	}
	for _, r := range c.Faults {
		if _, ok := lookupFault(r.Name); !ok || r.Every < 1 {
			return fmt.Errorf("mock server fault %q every %d: unknown fault or count below 1", r.Name, r.Every)
		}
	}
	if c.GPUs < 0 || c.GPUs > gpuMaxGPUs {
		return fmt.Errorf("mock server GPUs %d: must be between 0 and %d", c.GPUs, gpuMaxGPUs)
	}
	if p := c.GPUPower; p.IdleWatts < 0 || p.IdleStepWatts < 0 || p.SeqWatts < 0 || p.TokenJoules < 0 {
		return errors.New("mock server GPU power profile cannot be negative")
	}
	if c.KVCacheTokens < 1 {
		return errors.New("mock server kv cache must hold at least 1 token")
	}
	if c.EmbeddingDim < 0 || c.EmbeddingDim > maxEmbeddingDim {
		return fmt.Errorf("mock server embedding dimension %d: must be between 1 and %d (0: %d)", c.EmbeddingDim, maxEmbeddingDim, defaultEmbeddingDim)
	}
	if c.PoolingOverhead < 0 || c.PoolingPerToken < 0 || c.ImageTime < 0 || c.VideoTime < 0 {
		return errors.New("mock server pooling, image and video times cannot be negative")
	}
	if !(c.MediaTimeScale >= 0) || !(c.TranscriptionRTF >= 0) || math.IsInf(c.MediaTimeScale, 0) || math.IsInf(c.TranscriptionRTF, 0) {
		return errors.New("mock server media time scale and transcription real-time factor must be finite and not negative")
	}
	return nil
}

// BindFlags registers the settings on fs, each name prefixed with prefix
// ("" for `llmbench mock-server`, "mock-" inside `llmbench profile`).
func (c *Config) BindFlags(fs *flag.FlagSet, prefix string) {
	fs.Var((*msValue)(&c.TTFT), prefix+"ttft-ms", "simulated time to first token, ms")
	fs.Var((*msValue)(&c.TTFTJitter), prefix+"ttft-jitter-ms", "standard deviation of the time to first token, ms")
	fs.BoolVar(&c.NoAbort, prefix+"no-abort", c.NoAbort, "keep generating requests whose client went away, holding their queue place and slot to the end (an engine that does not abort them)")
	fs.Var((*usValue)(&c.PrefillPerToken), prefix+"prefill-us-per-token", "prefill time per computed prompt token, µs, added to the time to first token (0: none)")
	fs.Var((*msValue)(&c.ITL), prefix+"itl-ms", "simulated mean inter-token latency, ms")
	fs.Var((*msValue)(&c.ITLJitter), prefix+"itl-jitter-ms", "standard deviation of the inter-token latency, ms")
	fs.Float64Var(&c.OutputMean, prefix+"output-tokens-mean", c.OutputMean, "output length when a request sets no max_tokens")
	fs.Float64Var(&c.OutputStddev, prefix+"output-tokens-stddev", c.OutputStddev, "standard deviation of that output length")
	fs.IntVar(&c.MaxNumSeqs, prefix+"max-num-seqs", c.MaxNumSeqs, "requests served at once; more wait in a queue (0: unlimited)")
	fs.IntVar(&c.KVCacheTokens, prefix+"kv-cache-tokens", c.KVCacheTokens, "simulated KV-cache capacity in tokens")
	fs.BoolVar(&c.PrefixCaching, prefix+"prefix-caching", c.PrefixCaching, "simulate a prefix cache: repeated prompt blocks shorten the time to first token (=false: every prompt prefilled in full)")
	fs.Uint64Var(&c.Seed, prefix+"seed", c.Seed, "seed for simulated lengths, jitter and text")
	fs.IntVar(&c.ErrorEvery, prefix+"error-every", c.ErrorEvery, "answer every Nth request with HTTP 500 (0: never)")
	fs.IntVar(&c.DropEvery, prefix+"drop-every", c.DropEvery, "drop the connection of every Nth request halfway (0: never)")
	fs.IntVar(&c.GarbageEvery, prefix+"garbage-every", c.GarbageEvery, "send a malformed chunk in every Nth response (0: never)")
	fs.Func(prefix+"fault", "inject a fault, 'name' (every request) or 'name:N' (every Nth); repeatable. Faults: "+FaultNames(), func(v string) error {
		r, err := ParseFaultRule(v)
		if err != nil {
			return err
		}
		c.Faults = append(c.Faults, r)
		return nil
	})
	fs.StringVar(&c.MetricsProfile, prefix+"metrics-profile", c.MetricsProfile, "engine whose /metrics to imitate: vllm, sglang, trtllm, dynamo, triton")
	fs.Var((*msValue)(&c.MetricsDelay), prefix+"metrics-delay-ms", "delay every /metrics answer, ms")
	fs.IntVar(&c.MetricsDieAfter, prefix+"metrics-die-after", c.MetricsDieAfter, "drop the connection of every /metrics scrape after the Nth (0: never)")
	fs.IntVar(&c.MetricsResetAfter, prefix+"metrics-reset-after", c.MetricsResetAfter, "reset the counters after the Nth /metrics scrape (0: never)")
	fs.BoolVar(&c.NoPerRequestMetrics, prefix+"no-per-request-metrics", c.NoPerRequestMetrics, "leave out each response's \"metrics\" (queue, prefill and decode time, as vLLM's --enable-per-request-metrics)")
	fs.IntVar(&c.GPUs, prefix+"gpus", c.GPUs, "simulated GPUs serving the model, with a DCGM exporter of their own (0: none)")
	fs.IntVar(&c.EmbeddingDim, prefix+"embedding-dim", c.EmbeddingDim, "length of an embedding vector (a request's dimensions wins)")
	fs.Var((*msValue)(&c.PoolingOverhead), prefix+"pooling-overhead-ms", "fixed time of an embedding, ranking or image retrieval request, ms")
	fs.Var((*usValue)(&c.PoolingPerToken), prefix+"pooling-us-per-token", "time per input token of an embedding, ranking or image retrieval request, µs (a ranking counts the query once per passage)")
	fs.Var((*msValue)(&c.ImageTime), prefix+"image-time-ms", "time to generate one 1024x1024 image, ms (scales with pixels and n)")
	fs.Var((*msValue)(&c.VideoTime), prefix+"video-time-ms", "time of a 4-second 1280x720 video job, ms (scales with seconds and pixels)")
	fs.Float64Var(&c.MediaTimeScale, prefix+"media-time-scale", c.MediaTimeScale, "factor on the image and video times (0.01: a hundred times faster)")
	fs.Float64Var(&c.TranscriptionRTF, prefix+"transcription-rtf", c.TranscriptionRTF, "transcription time as a fraction of the audio's length")
	fs.Func(prefix+"metrics-replay", "serve these Prometheus exposition files (comma-separated), one per scrape, instead of live metrics", func(v string) error {
		for _, f := range strings.Split(v, ",") {
			if f = strings.TrimSpace(f); f != "" {
				c.MetricsReplay = append(c.MetricsReplay, f)
			}
		}
		return nil
	})
}

type msValue time.Duration

func (m *msValue) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("%q is not a number of milliseconds", s)
	}
	*m = msValue(time.Duration(v * float64(time.Millisecond)))
	return nil
}

func (m *msValue) String() string {
	if m == nil {
		return "0"
	}
	return strconv.FormatFloat(float64(*m)/float64(time.Millisecond), 'g', -1, 64)
}

// usValue is a duration given in microseconds.
type usValue time.Duration

func (u *usValue) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("%q is not a number of microseconds", s)
	}
	*u = usValue(time.Duration(v * float64(time.Microsecond)))
	return nil
}

func (u *usValue) String() string {
	if u == nil {
		return "0"
	}
	return strconv.FormatFloat(float64(*u)/float64(time.Microsecond), 'g', -1, 64)
}

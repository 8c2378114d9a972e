// Package config owns a run's configuration: the profile options with their
// AIPerf-compatible flag names and defaults, their validation, and the
// redaction of secrets before the configuration is written anywhere.
package config

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/llmbench/llmbench/internal/endpoint"

	"github.com/llmbench/llmbench/internal/metrics"
	"github.com/llmbench/llmbench/internal/tokenizer"
	"github.com/llmbench/llmbench/internal/tracesynth"
)

// Endpoint types llmbench can benchmark.
const (
	EndpointChat        = "chat"
	EndpointCompletions = "completions"
)

// Arrival patterns (--arrival-pattern, alias --request-rate-mode).
const (
	RateConstant = "constant"
	RatePoisson  = "poisson"
	RateGamma    = "gamma"
)

// Model selection strategies (--model-selection-strategy).
const (
	ModelRoundRobin = "round_robin"
	// URLRoundRobin sends request n to URL n mod the number of URLs.
	URLRoundRobin = "round_robin"
	// HTTPClientLean is llmbench's HTTP/1.1 transport, which reads each
	// response on the request's own goroutine; HTTPClientStdlib is Go's
	// net/http Transport, kept selectable as a fallback and a baseline.
	HTTPClientLean   = "lean"
	HTTPClientStdlib = "net/http"

	// ServerTimingsAuto asks for each engine's per-request timings in the
	// forms that cannot make a server reject a request (a streamed
	// request asks for its usage chunk, where vLLM puts them) and reads
	// whatever comes back; ServerTimingsOff sends AIPerf's exact bodies
	// and reads none.
	ServerTimingsAuto = "auto"
	ServerTimingsOff  = "off"
	ModelRandom       = "random"
)

// Readiness probes (--wait-for-model-mode).
const (
	WaitModels    = "models"
	WaitInference = "inference"
	WaitBoth      = "both"
)

// Profile is the configuration of one `llmbench profile` run. Its JSON form
// is the input_config written into the exports (after Redacted).
type Profile struct {
	Endpoint      Endpoint      `json:"endpoint"`
	Input         Input         `json:"input"`
	Loadgen       Loadgen       `json:"loadgen"`
	Tokenizer     Tokenizer     `json:"tokenizer"`
	Output        Output        `json:"output"`
	ServerMetrics ServerMetrics `json:"server_metrics"`
	GPUTelemetry  GPUTelemetry  `json:"gpu_telemetry"`
	MultiRun      MultiRun      `json:"multi_run"`
	// Shard is recorded in run_info, not here: input_config keeps
	// AIPerf's shape.
	Shard Shard `json:"-"`
	// Sweep and Search make one command line many runs; each run's
	// input_config is its own cell's profile, so they are not exported.
	Sweep  Sweep  `json:"-"`
	Search Search `json:"-"`
	// Goodput is --goodput as given ("time_to_first_token:200 …");
	// SLOs its parsed objectives.
	Goodput string        `json:"goodput,omitempty"`
	SLOs    []metrics.SLO `json:"-"`
	// OSLMismatchPct and OSLMismatchMaxTokens set the OSL mismatch
	// threshold (AIPERF_METRICS_OSL_MISMATCH_*; 5 % and 50 tokens).
	OSLMismatchPct       float64 `json:"-"`
	OSLMismatchMaxTokens float64 `json:"-"`
	// WorkersMax is AIPerf's --workers-max, accepted so that its command
	// lines run: llmbench has no worker processes for it to cap.
	WorkersMax int `json:"-"`
	// CLICommand is the command line that started the run; set it from
	// CommandLine(RedactArgs(args)) so it never holds a secret.
	CLICommand string `json:"cli_command,omitempty"`

	// set names the flags given on the command line (canonical names), so
	// an explicit 0 can be told from "not given".
	set map[string]bool
}

// Endpoint says where and how requests are sent.
type Endpoint struct {
	ModelNames []string `json:"model_names"`
	Type       string   `json:"type"`
	// Custom overrides the endpoint type's default path.
	Custom    string `json:"custom_endpoint,omitempty"`
	Streaming bool   `json:"streaming"`
	// URLs are the servers' base URLs, without credentials (AIPerf's
	// default http://localhost:8000); unused with Mock. Several share the
	// load by URLStrategy.
	URLs []string `json:"urls,omitempty"`
	// Users hold the credentials of URLs like http://user:pw@host, index
	// for index with URLs (nil where there are none), sent as Basic auth
	// and never written anywhere.
	Users Credentials `json:"-"`
	// URLStrategy picks a request's URL among several: round_robin.
	URLStrategy string `json:"url_strategy,omitempty"`
	// HTTPClient is the transport requests go through: HTTPClientLean
	// (llmbench's own HTTP/1.1, the default) or HTTPClientStdlib.
	HTTPClient string `json:"http_client,omitempty"`
	// ServerTimings is ServerTimingsAuto (ask servers for their
	// per-request timings and read what comes back) or ServerTimingsOff.
	ServerTimings  string        `json:"server_timings,omitempty"`
	Mock           bool          `json:"mock,omitempty"`
	RequestTimeout time.Duration `json:"-"`
	TimeoutSeconds float64       `json:"timeout"`
	APIKey         string        `json:"api_key,omitempty"`
	Headers        []string      `json:"headers,omitempty"`
	ExtraInputs    []string      `json:"extra_inputs,omitempty"`
	// LegacyMaxTokens sends chat's output limit as max_tokens, not
	// max_completion_tokens (--use-legacy-max-tokens).
	LegacyMaxTokens bool `json:"use_legacy_max_tokens,omitempty"`
	// ModelSelection assigns a model to each request when several are
	// given: round_robin or random.
	ModelSelection string `json:"model_selection_strategy"`
	// WaitForModel, when above 0, probes the server until it is ready (or
	// fails the run after that long), every WaitInterval, by WaitMode.
	WaitForModel        time.Duration `json:"-"`
	WaitForModelSeconds float64       `json:"wait_for_model_timeout,omitempty"`
	WaitMode            string        `json:"wait_for_model_mode,omitempty"`
	WaitInterval        time.Duration `json:"-"`
	// ResetKVCache POSTs ResetKVCachePath to every server origin before
	// each run (AIPerf's --reset-kv-cache control hook), within
	// ResetKVCacheTimeout (0: the request timeout).
	ResetKVCache        bool          `json:"reset_kv_cache,omitempty"`
	ResetKVCachePath    string        `json:"reset_kv_cache_path,omitempty"`
	ResetKVCacheTimeout time.Duration `json:"-"`
}

// Input describes the dataset.
type Input struct {
	RandomSeed        *int64 `json:"random_seed"`
	NumDatasetEntries int    `json:"num_dataset_entries"`
	Prompt            Prompt `json:"prompt"`
	// File is --input-file (a file, or a directory for random_pool) and
	// CustomDatasetType its format.
	File              string `json:"file,omitempty"`
	CustomDatasetType string `json:"custom_dataset_type,omitempty"`
	// PublicDataset is --public-dataset and --public-dataset-path.
	PublicInput
	// SamplingStrategy orders the conversations: sequential, random or
	// shuffle.
	SamplingStrategy string `json:"dataset_sampling_strategy"`
	// FixedSchedule sends every conversation at its timestamp; trace
	// files turn it on unless NoFixedSchedule.
	FixedSchedule      bool         `json:"fixed_schedule"`
	NoFixedSchedule    bool         `json:"-"`
	FixedScheduleAuto  bool         `json:"fixed_schedule_auto_offset"`
	FixedScheduleStart *float64     `json:"fixed_schedule_start_offset,omitempty"`
	FixedScheduleEnd   *float64     `json:"fixed_schedule_end_offset,omitempty"`
	Conversation       Conversation `json:"conversation"`
	PrefixPrompt       PrefixPrompt `json:"prefix_prompt"`
	SharedSystemPrompt int          `json:"shared_system_prompt_length,omitempty"`
	// Media are the images, audio and videos of synthetic requests and
	// the inputs of non-chat types (media.go).
	Media Media `json:"media"`
	// Synthesis reshapes a mooncake_trace before replay (synthesis.go).
	Synthesis tracesynth.Options `json:"synthesis"`
}

// Conversation shapes synthetic multi-turn sessions.
type Conversation struct {
	TurnMean    float64 `json:"turn_mean"`
	TurnStddev  float64 `json:"turn_stddev"`
	DelayMean   float64 `json:"turn_delay_mean"`
	DelayStddev float64 `json:"turn_delay_stddev"`
	DelayRatio  float64 `json:"turn_delay_ratio"`
}

// PrefixPrompt is the pool of prefixes prepended to synthetic prompts.
type PrefixPrompt struct {
	PoolSize int `json:"pool_size"`
	Length   int `json:"length"`
}

// Prompt holds the synthetic prompt's token-length distributions.
type Prompt struct {
	InputTokens  Distribution `json:"input_tokens"`
	OutputTokens Distribution `json:"output_tokens"`
	// BlockSize is the tokens per trace hash block.
	BlockSize int `json:"block_size"`
}

// Distribution is a normal distribution of a token count.
type Distribution struct {
	Mean   float64 `json:"mean"`
	Stddev float64 `json:"stddev"`
}

// Loadgen describes the load: how many requests, how fast, for how long.
type Loadgen struct {
	Concurrency        int     `json:"concurrency,omitempty"`
	RequestRate        float64 `json:"request_rate,omitempty"`
	RequestRateMode    string  `json:"request_rate_mode"`
	RequestCount       int     `json:"request_count,omitempty"`
	WarmupRequestCount int     `json:"warmup_request_count"`
	// BenchmarkDuration, when set, ends issuing after that long instead of
	// after RequestCount requests.
	BenchmarkDuration    time.Duration `json:"-"`
	BenchmarkDurationSec float64       `json:"benchmark_duration,omitempty"`
	GracePeriod          time.Duration `json:"-"`
	GracePeriodSec       float64       `json:"benchmark_grace_period"`
	// ArrivalSmoothness is gamma arrivals' shape.
	ArrivalSmoothness float64 `json:"arrival_smoothness,omitempty"`
	// Ramps and the warm-up's duration.
	ConcurrencyRamp    time.Duration `json:"-"`
	RateRamp           time.Duration `json:"-"`
	WarmupDuration     time.Duration `json:"-"`
	ConcurrencyRampSec float64       `json:"concurrency_ramp_duration,omitempty"`
	RateRampSec        float64       `json:"request_rate_ramp_duration,omitempty"`
	WarmupDurationSec  float64       `json:"warmup_duration,omitempty"`
	// CancellationRate is the percentage of requests cancelled
	// CancellationDelay after they were fully sent.
	CancellationRate     float64       `json:"request_cancellation_rate"`
	CancellationDelay    time.Duration `json:"-"`
	CancellationDelaySec float64       `json:"request_cancellation_delay"`
	// RequestCountGiven says --request-count was on the command line (a
	// multi-turn run otherwise sends every conversation once).
	RequestCountGiven bool `json:"-"`
	// PrefillConcurrency caps the requests waiting for their first token
	// (AIPerf's --prefill-concurrency; 0: no cap), its slots opened over
	// PrefillRamp.
	PrefillConcurrency int           `json:"prefill_concurrency,omitempty"`
	PrefillRamp        time.Duration `json:"-"`
	PrefillRampSec     float64       `json:"prefill_concurrency_ramp_duration,omitempty"`
	// WarmupShape is the warm-up's own load (AIPerf's --warmup-concurrency
	// and kin, flat in input_config under AIPerf's names); a zero field
	// takes the profiling phase's value.
	WarmupShape
}

// WarmupShape is how the warm-up loads the server when it differs from
// the profiling phase.
type WarmupShape struct {
	Concurrency        int           `json:"warmup_concurrency,omitempty"`
	RequestRate        float64       `json:"warmup_request_rate,omitempty"`
	ArrivalPattern     string        `json:"warmup_arrival_pattern,omitempty"`
	ConcurrencyRamp    time.Duration `json:"-"`
	RateRamp           time.Duration `json:"-"`
	ConcurrencyRampSec float64       `json:"warmup_concurrency_ramp_duration,omitempty"`
	RateRampSec        float64       `json:"warmup_request_rate_ramp_duration,omitempty"`
	PrefillConcurrency int           `json:"warmup_prefill_concurrency,omitempty"`
	PrefillRamp        time.Duration `json:"-"`
	PrefillRampSec     float64       `json:"warmup_prefill_concurrency_ramp_duration,omitempty"`
}

// Given reports a warm-up shaped otherwise than the profiling phase.
func (w WarmupShape) Given() bool {
	return w.Concurrency != 0 || w.RequestRate != 0 || w.ArrivalPattern != "" || w.ConcurrencyRamp != 0 || w.RateRamp != 0 ||
		w.PrefillConcurrency != 0 || w.PrefillRamp != 0
}

// MultiRun repeats the profile for confidence intervals.
type MultiRun struct {
	// NumRuns is --num-profile-runs (1 to 10).
	NumRuns         int     `json:"num_profile_runs"`
	ConfidenceLevel float64 `json:"confidence_level"`
	// Cooldown is the pause between runs.
	Cooldown        time.Duration `json:"-"`
	CooldownSeconds float64       `json:"profile_run_cooldown_seconds"`
	// DisableWarmupAfterFirst runs the warm-up only before the first run.
	DisableWarmupAfterFirst bool `json:"profile_run_disable_warmup_after_first"`
	// ConsistentSeed gives every run the same seed (drawn once when
	// --random-seed is not given), so every run sends the same workload.
	ConsistentSeed bool `json:"set_consistent_seed"`
}

// Tokenizer selects the client-side tokenizer.
type Tokenizer struct {
	// Name is --tokenizer; Finish fills in the default.
	Name                string `json:"name"`
	Revision            string `json:"revision"`
	TrustRemoteCode     bool   `json:"trust_remote_code"`
	UseServerTokenCount bool   `json:"use_server_token_count"`
	// ForPlaceholder is set when the builtin tokenizer was chosen for a
	// placeholder model name (your-model, test-model, …), to be warned of.
	ForPlaceholder bool `json:"-"`
}

// Output says where artifacts go.
type Output struct {
	ArtifactDir string `json:"artifact_directory"`
	// ExportPrefix renames the export files: <prefix>.jsonl,
	// <prefix>_aiperf.json, <prefix>_server_metrics.json, …
	ExportPrefix string `json:"profile_export_prefix,omitempty"`
	UIType       string `json:"ui_type"`
	// Overwrite replaces a previous run's files in ArtifactDir; without
	// it they are moved to previous_<time>/ first.
	Overwrite bool `json:"overwrite,omitempty"`
	// FailOnVerdict is "suspect" or "invalid": a run whose verdict is
	// that bad or worse exits with code 3. "" for never.
	FailOnVerdict string `json:"fail_on_verdict,omitempty"`
	// ExportLevel is AIPerf's --export-level: summary (no per-request
	// file), records (the default: profile_export.jsonl too) or raw
	// (profile_export_raw.jsonl besides).
	ExportLevel string `json:"export_level"`
	// RecordsMemoryBudget is --records-memory-budget, bytes: what the
	// per-request values kept for the statistics may hold in memory,
	// the rest going to disk; 0 for the default
	// (RecordsMemoryBudgetBytes).
	RecordsMemoryBudget int64 `json:"records_memory_budget,omitempty"`
}

// The export levels.
const (
	ExportSummary = "summary"
	ExportRecords = "records"
	ExportRaw     = "raw"
)

// WritesRecords says whether the per-request records are written.
func (o Output) WritesRecords() bool { return o.ExportLevel != ExportSummary }

// ServerMetrics configures the scraping of servers' Prometheus /metrics.
type ServerMetrics struct {
	// URLs are the extra endpoints of --server-metrics, normalised and
	// without credentials; the --url server's /metrics is scraped too
	// unless Disabled.
	URLs []string `json:"urls"`
	// Users are the credentials that came with URLs, by URL.
	Users    CredentialsByURL `json:"-"`
	Disabled bool             `json:"disabled"`
	Formats  []string         `json:"formats"`
	// SliceSeconds is --slice-duration; 0 for no time slices.
	SliceSeconds float64 `json:"slice_duration,omitempty"`
	// HistogramEstimator names how p*_estimate is computed: interval-fit
	// (llmbench's), aiperf (AIPerf's polynomial estimator) or linear
	// (Prometheus' histogram_quantile).
	HistogramEstimator string `json:"histogram_estimator"`
	// CounterResets is how a counter or histogram that went down (a
	// server restart) is counted: increase (across the reset, as
	// Prometheus' increase(); the default) or clamp (AIPerf's: the total
	// clamped at 0), recorded in every export's input_config.
	CounterResets string `json:"counter_resets"`
	// From AIPERF_SERVER_METRICS_* environment variables.
	Interval            time.Duration `json:"-"`
	Flush               time.Duration `json:"-"`
	ReachabilityTimeout time.Duration `json:"-"`
}

// Histogram percentile estimators.
const (
	EstimatorIntervalFit = "interval-fit"
	EstimatorAIPerf      = "aiperf"
	EstimatorLinear      = "linear"
)

// Counter reset rules of --counter-resets.
const (
	ResetsIncrease = "increase"
	ResetsClamp    = "clamp"
)

// Server metrics export formats.
const (
	FormatJSON    = "json"
	FormatCSV     = "csv"
	FormatJSONL   = "jsonl"
	FormatParquet = "parquet"
)

// HasFormat reports whether format f was selected.
func (s ServerMetrics) HasFormat(f string) bool {
	for _, x := range s.Formats {
		if x == f {
			return true
		}
	}
	return false
}

// AIPerf's defaults for the server and the request timeout (6 hours, so
// that no long generation is cut off).
const (
	DefaultURL            = "http://localhost:8000"
	DefaultRequestTimeout = 21600 * time.Second
)

// Default returns the profile defaults, AIPerf's where AIPerf has one.
func Default() Profile {
	return Profile{
		Endpoint: Endpoint{
			Type:             EndpointChat,
			URLs:             []string{DefaultURL},
			URLStrategy:      URLRoundRobin,
			HTTPClient:       HTTPClientLean,
			ServerTimings:    ServerTimingsAuto,
			RequestTimeout:   DefaultRequestTimeout,
			ModelSelection:   ModelRoundRobin,
			WaitMode:         WaitInference,
			ResetKVCachePath: "/reset_prefix_cache",
			WaitInterval:     5 * time.Second,
		},
		Input: Input{
			NumDatasetEntries: 100,
			Prompt:            Prompt{InputTokens: Distribution{Mean: 550}, BlockSize: 512},
			CustomDatasetType: "mooncake_trace",
			Synthesis:         tracesynth.Defaults(),
			SamplingStrategy:  "sequential",
			Conversation:      Conversation{TurnMean: 1, DelayRatio: 1},
			Media:             defaultMedia(),
		},
		Loadgen: Loadgen{
			RequestRateMode: RatePoisson,
			GracePeriod:     30 * time.Second,
		},
		Tokenizer:            Tokenizer{Revision: "main"},
		MultiRun:             MultiRun{NumRuns: 1, ConfidenceLevel: 0.95, DisableWarmupAfterFirst: true, ConsistentSeed: true},
		OSLMismatchPct:       metrics.DefaultOptions().OSLMismatchPct,
		OSLMismatchMaxTokens: metrics.DefaultOptions().OSLMismatchMaxTokens,
		Output:               Output{UIType: "simple", ExportLevel: ExportRecords},
		ServerMetrics: ServerMetrics{
			Formats:             []string{FormatJSON, FormatCSV, FormatParquet},
			HistogramEstimator:  EstimatorIntervalFit,
			CounterResets:       ResetsIncrease,
			Interval:            333 * time.Millisecond,
			Flush:               2 * time.Second,
			ReachabilityTimeout: 10 * time.Second,
		},
		GPUTelemetry: defaultGPUTelemetry(),
		Sweep:        Sweep{Type: SweepGrid, Mode: SweepRepeated},
		Search: Search{
			SLOAttainment: 0.95, DegradationThreshold: 0.20, DegradationMetric: "request_latency", DegradationStat: "p99",
			WarmupSeconds: 2, MaxTrialsPerProbe: 3,
		},
	}
}

// ApplyEnv reads AIPerf's environment settings through lookup: the
// AIPERF_SERVER_METRICS_* intervals (seconds) and the OSL mismatch
// thresholds AIPERF_METRICS_OSL_MISMATCH_PCT_THRESHOLD (percent) and
// AIPERF_METRICS_OSL_MISMATCH_MAX_TOKEN_THRESHOLD (tokens).
func (p *Profile) ApplyEnv(lookup func(string) (string, bool)) error {
	for _, v := range []struct {
		name string
		dst  *float64
	}{
		{"AIPERF_METRICS_OSL_MISMATCH_PCT_THRESHOLD", &p.OSLMismatchPct},
		{"AIPERF_METRICS_OSL_MISMATCH_MAX_TOKEN_THRESHOLD", &p.OSLMismatchMaxTokens},
	} {
		raw, ok := lookup(v.name)
		if !ok || strings.TrimSpace(raw) == "" {
			continue
		}
		x, err := strconv.ParseFloat(strings.TrimSpace(raw), 64)
		if err != nil || x < 0 || math.IsInf(x, 0) {
			return fmt.Errorf("%s=%q: want a number, not negative", v.name, raw)
		}
		*v.dst = x
	}
	if err := secondsFromEnv(lookup, map[string]*time.Duration{
		"AIPERF_SERVER_METRICS_COLLECTION_INTERVAL":     &p.ServerMetrics.Interval,
		"AIPERF_SERVER_METRICS_COLLECTION_FLUSH_PERIOD": &p.ServerMetrics.Flush,
		"AIPERF_SERVER_METRICS_REACHABILITY_TIMEOUT":    &p.ServerMetrics.ReachabilityTimeout,
	}); err != nil {
		return err
	}
	if p.ServerMetrics.Interval <= 0 {
		return errors.New("AIPERF_SERVER_METRICS_COLLECTION_INTERVAL must be positive")
	}
	// The API key from the environment, so that it need not be on a
	// command line (which process lists and pod specs show).
	if v, ok := lookup(EnvAPIKey); ok && strings.TrimSpace(v) != "" && !p.set["api-key"] {
		p.Endpoint.APIKey = strings.TrimSpace(v)
	}
	if err := p.Shard.applyEnv(lookup, p.set); err != nil {
		return err
	}
	return p.GPUTelemetry.applyEnv(lookup)
}

// secondsFromEnv sets each duration from its variable (seconds, not
// negative) when the variable is set.
func secondsFromEnv(lookup func(string) (string, bool), vars map[string]*time.Duration) error {
	for name, dst := range vars {
		raw, ok := lookup(name)
		if !ok || strings.TrimSpace(raw) == "" {
			continue
		}
		secs, err := strconv.ParseFloat(strings.TrimSpace(raw), 64)
		if err != nil || secs < 0 || math.IsInf(secs, 0) {
			return fmt.Errorf("%s=%q: want a number of seconds", name, raw)
		}
		*dst = time.Duration(secs * float64(time.Second))
	}
	return nil
}

// Finish validates p, fills in derived defaults and returns the first
// problem found, phrased so the user knows what to change.
func (p *Profile) Finish() error {
	e := &p.Endpoint
	if len(e.ModelNames) == 0 {
		return errors.New("--model is required (the model name the server serves)")
	}
	kind, err := endpoint.Parse(e.Type)
	if err != nil {
		return fmt.Errorf("--endpoint-type: %w", err)
	}
	if e.Streaming && !kind.Caps().Streams {
		return fmt.Errorf("--streaming: the %s endpoint type does not stream; drop --streaming", kind)
	}
	if err := p.finishMedia(kind); err != nil {
		return err
	}
	if e.Mock && p.set["url"] {
		return errors.New("--mock benchmarks the built-in simulated server; leave out --url, or drop --mock to benchmark the server at --url")
	}
	if e.Mock {
		e.URLs, e.Users = nil, nil
	} else if err := e.normalizeURLs(); err != nil {
		return err
	}
	if e.RequestTimeout <= 0 {
		return errors.New("--request-timeout-seconds must be positive")
	}
	if e.ServerTimings != ServerTimingsAuto && e.ServerTimings != ServerTimingsOff {
		return fmt.Errorf("--server-timings %q: use auto or off", e.ServerTimings)
	}
	if e.HTTPClient != HTTPClientLean && e.HTTPClient != HTTPClientStdlib {
		return fmt.Errorf("--http-client %q: use lean or net/http", e.HTTPClient)
	}
	e.ModelSelection = strings.ReplaceAll(e.ModelSelection, "-", "_")
	switch e.ModelSelection {
	case ModelRoundRobin, ModelRandom:
	default:
		return fmt.Errorf("--model-selection-strategy %q: use round_robin or random", e.ModelSelection)
	}
	switch e.WaitMode {
	case WaitModels, WaitInference, WaitBoth:
	default:
		return fmt.Errorf("--wait-for-model-mode %q: use models, inference or both", e.WaitMode)
	}
	if e.WaitForModel < 0 || e.WaitInterval <= 0 {
		return errors.New("--wait-for-model-timeout cannot be negative and --wait-for-model-interval must be positive")
	}
	e.WaitForModelSeconds = e.WaitForModel.Seconds()
	if p.set["reset-kv-cache-path"] || p.set["reset-kv-cache-timeout-seconds"] {
		e.ResetKVCache = true // setting either enables the hook, as in AIPerf
	}
	if !strings.HasPrefix(e.ResetKVCachePath, "/") || strings.Contains(e.ResetKVCachePath, "://") {
		return fmt.Errorf("--reset-kv-cache-path %q: give a path relative to the server, starting with / (e.g. /reset_prefix_cache, /flush_cache for SGLang)", e.ResetKVCachePath)
	}
	if e.ResetKVCacheTimeout < 0 {
		return errors.New("--reset-kv-cache-timeout-seconds cannot be negative")
	}
	e.TimeoutSeconds = e.RequestTimeout.Seconds()
	for _, h := range e.Headers {
		if _, _, ok := strings.Cut(h, ":"); !ok {
			return fmt.Errorf("--header %q must be 'Name:Value'", redactHeader(h))
		}
	}
	for _, x := range e.ExtraInputs {
		if _, _, ok := strings.Cut(x, ":"); !ok {
			return fmt.Errorf("--extra-inputs %q must be 'name:value'", x)
		}
	}

	l := &p.Loadgen
	if l.Concurrency < 0 || p.set["concurrency"] && l.Concurrency == 0 {
		return fmt.Errorf("--concurrency %d: it must be at least 1 (the requests kept in flight); with --request-rate, leave it out for no cap", l.Concurrency)
	}
	if l.RequestRate < 0 || p.set["request-rate"] && l.RequestRate == 0 {
		return fmt.Errorf("--request-rate %g: it must be above 0 requests per second; leave it out to send by --concurrency", l.RequestRate)
	}
	if l.RequestCount < 0 || p.set["request-count"] && l.RequestCount == 0 {
		return fmt.Errorf("--request-count %d: it must be at least 1; use --benchmark-duration to run for a time instead", l.RequestCount)
	}
	if l.WarmupRequestCount < 0 {
		return fmt.Errorf("--warmup-request-count %d cannot be negative", l.WarmupRequestCount)
	}
	switch l.RequestRateMode {
	case RateConstant, RatePoisson:
	case RateGamma:
		if l.ArrivalSmoothness == 0 {
			l.ArrivalSmoothness = 1
		}
	default:
		return fmt.Errorf("--arrival-pattern %q: use constant, poisson or gamma", l.RequestRateMode)
	}
	if l.ArrivalSmoothness < 0 || math.IsNaN(l.ArrivalSmoothness) || l.ArrivalSmoothness > 0 && l.RequestRateMode != RateGamma {
		return fmt.Errorf("--arrival-smoothness %g: it shapes gamma arrivals (--arrival-pattern gamma) and must be positive", l.ArrivalSmoothness)
	}
	if l.ConcurrencyRamp < 0 || l.RateRamp < 0 || l.WarmupDuration < 0 || l.CancellationDelay < 0 {
		return errors.New("--concurrency-ramp-duration, --request-rate-ramp-duration, --warmup-duration and --request-cancellation-delay cannot be negative")
	}
	if l.RateRamp > 0 && l.RequestRate == 0 {
		return errors.New("--request-rate-ramp-duration ramps --request-rate; give one")
	}
	if p.set["request-cancellation-delay"] && l.CancellationRate == 0 {
		return errors.New("--request-cancellation-delay applies to the requests --request-cancellation-rate picks; give a rate above 0")
	}
	if !(l.CancellationRate >= 0 && l.CancellationRate <= 100) {
		return fmt.Errorf("--request-cancellation-rate %g: a percentage of requests, 0 to 100", l.CancellationRate)
	}
	if p.WorkersMax < 0 || p.set["workers-max"] && p.WorkersMax == 0 {
		return fmt.Errorf("--workers-max %d: it must be at least 1", p.WorkersMax)
	}
	if err := p.checkWarmupShape(); err != nil {
		return err
	}
	if err := p.checkPrefillConcurrency(); err != nil {
		return err
	}
	l.ConcurrencyRampSec, l.RateRampSec, l.WarmupDurationSec = l.ConcurrencyRamp.Seconds(), l.RateRamp.Seconds(), l.WarmupDuration.Seconds()
	l.CancellationDelaySec = l.CancellationDelay.Seconds()
	if l.Concurrency == 0 && l.RequestRate == 0 {
		l.Concurrency = 1
	}
	if l.BenchmarkDuration < 0 || l.GracePeriod < 0 {
		return errors.New("--benchmark-duration and --benchmark-grace-period cannot be negative")
	}
	if l.BenchmarkDuration == 0 && l.RequestCount == 0 {
		// AIPerf's default: enough requests that every slot is filled twice.
		l.RequestCount = max(10, 2*l.Concurrency)
	}
	l.BenchmarkDurationSec = l.BenchmarkDuration.Seconds()
	l.GracePeriodSec = l.GracePeriod.Seconds()

	in := &p.Input
	if in.NumDatasetEntries <= 0 {
		return errors.New("--num-dataset-entries must be at least 1")
	}
	if in.Prompt.InputTokens.Mean < 1 || in.Prompt.InputTokens.Stddev < 0 {
		return errors.New("--synthetic-input-tokens-mean must be at least 1 and its stddev not negative")
	}
	if in.Prompt.OutputTokens.Mean < 0 || in.Prompt.OutputTokens.Stddev < 0 {
		return errors.New("--output-tokens-mean and --output-tokens-stddev cannot be negative")
	}
	if err := p.finishDataset(); err != nil {
		return err
	}
	if err := p.finishSynthesis(); err != nil {
		return err
	}
	if p.Tokenizer.Name == "" {
		// AIPerf's default: the model's own tokenizer; the built-in server
		// and placeholder names have none on the Hub.
		p.Tokenizer.Name = tokenizer.DefaultFor(e.ModelNames[0])
		p.Tokenizer.ForPlaceholder = !e.Mock && tokenizer.IsPlaceholder(e.ModelNames[0])
		if e.Mock {
			p.Tokenizer.Name = tokenizer.BuiltinName
		}
	}
	if p.Tokenizer.Revision == "" {
		return errors.New("--tokenizer-revision cannot be empty (the default is main)")
	}
	mr := &p.MultiRun
	if mr.NumRuns < 1 || mr.NumRuns > 10 {
		return fmt.Errorf("--num-profile-runs %d: use 1 to 10", mr.NumRuns)
	}
	if !(mr.ConfidenceLevel > 0 && mr.ConfidenceLevel < 1) {
		return fmt.Errorf("--confidence-level %g: use a level between 0 and 1, such as 0.95", mr.ConfidenceLevel)
	}
	if mr.Cooldown < 0 {
		return errors.New("--profile-run-cooldown-seconds cannot be negative")
	}
	mr.CooldownSeconds = mr.Cooldown.Seconds()
	slos, err := metrics.ParseSLOs(p.Goodput, e.Streaming)
	if err != nil {
		return err
	}
	p.SLOs = slos
	switch p.Output.UIType {
	case "simple", "none":
	default:
		return fmt.Errorf("--ui-type %q: use simple or none", p.Output.UIType)
	}
	switch p.Output.ExportLevel {
	case ExportSummary, ExportRecords, ExportRaw:
	default:
		return fmt.Errorf("--export-level %q: use summary, records or raw", p.Output.ExportLevel)
	}
	if b := p.Output.RecordsMemoryBudget; b != 0 && b < MinRecordsMemoryBudget {
		return fmt.Errorf("--records-memory-budget %s: use at least %s", FormatByteSize(b), FormatByteSize(MinRecordsMemoryBudget))
	}
	switch p.Output.FailOnVerdict {
	case "", "suspect", "invalid":
	default:
		return fmt.Errorf("--fail-on-verdict %q: use suspect or invalid", p.Output.FailOnVerdict)
	}
	if p.Output.ArtifactDir == "" {
		p.Output.ArtifactDir = DefaultArtifactDir(*p)
	}
	if err := p.Shard.finish(p.set, time.Now()); err != nil {
		return err
	}
	if p.Shard.Sharded() {
		if p.Swept() || p.Search.Recipe != "" || p.MultiRun.NumRuns > 1 {
			return errShardSweep
		}
		if !p.set["random-seed"] {
			return errors.New("--shard-count: every shard must compute the same plan, so give them one --random-seed")
		}
		// Shards may share a volume and one command line: each writes
		// its own folder under the run's.
		p.Shard.RunDir = p.Output.ArtifactDir
		p.Output.ArtifactDir = ShardDir(p.Output.ArtifactDir, p.Shard.Index)
	}
	// "--profile-export-prefix run1.json" means prefix "run1".
	if ext := filepath.Ext(p.Output.ExportPrefix); ext != "" {
		p.Output.ExportPrefix = strings.TrimSuffix(p.Output.ExportPrefix, ext)
	}
	sm := &p.ServerMetrics
	for _, f := range sm.Formats {
		switch f {
		case FormatJSON, FormatCSV, FormatJSONL, FormatParquet:
		default:
			return fmt.Errorf("--server-metrics-formats %q: use json, csv, jsonl or parquet", f)
		}
	}
	switch sm.HistogramEstimator {
	case EstimatorIntervalFit, EstimatorAIPerf, EstimatorLinear:
	default:
		return fmt.Errorf("--histogram-estimator %q: use interval-fit, aiperf or linear", sm.HistogramEstimator)
	}
	switch sm.CounterResets {
	case ResetsIncrease, ResetsClamp:
	default:
		return fmt.Errorf("--counter-resets %q: use increase or clamp", sm.CounterResets)
	}
	if sm.SliceSeconds < 0 {
		return errors.New("--slice-duration cannot be negative")
	}
	if err := p.GPUTelemetry.finish(); err != nil {
		return err
	}
	if err := p.finishSweep(); err != nil {
		return err
	}
	for i, u := range sm.URLs {
		n, user, err := NormalizeMetricsURL(u)
		if err != nil {
			return fmt.Errorf("--server-metrics: %w", err)
		}
		sm.URLs[i] = n
		if user != nil {
			if sm.Users == nil {
				sm.Users = CredentialsByURL{}
			}
			sm.Users[n] = user
		}
	}
	return nil
}

// NormalizeMetricsURL accepts host:port, a base URL or a full metrics URL
// and returns the URL to scrape: no path (or "/") means "/metrics". Any
// credentials in it are returned apart.
func NormalizeMetricsURL(raw string) (string, *url.Userinfo, error) {
	base, user, err := NormalizeBaseURL(raw)
	if err != nil {
		return "", nil, err
	}
	u, err := url.Parse(base)
	if err != nil {
		return "", nil, fmt.Errorf("parse %q: %w", redactURL(raw), err)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/metrics"
	}
	return u.String(), user, nil
}

// MetricsURLOf is the /metrics URL auto-discovered for a server base URL:
// the host's /metrics, whatever API path the base URL has.
func MetricsURLOf(base string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("parse %q: %w", base, err)
	}
	u.Path, u.RawQuery, u.Fragment = "/metrics", "", ""
	return u.String(), nil
}

// DefaultArtifactDir names the artifact folder after the run, as AIPerf does:
// artifacts/<model>-openai-<type>-concurrency<N> (or -request_rate<R>).
func DefaultArtifactDir(p Profile) string {
	model := strings.NewReplacer("/", "_", "\\", "_", ":", "_", " ", "_").Replace(p.Endpoint.ModelNames[0])
	name := fmt.Sprintf("%s-openai-%s", model, p.Endpoint.Type)
	if p.Loadgen.RequestRate > 0 {
		name += fmt.Sprintf("-request_rate%g", p.Loadgen.RequestRate)
	} else {
		name += fmt.Sprintf("-concurrency%d", p.Loadgen.Concurrency)
	}
	return "artifacts/" + name
}

// normalizeURLs checks --url values and --url-strategy, and moves the
// URLs' credentials into Users.
func (e *Endpoint) normalizeURLs() error {
	e.URLStrategy = strings.ReplaceAll(e.URLStrategy, "-", "_")
	if e.URLStrategy != URLRoundRobin {
		return fmt.Errorf("--url-strategy %q: use round_robin", e.URLStrategy)
	}
	if len(e.URLs) == 0 {
		return errors.New("--url needs a value")
	}
	e.Users = make(Credentials, len(e.URLs))
	seen := map[string]bool{}
	for i, raw := range e.URLs {
		u, user, err := NormalizeBaseURL(raw)
		if err != nil {
			return fmt.Errorf("--url: %w", err)
		}
		if seen[u] {
			// Twice the same server would double its share, which no
			// strategy here means; say so rather than skew the load.
			return fmt.Errorf("--url %s is given twice", u)
		}
		seen[u] = true
		e.URLs[i], e.Users[i] = u, user
	}
	return nil
}

// NormalizeBaseURL accepts host:port or a URL and returns
// scheme://host[:port][/path] without a trailing slash, and apart from it
// the URL's credentials (user:password@), which must never be shown.
func NormalizeBaseURL(raw string) (string, *url.Userinfo, error) {
	s := strings.TrimSpace(raw)
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		// url.Error repeats the URL, password included.
		return "", nil, fmt.Errorf("%q is not a valid URL", redactURL(raw))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", nil, fmt.Errorf("%q: scheme must be http or https", u.Redacted())
	}
	if u.Host == "" {
		return "", nil, fmt.Errorf("%q has no host", u.Redacted())
	}
	user := u.User
	u.User = nil
	return strings.TrimRight(u.String(), "/"), user, nil
}

// JoinURL appends an API path to a base URL, without doubling a version
// prefix the base already has: http://h/v1 + /v1/chat/completions is
// http://h/v1/chat/completions, and a base that already ends with the
// whole path is used as it is.
func JoinURL(base, path string) string {
	base = strings.TrimRight(base, "/")
	u, err := url.Parse(base)
	if err != nil || path == "" {
		return base + path
	}
	switch {
	case strings.HasSuffix(u.Path, path):
		return base
	case strings.HasPrefix(path, "/v1/") && strings.HasSuffix(u.Path, "/v1"):
		return base + strings.TrimPrefix(path, "/v1")
	}
	return base + path
}

// CommandLine joins arguments into a shell-like command line, quoting those
// that need it.
func CommandLine(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\"'$`\\") {
			q[i] = strconvQuote(a)
		} else {
			q[i] = a
		}
	}
	return strings.Join(q, " ")
}

func strconvQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// checkWarmupShape refuses a warm-up load that cannot run or has no
// warm-up to shape, each in one line.
func (p *Profile) checkWarmupShape() error {
	l, w := &p.Loadgen, &p.Loadgen.WarmupShape
	switch {
	case w.Concurrency < 0 || p.set["warmup-concurrency"] && w.Concurrency == 0:
		return fmt.Errorf("--warmup-concurrency %d: it must be at least 1", w.Concurrency)
	case w.RequestRate < 0 || p.set["warmup-request-rate"] && w.RequestRate == 0:
		return fmt.Errorf("--warmup-request-rate %g: it must be above 0 requests per second", w.RequestRate)
	case w.ConcurrencyRamp < 0 || w.RateRamp < 0 || w.PrefillRamp < 0:
		return errors.New("--warmup-concurrency-ramp-duration, --warmup-request-rate-ramp-duration and --warmup-prefill-concurrency-ramp-duration cannot be negative")
	}
	switch w.ArrivalPattern {
	case "", RateConstant, RatePoisson, RateGamma:
	default:
		return fmt.Errorf("--warmup-arrival-pattern %q: use constant, poisson or gamma", w.ArrivalPattern)
	}
	if w.Given() && l.WarmupRequestCount == 0 && l.WarmupDuration == 0 {
		return errors.New("--warmup-concurrency, --warmup-request-rate, --warmup-arrival-pattern and the warm-up ramps shape the warm-up: add --warmup-request-count or --warmup-duration")
	}
	rated := w.RequestRate > 0 || w.RequestRate == 0 && l.RequestRate > 0
	if (w.ArrivalPattern != "" || w.RateRamp > 0) && !rated {
		return errors.New("--warmup-arrival-pattern and --warmup-request-rate-ramp-duration shape a warm-up sent at a rate: add --warmup-request-rate (or --request-rate)")
	}
	w.ConcurrencyRampSec, w.RateRampSec, w.PrefillRampSec = w.ConcurrencyRamp.Seconds(), w.RateRamp.Seconds(), w.PrefillRamp.Seconds()
	return nil
}

// checkPrefillConcurrency refuses a prefill cap that cannot work, each in
// one line: it is freed by the first token, which only a stream shows.
func (p *Profile) checkPrefillConcurrency() error {
	l, w := &p.Loadgen, &p.Loadgen.WarmupShape
	switch {
	case l.PrefillConcurrency < 0 || p.set["prefill-concurrency"] && l.PrefillConcurrency == 0:
		return fmt.Errorf("--prefill-concurrency %d: it must be at least 1", l.PrefillConcurrency)
	case w.PrefillConcurrency < 0 || p.set["warmup-prefill-concurrency"] && w.PrefillConcurrency == 0:
		return fmt.Errorf("--warmup-prefill-concurrency %d: it must be at least 1", w.PrefillConcurrency)
	case l.PrefillRamp < 0:
		return errors.New("--prefill-concurrency-ramp-duration cannot be negative")
	case l.PrefillRamp > 0 && l.PrefillConcurrency == 0:
		return errors.New("--prefill-concurrency-ramp-duration ramps --prefill-concurrency; give one")
	case w.PrefillRamp > 0 && l.PrefillConcurrency == 0 && w.PrefillConcurrency == 0:
		return errors.New("--warmup-prefill-concurrency-ramp-duration ramps a prefill cap; give --warmup-prefill-concurrency or --prefill-concurrency")
	case (l.PrefillConcurrency > 0 || w.PrefillConcurrency > 0) && !p.Endpoint.Streaming:
		return errors.New("--prefill-concurrency frees a slot at a request's first token, which only a stream shows: add --streaming")
	case l.PrefillConcurrency > 0 && p.set["concurrency"] && l.PrefillConcurrency > l.Concurrency:
		return fmt.Errorf("--prefill-concurrency %d is above --concurrency %d: a request in prefill is in flight, so at most %d can be", l.PrefillConcurrency, l.Concurrency, l.Concurrency)
	}
	l.PrefillRampSec = l.PrefillRamp.Seconds()
	return nil
}

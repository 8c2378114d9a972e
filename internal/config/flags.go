package config

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/llmbench/llmbench/internal/dataset"
)

// Flags binds command-line flags to a Profile, under AIPerf's names and
// aliases, so `aiperf profile` command lines work unchanged. It also keeps
// what --help says of each flag (help.go).
type Flags struct {
	fs    *flag.FlagSet
	p     *Profile
	group string
	help  []*flagHelp
}

// BindFlags registers the profile flags on fs, writing into p (which should
// hold Default()). They are registered in AIPerf's groups and order, which
// --help follows.
func BindFlags(fs *flag.FlagSet, p *Profile) *Flags {
	f := &Flags{fs: fs, p: p}
	p.set = map[string]bool{}
	p.Sweep.Lists = map[string][]string{}
	e, in, l := &p.Endpoint, &p.Input, &p.Loadgen

	f.section("Endpoint")
	f.vars((*listValue)(&e.ModelNames), "Model name(s) to benchmark; comma-separated or repeated (required).", "model", "m", "model-names")
	f.vars((*stringValue)(&e.ModelSelection), "How a request's model is chosen among several: round_robin or random.", "model-selection-strategy")
	f.vars((*stringValue)(&e.Custom), "Custom endpoint path that replaces the type's own (e.g. /v1/custom).", "endpoint", "custom-endpoint")
	f.vars((*stringValue)(&e.Type), "Endpoint type: "+strings.Join(kindNames(), ", ")+".", "endpoint-type")
	f.vars(boolValue{&e.Streaming}, "Use the streaming API (Server-Sent Events); needed for time to first token and inter-token latency.", "streaming")
	f.vars(&urlList{list: &e.URLs}, "Base URL of the server (host:port or http://host:port); several (repeated or space-separated) share the load.", "url", "u")
	f.vars((*stringValue)(&e.URLStrategy), "How a request's URL is chosen among several --url: round_robin.", "url-strategy")
	f.vars((*secondsValue)(&e.RequestTimeout), "Timeout for each request, in seconds.", "request-timeout-seconds")
	f.vars((*secondsValue)(&e.WaitForModel), "Seconds to wait for the server to be ready before benchmarking (0: do not wait).", "wait-for-model-timeout")
	f.vars((*stringValue)(&e.WaitMode), "Readiness probe: models (GET /v1/models), inference (a one-token request) or both.", "wait-for-model-mode")
	f.vars((*secondsValue)(&e.WaitInterval), "Seconds between readiness probes.", "wait-for-model-interval")
	f.vars((*stringValue)(&e.APIKey), "API key sent as 'Authorization: Bearer <key>' (also "+EnvAPIKey+", which keeps it off the command line); never written to artifacts.", "api-key")
	f.vars(boolValue{&p.Input.Media.DownloadVideoContent}, "video_generation: also download the finished video, inside the request's time.", "download-video-content")
	f.vars((*stringValue)(&p.Input.Media.RequestContentType), "Body encoding, decided by the endpoint type (multipart/form-data for image_edit, video_generation and audio_transcription, else application/json): given, it must match.", "request-content-type")
	f.vars(boolValue{&e.LegacyMaxTokens}, "Send chat's output limit as max_tokens instead of max_completion_tokens.", "use-legacy-max-tokens")
	f.vars(boolValue{&p.Tokenizer.UseServerTokenCount}, "Use the server's usage token counts for ISL/OSL instead of the client tokenizer (streams then ask for usage with stream_options.include_usage).", "use-server-token-count")
	f.vars((*stringValue)(&e.HTTPClient), "HTTP transport: lean (llmbench's HTTP/1.1, least client CPU) or net/http (Go's standard one; proxies always use it).", "http-client")
	f.vars((*stringValue)(&e.ServerTimings), "Per-request server timings (queue, prefill, decode) joined to each record: auto (ask in the forms vLLM, llama.cpp, SGLang, TGI and NIM accept, read whatever comes back; a stream then asks for its usage chunk) or off (AIPerf's exact request bodies).", "server-timings")
	f.vars(boolValue{&e.ResetKVCache}, "POST a prefix/KV-cache reset to every server before each run (each trial, sweep cell and search probe), so no run finds the previous one's prompts cached; a failed reset stops the run.", "reset-kv-cache")
	f.vars((*stringValue)(&e.ResetKVCachePath), "Path of the reset POST (/flush_cache for SGLang); setting it turns --reset-kv-cache on.", "reset-kv-cache-path")
	f.vars((*secondsValue)(&e.ResetKVCacheTimeout), "Timeout of the reset POST, seconds; setting it turns --reset-kv-cache on.", "reset-kv-cache-timeout-seconds")
	f.vars(boolValue{&e.Mock}, "Benchmark the built-in simulated server, started in-process, instead of --url (its flags: --mock-*, in --help-all).", "mock")

	f.section("Tokenizer")
	f.vars((*stringValue)(&p.Tokenizer.Name), "Tokenizer that counts prompt and response tokens: a Hugging Face model id (from the local cache, else downloaded), a tokenizer.json file or its folder, builtin (tiktoken o200k_base, offline) or llmbench:words.", "tokenizer")
	f.vars((*stringValue)(&p.Tokenizer.Revision), "Hub revision of the tokenizer: a branch, tag or commit.", "tokenizer-revision")
	f.vars(boolValue{&p.Tokenizer.TrustRemoteCode}, "Accepted for AIPerf compatibility; llmbench runs no tokenizer code from the Hub, only tokenizer.json.", "tokenizer-trust-remote-code")

	f.section("Input")
	f.vars((*appendValue)(&e.ExtraInputs), "Extra payload fields 'name:value' (value parsed as JSON when it is JSON) or a JSON object of fields; several after one flag (temperature:0 max_tokens:4096), or repeated.", "extra-inputs")
	f.vars((*appendValue)(&e.Headers), "Extra request header 'Name:Value'; repeatable.", "header", "H")
	f.vars((*stringValue)(&in.File), "Dataset file (JSONL) to send instead of synthetic prompts; a directory of pools for random_pool.", "input-file")
	f.vars((*stringValue)(&in.CustomDatasetType), "Format of --input-file: "+strings.Join(dataset.Formats(), ", ")+".", "custom-dataset-type")
	f.bindPublicDatasetFlags()
	f.vars((*stringValue)(&in.SamplingStrategy), "Order the conversations are sent in: sequential, random (with replacement) or shuffle.", "dataset-sampling-strategy")
	f.vars(&seedValue{&in.RandomSeed}, "Seed for synthetic data and request timing, for reproducible runs.", "random-seed")

	f.section("Fixed Schedule")
	f.vars(boolValue{&in.FixedSchedule}, "Send each request at its timestamp in --input-file.", "fixed-schedule")
	f.vars(boolValue{&in.NoFixedSchedule}, "Ignore the timestamps of a trace file and send it by --concurrency or --request-rate.", "no-fixed-schedule")
	f.vars(boolValue{&in.FixedScheduleAuto}, "Shift the fixed schedule so that its first timestamp is sent at once.", "fixed-schedule-auto-offset")
	f.vars(&optionalFloat{&in.FixedScheduleStart}, "Start the fixed schedule at this timestamp (ms); earlier requests are left out.", "fixed-schedule-start-offset")
	f.vars(&optionalFloat{&in.FixedScheduleEnd}, "End the fixed schedule at this timestamp (ms); later requests are left out.", "fixed-schedule-end-offset")

	f.section("Goodput")
	f.vars((*stringValue)(&p.Goodput), "Service-level objectives for goodput: space-separated metric_tag:value in display units, e.g. 'time_to_first_token:200 inter_token_latency:10'; a request is good when every one holds.", "goodput")

	f.section("Conversation Input")
	f.sweepVars((*intValue)(&in.NumDatasetEntries), "Number of distinct synthetic prompts; requests cycle through them.", "num-dataset-entries", "num-prompts", "conversation-num", "num-conversations", "num-sessions")
	cv := &in.Conversation
	f.sweepVars((*floatValue)(&cv.TurnMean), "Mean number of turns of a synthetic conversation.", "conversation-turn-mean", "session-turns-mean")
	f.vars((*floatValue)(&cv.TurnStddev), "Standard deviation of the number of turns.", "conversation-turn-stddev", "session-turns-stddev")
	f.vars((*floatValue)(&cv.DelayMean), "Mean delay before each later turn, ms (the user's think time).", "conversation-turn-delay-mean", "session-turn-delay-mean")
	f.vars((*floatValue)(&cv.DelayStddev), "Standard deviation of the turn delay, ms.", "conversation-turn-delay-stddev", "session-turn-delay-stddev")
	f.vars((*floatValue)(&cv.DelayRatio), "Factor applied to every turn delay, the file's too.", "conversation-turn-delay-ratio", "session-delay-ratio")

	f.section("Prefix Prompt")
	f.vars((*intValue)(&in.PrefixPrompt.PoolSize), "Number of distinct prefixes; each conversation's first prompt starts with one (for prefix-cache tests).", "prompt-prefix-pool-size", "prefix-prompt-pool-size", "num-prefix-prompts")
	f.vars((*intValue)(&in.PrefixPrompt.Length), "Tokens in each prefix.", "prompt-prefix-length", "prefix-prompt-length")
	f.vars((*intValue)(&in.SharedSystemPrompt), "Tokens of a system prompt every conversation shares.", "shared-system-prompt-length")

	f.section("Input Sequence Length (ISL)")
	f.sweepVars((*floatValue)(&in.Prompt.InputTokens.Mean), "Mean synthetic prompt length in tokens.", "synthetic-input-tokens-mean", "prompt-input-tokens-mean", "isl")
	f.sweepVars((*floatValue)(&in.Prompt.InputTokens.Stddev), "Standard deviation of the synthetic prompt length.", "synthetic-input-tokens-stddev", "prompt-input-tokens-stddev", "isl-stddev")
	f.vars((*intValue)(&in.Prompt.BlockSize), "Tokens per trace hash block (the hash_ids of mooncake_trace and bailian_trace).", "prompt-input-tokens-block-size", "synthetic-input-tokens-block-size", "isl-block-size")

	f.section("Output Sequence Length (OSL)")
	f.sweepVars((*floatValue)(&in.Prompt.OutputTokens.Mean), "Mean output length in tokens, sent as max_completion_tokens (chat) or max_tokens (0: not sent).", "output-tokens-mean", "prompt-output-tokens-mean", "osl")
	f.sweepVars((*floatValue)(&in.Prompt.OutputTokens.Stddev), "Standard deviation of the output length.", "output-tokens-stddev", "prompt-output-tokens-stddev", "osl-stddev")

	f.bindMediaFlags()
	f.bindSynthesisFlags()

	f.section("Load Generator")
	f.sweepVars((*secondsValue)(&l.BenchmarkDuration), "Measure for this many seconds instead of a request count.", "benchmark-duration")
	f.vars((*secondsValue)(&l.GracePeriod), "Seconds to wait for in-flight responses after --benchmark-duration.", "benchmark-grace-period")
	f.sweepVars((*intValue)(&l.Concurrency), "Requests kept in flight (with --request-rate: the most in flight).", "concurrency")
	f.sweepVars((*floatValue)(&l.RequestRate), "Requests per second to send.", "request-rate")
	f.vars((*stringValue)(&l.RequestRateMode), "Arrival process with --request-rate: constant, poisson or gamma.", "arrival-pattern", "request-rate-mode")
	f.vars((*floatValue)(&l.ArrivalSmoothness), "Shape of gamma arrivals: 1 is Poisson, larger more regular, smaller burstier.", "arrival-smoothness", "vllm-burstiness")
	f.sweepVars((*intValue)(&l.RequestCount), "Number of requests to measure.", "request-count", "num-requests")
	f.vars((*secondsValue)(&l.ConcurrencyRamp), "Seconds to ramp the concurrency from 1 to --concurrency.", "concurrency-ramp-duration")
	f.vars((*secondsValue)(&l.RateRamp), "Seconds to ramp the request rate up to --request-rate.", "request-rate-ramp-duration")
	f.vars((*intValue)(&l.PrefillConcurrency), "Most requests waiting for their first token at once (needs --streaming).", "prefill-concurrency")
	f.vars((*secondsValue)(&l.PrefillRamp), "Seconds to ramp the prefill concurrency from 1 to --prefill-concurrency.", "prefill-concurrency-ramp-duration")

	f.section("Warmup")
	f.vars((*intValue)(&l.WarmupRequestCount), "Requests (sessions, for multi-turn) sent before measuring; excluded from metrics.", "warmup-request-count", "num-warmup-requests", "num-warmup-sessions")
	f.vars((*secondsValue)(&l.WarmupDuration), "Longest duration of the warm-up, seconds (alone: warm up for that long).", "warmup-duration")
	f.vars((*intValue)(&l.WarmupShape.Concurrency), "Warm-up concurrency; without it, --concurrency.", "warmup-concurrency")
	f.vars((*floatValue)(&l.WarmupShape.RequestRate), "Warm-up request rate; without it, --request-rate.", "warmup-request-rate")
	f.vars((*stringValue)(&l.WarmupShape.ArrivalPattern), "Warm-up arrival pattern, constant, poisson or gamma; without it, --arrival-pattern.", "warmup-arrival-pattern")
	f.vars((*secondsValue)(&l.WarmupShape.ConcurrencyRamp), "Warm-up concurrency ramp, seconds; without it, --concurrency-ramp-duration.", "warmup-concurrency-ramp-duration")
	f.vars((*secondsValue)(&l.WarmupShape.RateRamp), "Warm-up request-rate ramp, seconds; without it, --request-rate-ramp-duration.", "warmup-request-rate-ramp-duration")
	f.vars((*intValue)(&l.WarmupShape.PrefillConcurrency), "Warm-up prefill concurrency; without it, --prefill-concurrency.", "warmup-prefill-concurrency")
	f.vars((*secondsValue)(&l.WarmupShape.PrefillRamp), "Warm-up prefill-concurrency ramp, seconds; without it, --prefill-concurrency-ramp-duration.", "warmup-prefill-concurrency-ramp-duration")

	f.section("Request Cancellation")
	f.vars((*floatValue)(&l.CancellationRate), "Percentage of requests to cancel (0-100).", "request-cancellation-rate")
	f.vars((*secondsValue)(&l.CancellationDelay), "Seconds after a request is fully sent before it is cancelled.", "request-cancellation-delay")

	f.section("Output")
	f.vars((*stringValue)(&p.Output.ArtifactDir), "Directory for the artifacts.", "artifact-dir", "output-artifact-dir")
	f.vars((*stringValue)(&p.Output.ExportPrefix), "Prefix of the export files (an extension is dropped).", "profile-export-prefix", "profile-export-file")
	f.vars((*floatValue)(&p.ServerMetrics.SliceSeconds), "Time-slice length in seconds for the client and server metrics statistics (0: none).", "slice-duration")
	f.vars(boolValue{&p.Output.Overwrite}, "Replace a previous run's files in the artifact directory; without it they are moved to previous_<time>/ there first.", "overwrite")
	f.vars((*stringValue)(&p.Output.ExportLevel), "Which files: summary (the aggregate JSON and CSV, no per-request file: for long runs), records (also profile_export.jsonl) or raw (also profile_export_raw.jsonl, each request's body and response as sent and received).", "export-level", "profile-export-level")
	f.vars((*byteSizeValue)(&p.Output.RecordsMemoryBudget), "Memory the per-request values kept for the exact statistics may use (512MiB, 2GB, …); beyond it they go to a temporary folder under the artifact directory, removed at the end.", "records-memory-budget")
	f.vars((*stringValue)(&p.Output.FailOnVerdict), "Exit with code 3 when the run verdict is this bad or worse: suspect or invalid (unset: the verdict never changes the exit code).", "fail-on-verdict")

	sm := &p.ServerMetrics
	f.section("Server Metrics")
	f.vars((*appendValue)(&sm.URLs), "Extra Prometheus endpoints to scrape besides --url's /metrics (host:port, base URL or full metrics URL); several may follow one flag.", "server-metrics")
	f.vars(boolValue{&sm.Disabled}, "Do not collect server metrics.", "no-server-metrics")
	f.vars(&replaceList{list: &sm.Formats}, "Server metrics export formats: json csv jsonl parquet.", "server-metrics-formats")
	f.vars((*stringValue)(&sm.HistogramEstimator), "How server histograms' p*_estimate are computed: interval-fit (fits each bucket's mean to every scrape interval), aiperf (AIPerf's polynomial estimator, for comparing with AIPerf runs) or linear (Prometheus' histogram_quantile).", "histogram-estimator", "server-metrics-histogram-estimator")
	f.vars((*stringValue)(&sm.CounterResets), "How a server counter or histogram that went down (a restart) is counted: increase (across the reset, as Prometheus' increase()) or clamp (AIPerf's rule: the total clamped at 0, losing what came before), to reproduce AIPerf's numbers.", "counter-resets", "server-metrics-counter-resets")

	gt := &p.GPUTelemetry
	f.section("GPU Telemetry")
	f.vars(gpuTelemetryItems{gt}, "Show GPU telemetry after the run; optionally with items: DCGM exporter URLs (host:port or http://…/metrics), a custom DCGM metrics .csv file, dashboard. Without it, telemetry is still collected from the usual DCGM exporters (localhost:9400 and :9401) when they answer, and exported.", "gpu-telemetry")
	f.vars(boolValue{&gt.Disabled}, "Do not collect GPU telemetry.", "no-gpu-telemetry")
	f.vars((*stringValue)(&gt.CounterWindow), "How GPU counters (energy) are measured over the profiling window: exact (read at its start and end, counted across resets) or aiperf (AIPerf's: last reading up to 0.666 s after the end minus the last before the start, clamped at 0).", "gpu-counter-window")

	sh := &p.Shard
	f.section("Shards")
	f.vars((*intValue)(&sh.Count), "Split the run over this many processes or machines; each computes the same plan from --random-seed and sends its part (also "+EnvShardCount+" or SLURM_NTASKS). Merge their folders with 'llmbench merge'.", "shard-count")
	f.vars((*intValue)(&sh.Index), "This shard's number, 0 to --shard-count - 1 (also "+EnvShardIndex+", Kubernetes' JOB_COMPLETION_INDEX or SLURM_PROCID); it writes into <artifact-dir>/shard_NNNN.", "shard-index")
	f.vars((*stringValue)(&sh.StartAtText), "Start the schedule at this instant: RFC 3339 (2026-11-24T10:00:00Z) or Unix nanoseconds; every shard given the same instant starts together, a late one says by how much.", "start-at")
	f.vars((*stringValue)(&sh.ScrapeText), "Which shards scrape server metrics and GPU telemetry: shard indexes separated by commas, or all.", "server-metrics-shards")

	f.section("UI")
	f.vars((*stringValue)(&p.Output.UIType), "Console output: simple (progress and final table) or none.", "ui-type", "ui")

	mr := &p.MultiRun
	f.section("Multi-Run")
	f.vars((*intValue)(&mr.NumRuns), "Number of profile runs, for confidence intervals across them (1-10); results in profile_runs/run_0001/…, the aggregate in aggregate/.", "num-profile-runs")
	f.vars((*secondsValue)(&mr.Cooldown), "Seconds to wait between profile runs.", "profile-run-cooldown-seconds")
	f.vars((*floatValue)(&mr.ConfidenceLevel), "Confidence level of the intervals across runs.", "confidence-level")
	f.bools(&mr.DisableWarmupAfterFirst, "Run the warm-up only before the first profile run.", "profile-run-disable-warmup-after-first")
	f.bools(&mr.ConsistentSeed, "Give every profile run the same random seed, so each sends the same workload.", "set-consistent-seed")
	f.bindSweepFlags()

	f.section("Workers")
	f.vars((*intValue)(&p.WorkersMax), "AIPerf's cap on its worker processes; llmbench sends every request from one process (no workers to cap), so it changes nothing and says so.", "workers-max", "max-workers")
	return f
}

// bools registers a boolean flag and its --no- negation, as AIPerf has
// them; --help lists the negation as an alias.
func (f *Flags) bools(b *bool, usage, name string) {
	f.vars(boolValue{b}, usage, name)
	v := trackedValue{Value: negatedBool{b}, name: "no-" + name, set: f.p.set}
	f.fs.Var(v, "no-"+name, "negation of --"+name)
	h := f.help[len(f.help)-1]
	h.names = append(h.names, "no-"+name)
}

// negatedBool sets *b to the opposite of the value given (--no-x means x=false).
type negatedBool struct{ b *bool }

func (n negatedBool) Set(v string) error {
	x, err := strconv.ParseBool(v)
	if err != nil {
		return fmt.Errorf("%q is not true or false", v)
	}
	*n.b = !x
	return nil
}
func (n negatedBool) String() string {
	if n.b == nil {
		return "false"
	}
	return strconv.FormatBool(!*n.b)
}
func (n negatedBool) IsBoolFlag() bool { return true }

// ListFlags are the flags that take several space-separated values
// (--server-metrics URL URL …); ExpandListArgs rewrites them for package flag.
var ListFlags = []string{"server-metrics", "server-metrics-formats", "url", "u", "gpu-telemetry", "extra-inputs"}

// ExpandListArgs rewrites "--flag a b c" into "--flag=a --flag=b --flag=c"
// for the given multi-value flags: values run until the next argument that
// starts with "-".
func ExpandListArgs(args []string, names []string) []string {
	multi := map[string]bool{}
	for _, n := range names {
		multi["-"+n], multi["--"+n] = true, true
	}
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		if !multi[a] {
			out = append(out, a)
			continue
		}
		n := 0
		for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			i++
			out = append(out, a+"="+args[i])
			n++
		}
		if n == 0 {
			out = append(out, a) // let flag report the missing value
		}
	}
	return out
}

// replaceList is a list whose first Set replaces the default; later Sets
// (repeats, or the values ExpandListArgs split out) append.
type replaceList struct {
	list *[]string
	set  bool
}

func (r *replaceList) Set(v string) error {
	if !r.set {
		*r.list, r.set = nil, true
	}
	for _, s := range strings.FieldsFunc(v, func(c rune) bool { return c == ',' || c == ' ' }) {
		*r.list = append(*r.list, strings.ToLower(s))
	}
	return nil
}

func (r *replaceList) String() string {
	if r.list == nil {
		return ""
	}
	return strings.Join(*r.list, " ")
}

// urlList is --url: the first value replaces the default, later ones
// (repeats, or the values ExpandListArgs split out) append, as typed.
type urlList struct {
	list *[]string
	set  bool
}

func (u *urlList) Set(v string) error {
	if !u.set {
		*u.list, u.set = nil, true
	}
	*u.list = append(*u.list, strings.TrimSpace(v))
	return nil
}

func (u *urlList) String() string {
	if u.list == nil {
		return ""
	}
	return strings.Join(*u.list, " ")
}

// vars registers one value under several names; the first is the canonical
// one, the rest are listed as its aliases. Setting any of them marks the
// canonical name as given. Its help is filed under the current section,
// with the value it holds now (Default()'s) as its default.
func (f *Flags) vars(v flag.Value, usage string, names ...string) {
	f.help = append(f.help, &flagHelp{names: names, usage: usage, group: f.group, value: v, def: v.String()})
	v = trackedValue{Value: v, name: names[0], set: f.p.set}
	f.fs.Var(v, names[0], usage)
	for _, alias := range names[1:] {
		f.fs.Var(v, alias, "alias of --"+names[0])
	}
}

// sweepVars registers a flag that also takes a comma list, which makes
// the profile a sweep over its values (config.Sweep).
func (f *Flags) sweepVars(v flag.Value, usage string, names ...string) {
	f.vars(sweepable{Value: v, name: names[0], lists: f.p.Sweep.Lists}, usage+" A comma list (1,4,16) sweeps it (see Parameter Sweep).", names...)
}

// trackedValue records that its flag was given.
type trackedValue struct {
	flag.Value
	name string
	set  map[string]bool
}

func (t trackedValue) Set(v string) error {
	t.set[t.name] = true
	return t.Value.Set(v)
}

func (t trackedValue) String() string {
	if t.Value == nil {
		return ""
	}
	return t.Value.String()
}

// IsBoolFlag passes the wrapped value's answer on, so --streaming needs no value.
func (t trackedValue) IsBoolFlag() bool {
	b, ok := t.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

type stringValue string

func (s *stringValue) Set(v string) error { *s = stringValue(v); return nil }
func (s *stringValue) String() string     { return string(*s) }

type intValue int

func (i *intValue) Set(v string) error {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return fmt.Errorf("%q is not a whole number", v)
	}
	*i = intValue(n)
	return nil
}
func (i *intValue) String() string { return strconv.Itoa(int(*i)) }

type floatValue float64

func (x *floatValue) Set(v string) error {
	n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil {
		return fmt.Errorf("%q is not a number", v)
	}
	*x = floatValue(n)
	return nil
}
func (x *floatValue) String() string { return strconv.FormatFloat(float64(*x), 'g', -1, 64) }

type secondsValue time.Duration

func (d *secondsValue) Set(v string) error {
	n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil {
		return fmt.Errorf("%q is not a number of seconds", v)
	}
	*d = secondsValue(time.Duration(n * float64(time.Second)))
	return nil
}
func (d *secondsValue) String() string {
	if d == nil {
		return "0"
	}
	return strconv.FormatFloat(time.Duration(*d).Seconds(), 'g', -1, 64)
}

type boolValue struct{ b *bool }

func (b boolValue) Set(v string) error {
	x, err := strconv.ParseBool(v)
	if err != nil {
		return fmt.Errorf("%q is not true or false", v)
	}
	*b.b = x
	return nil
}
func (b boolValue) String() string {
	if b.b == nil {
		return "false"
	}
	return strconv.FormatBool(*b.b)
}
func (b boolValue) IsBoolFlag() bool { return true }

// listValue takes comma-separated values; repeating the flag appends.
type listValue []string

func (l *listValue) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}
func (l *listValue) String() string { return strings.Join(*l, ",") }

// appendValue appends each occurrence whole (header values may hold commas).
type appendValue []string

func (a *appendValue) Set(v string) error { *a = append(*a, v); return nil }
func (a *appendValue) String() string     { return strings.Join(*a, " ") }

// optionalFloat is a number that may be absent.
type optionalFloat struct{ p **float64 }

func (o *optionalFloat) Set(v string) error {
	x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil {
		return fmt.Errorf("%q is not a number", v)
	}
	*o.p = &x
	return nil
}

func (o *optionalFloat) String() string {
	if o.p == nil || *o.p == nil {
		return ""
	}
	return strconv.FormatFloat(**o.p, 'g', -1, 64)
}

type seedValue struct{ p **int64 }

func (s *seedValue) Set(v string) error {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return fmt.Errorf("%q is not a whole number", v)
	}
	*s.p = &n
	return nil
}
func (s *seedValue) String() string {
	if s.p == nil || *s.p == nil {
		return ""
	}
	return strconv.FormatInt(**s.p, 10)
}

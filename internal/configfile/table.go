package configfile

import (
	"slices"
	"strings"
	"sync"
)

// kind is how a one-value key is read.
type kind int

const (
	kNone     kind = iota
	kString        // any single value
	kInt           // a whole number
	kFloat         // a number
	kSeconds       // seconds, or a duration string ("5m")
	kBool          // --name or --name=false
	kTrueOnly      // --name when true; false leaves the default
)

// row is one key of AIPerf's schema and what llmbench makes of it.
type row struct {
	path string // snake_case, from the file's root
	flag string // the flag a one-value key sets
	kind kind
	do   func(b *builder, c cursor) error // a value with structure
	only string                           // the dataset type or phase type the key belongs to
	skip bool                             // read elsewhere (a phase's name)
	// refuse says why llmbench cannot do what the key asks (unsupported:
	// without a why); def is AIPerf's default, accepted as asking nothing.
	refuse      string
	unsupported bool
	def         string
	rank        int
}

func flagRow(path, flag string, k kind) *row                  { return &row{path: path, flag: flag, kind: k} }
func doRow(path string, do func(*builder, cursor) error) *row { return &row{path: path, do: do} }
func skipRow(path string) *row                                { return &row{path: path, skip: true} }
func noRow(path, why, def string) *row {
	return &row{path: path, refuse: why, unsupported: why == "", def: def}
}
func (r *row) in(only string) *row { r.only = only; return r }

// schema indexes the rows.
type schema struct {
	rows     []*row
	byPath   map[string]*row
	sections map[string]bool // paths with rows under them
}

// keysUnder are the keys a section knows.
func (s *schema) keysUnder(pattern string) []string {
	var out []string
	prefix := pattern + "."
	if pattern == "" {
		prefix = ""
	}
	for _, r := range s.rows {
		if rest, ok := strings.CutPrefix(r.path, prefix); ok {
			key, _, _ := strings.Cut(rest, ".")
			if !slices.Contains(out, key) {
				out = append(out, key)
			}
		}
	}
	return out
}

var (
	tableOnce sync.Once
	tableRows *schema
)

// table is the schema: every AIPerf key llmbench reads or refuses, in the
// order the flags are written.
func table() *schema {
	tableOnce.Do(func() { tableRows = buildTable() })
	return tableRows
}

func buildTable() *schema {
	const (
		ep = "benchmark.endpoint."
		ds = "benchmark.dataset."
		pp = "benchmark.phases.profiling."
		wp = "benchmark.phases.warmup."
		ar = "benchmark.artifacts."
	)
	rows := []*row{
		doRow("schema_version", schemaVersion),
		skipRow("variables"),
		skipRow("benchmark"), // read first: the sweep's paths need its names
		doRow("benchmark.model", models),
		doRow("benchmark.models", models),

		doRow(ep+"url", urls),
		doRow(ep+"urls", urls),
		flagRow(ep+"type", "endpoint-type", kString),
		flagRow(ep+"path", "endpoint", kString),
		flagRow(ep+"streaming", "streaming", kBool),
		flagRow(ep+"api_key", "api-key", kString),
		flagRow(ep+"timeout", "request-timeout-seconds", kFloat),
		flagRow(ep+"url_strategy", "url-strategy", kString),
		doRow(ep+"headers", headers),
		doRow(ep+"extra", extra),
		doRow(ep+"template", template),
		flagRow(ep+"wait_for_model_timeout", "wait-for-model-timeout", kFloat),
		flagRow(ep+"wait_for_model_mode", "wait-for-model-mode", kString),
		flagRow(ep+"wait_for_model_interval", "wait-for-model-interval", kFloat),
		flagRow(ep+"use_legacy_max_tokens", "use-legacy-max-tokens", kBool),
		flagRow(ep+"use_server_token_count", "use-server-token-count", kBool),
		flagRow(ep+"download_video_content", "download-video-content", kBool),
		flagRow(ep+"request_content_type", "request-content-type", kString),
		doRow(ep+"reset_kv_cache", resetKVCache),
		noRow(ep+"transport", "it speaks HTTP; --http-client picks lean or net/http", "http"),
		noRow(ep+"connection_reuse", "it pools connections", "pooled"),
		noRow(ep+"http2", "HTTP/1.1 only", "false"),
		noRow(ep+"ssl_verify", "certificates are always verified", "true"),
		noRow(ep+"uds_path", "TCP only", ""),
		noRow(ep+"connection_limit", "", "2500"),
		noRow(ep+"keepalive_timeout", "", "300"),
		noRow(ep+"session_header", "", ""),
		noRow(ep+"uuid_and_strip", "", "false"),
		noRow(ep+"server_profiler", "no profiler hooks; --reset-kv-cache is the one hook", "false"),

		doRow("benchmark.tokenizer", tokenizer),
		flagRow("benchmark.tokenizer.name", "tokenizer", kString),
		flagRow("benchmark.tokenizer.revision", "tokenizer-revision", kString),
		flagRow("benchmark.tokenizer.trust_remote_code", "tokenizer-trust-remote-code", kBool),
		noRow("benchmark.tokenizer.apply_chat_template", "prompts are counted as sent", "false"),

		doRow("benchmark.dataset", dataset),
		doRow("benchmark.datasets", datasets),
		skipRow(ds + "name"),
		skipRow(ds + "type"),
		flagRow(ds+"path", "input-file", kString).in("file"),
		doRow(ds+"records", records).in("file"),
		flagRow(ds+"format", "custom-dataset-type", kString).in("file"),
		flagRow(ds+"entries", "num-dataset-entries", kInt),
		flagRow(ds+"sampling", "dataset-sampling-strategy", kString),
		flagRow(ds+"random_seed", "random-seed", kInt),
		doRow(ds+"isl", dist("synthetic-input-tokens-mean", "synthetic-input-tokens-stddev")).in("synthetic"),
		doRow(ds+"osl", dist("output-tokens-mean", "output-tokens-stddev")),
		doRow(ds+"prompts.isl", dist("synthetic-input-tokens-mean", "synthetic-input-tokens-stddev")).in("synthetic"),
		doRow(ds+"prompts.osl", dist("output-tokens-mean", "output-tokens-stddev")).in("synthetic"),
		flagRow(ds+"prompts.block_size", "prompt-input-tokens-block-size", kInt).in("synthetic"),
		flagRow(ds+"block_size", "prompt-input-tokens-block-size", kInt).in("file"),
		flagRow(ds+"prompts.batch_size", "prompt-batch-size", kInt).in("synthetic"),
		noRow(ds+"prompts.sequence_distribution", "no ISL/OSL mixtures; sweep prompts.isl and prompts.osl with a zip sweep instead", ""),
		noRow(ds+"prompts.random_range_ratio", "ISL and OSL follow {mean, stddev}", ""),
		noRow(ds+"prompts.random_range_ratio_mode", "", "vllm"),
		noRow(ds+"prompts.corpus", "", ""),
		noRow(ds+"prompts.cache_bust", "", ""),
		flagRow(ds+"prefix_prompts.pool_size", "prompt-prefix-pool-size", kInt).in("synthetic"),
		flagRow(ds+"prefix_prompts.length", "prompt-prefix-length", kInt).in("synthetic"),
		flagRow(ds+"prefix_prompts.shared_system_length", "shared-system-prompt-length", kInt).in("synthetic"),
		noRow(ds+"prefix_prompts.user_context_length", "", ""),
		doRow(ds+"turns", dist("conversation-turn-mean", "conversation-turn-stddev")).in("synthetic"),
		doRow(ds+"turn_delay", dist("conversation-turn-delay-mean", "conversation-turn-delay-stddev")).in("synthetic"),
		flagRow(ds+"turn_delay_ratio", "conversation-turn-delay-ratio", kFloat).in("synthetic"),
		flagRow(ds+"images.batch_size", "image-batch-size", kInt).in("synthetic"),
		doRow(ds+"images.width", dist("image-width-mean", "image-width-stddev")).in("synthetic"),
		doRow(ds+"images.height", dist("image-height-mean", "image-height-stddev")).in("synthetic"),
		flagRow(ds+"images.format", "image-format", kString).in("synthetic"),
		flagRow(ds+"images.source", "image-source", kString).in("synthetic"),
		flagRow(ds+"images.source_sampling", "image-source-sampling", kString).in("synthetic"),
		flagRow(ds+"audio.batch_size", "audio-batch-size", kInt).in("synthetic"),
		doRow(ds+"audio.length", dist("audio-length-mean", "audio-length-stddev")).in("synthetic"),
		flagRow(ds+"audio.format", "audio-format", kString).in("synthetic"),
		doRow(ds+"audio.depths", commaList("audio-depths", intText)).in("synthetic"),
		doRow(ds+"audio.sample_rates", commaList("audio-sample-rates", floatText)).in("synthetic"),
		flagRow(ds+"audio.channels", "audio-num-channels", kInt).in("synthetic"),
		flagRow(ds+"video.batch_size", "video-batch-size", kInt).in("synthetic"),
		flagRow(ds+"video.duration", "video-duration", kFloat).in("synthetic"),
		flagRow(ds+"video.fps", "video-fps", kFloat).in("synthetic"),
		flagRow(ds+"video.width", "video-width", kInt).in("synthetic"),
		flagRow(ds+"video.height", "video-height", kInt).in("synthetic"),
		flagRow(ds+"video.synth_type", "video-synth-type", kString).in("synthetic"),
		flagRow(ds+"video.format", "video-format", kString).in("synthetic"),
		flagRow(ds+"video.codec", "video-codec", kString).in("synthetic"),
		flagRow(ds+"video.audio.sample_rate", "video-audio-sample-rate", kFloat).in("synthetic"),
		flagRow(ds+"video.audio.channels", "video-audio-num-channels", kInt).in("synthetic"),
		flagRow(ds+"video.audio.codec", "video-audio-codec", kString).in("synthetic"),
		flagRow(ds+"video.audio.depth", "video-audio-depth", kInt).in("synthetic"),
		doRow(ds+"rankings.passages", dist("rankings-passages-mean", "rankings-passages-stddev")).in("synthetic"),
		doRow(ds+"rankings.passage_tokens", dist("rankings-passages-prompt-token-mean", "rankings-passages-prompt-token-stddev")).in("synthetic"),
		doRow(ds+"rankings.query_tokens", dist("rankings-query-prompt-token-mean", "rankings-query-prompt-token-stddev")).in("synthetic"),
		flagRow(ds+"synthesis.speedup_ratio", "synthesis-speedup-ratio", kFloat).in("file"),
		flagRow(ds+"synthesis.prefix_len_multiplier", "synthesis-prefix-len-multiplier", kFloat).in("file"),
		flagRow(ds+"synthesis.prefix_root_multiplier", "synthesis-prefix-root-multiplier", kInt).in("file"),
		flagRow(ds+"synthesis.prompt_len_multiplier", "synthesis-prompt-len-multiplier", kFloat).in("file"),
		flagRow(ds+"synthesis.output_len_multiplier", "synthesis-output-len-multiplier", kFloat).in("file"),
		flagRow(ds+"synthesis.max_isl", "synthesis-max-isl", kInt).in("file"),
		flagRow(ds+"synthesis.max_osl", "synthesis-max-osl", kInt).in("file"),
		noRow(ds+"synthesis.allow_dataset_wrap", "", "false"),
		noRow(ds+"trace_session_sample_ratio", "", ""),
		noRow(ds+"inter_turn_delay_cap_seconds", "", ""),
		noRow(ds+"max_idle_gap_cap_seconds", "", ""),
		noRow(ds+"replay_speedup", "", ""),
		noRow(ds+"open_loop_replay", "", "true"),
		noRow(ds+"open_loop_strict", "", "false"),
		noRow(ds+"ignore_trace_delays", "", "false"),
		noRow(ds+"use_think_time_only", "", "false"),
		noRow(ds+"trace_idle_gap_cap_seconds", "", ""),
		noRow(ds+"max_context_length", "", ""),
		noRow(ds+"omit_kv_hints", "", "false"),
		noRow(ds+"allow_dataset_wrap", "", "false"),
		flagRow(ds+"dataset", "public-dataset", kString).in("public"),
		noRow(ds+"filters", "", ""),
		noRow(ds+"hf_subset", "", ""),
		noRow(ds+"hf_weka_dataset", "", ""),

		doRow("benchmark.phases", phases),
		skipRow(pp + "name"),
		skipRow(pp + "kind"),
		doRow(pp+"type", phaseType),
		doRow(pp+"exclude_from_results", mustBe("false", "a profiling phase's results are its metrics")),
		doRow(pp+"seamless", mustBe("false", "each phase waits for the previous one's requests")),
		flagRow(pp+"concurrency", "concurrency", kInt),
		flagRow(pp+"rate", "request-rate", kFloat).in("rate"),
		flagRow(pp+"smoothness", "arrival-smoothness", kFloat).in("gamma"),
		flagRow(pp+"requests", "request-count", kInt),
		flagRow(pp+"duration", "benchmark-duration", kSeconds),
		flagRow(pp+"sessions", "num-dataset-entries", kInt),
		flagRow(pp+"grace_period", "benchmark-grace-period", kSeconds),
		doRow(pp+"concurrency_ramp", ramp("concurrency-ramp-duration")),
		doRow(pp+"rate_ramp", ramp("request-rate-ramp-duration")).in("rate"),
		flagRow(pp+"prefill_concurrency", "prefill-concurrency", kInt),
		doRow(pp+"prefill_ramp", ramp("prefill-concurrency-ramp-duration")),
		doRow(pp+"cancellation", cancellation),
		doRow(pp+"auto_offset", autoOffset).in("fixed_schedule"),
		flagRow(pp+"start_offset", "fixed-schedule-start-offset", kFloat).in("fixed_schedule"),
		flagRow(pp+"end_offset", "fixed-schedule-end-offset", kFloat).in("fixed_schedule"),
		skipRow(wp + "name"),
		skipRow(wp + "kind"),
		doRow(wp+"type", phaseType),
		doRow(wp+"exclude_from_results", mustBe("true", "a warm-up is never in the results")),
		doRow(wp+"seamless", mustBe("false", "each phase waits for the previous one's requests")),
		flagRow(wp+"requests", "warmup-request-count", kInt),
		flagRow(wp+"sessions", "warmup-request-count", kInt),
		flagRow(wp+"duration", "warmup-duration", kSeconds),
		flagRow(wp+"concurrency", "warmup-concurrency", kInt),
		flagRow(wp+"rate", "warmup-request-rate", kFloat).in("rate"),
		doRow(wp+"smoothness", warmupSmoothness).in("gamma"),
		doRow(wp+"concurrency_ramp", ramp("warmup-concurrency-ramp-duration")),
		doRow(wp+"rate_ramp", ramp("warmup-request-rate-ramp-duration")).in("rate"),
		flagRow(wp+"prefill_concurrency", "warmup-prefill-concurrency", kInt),
		doRow(wp+"prefill_ramp", ramp("warmup-prefill-concurrency-ramp-duration")),
		noRow(wp+"grace_period", "the warm-up's requests are always waited for", ""),
		noRow(wp+"cancellation", "only the profiling phase cancels requests", ""),
	}
	for _, p := range []string{pp, wp} {
		for _, k := range []string{"users", "rate_series", "adaptive_scale", "timing_mode",
			"failed_request_threshold", "trajectory_start_min_ratio", "trajectory_start_max_ratio", "agentic_cache_warmup_duration",
			"agentic_warmup_grace_period"} {
			rows = append(rows, noRow(p+k, "", ""))
		}
		rows = append(rows, noRow(p+"sla", "no adaptive load control", "[]"), noRow(p+"burst_phase_starts", "", "false"))
	}
	rows = append(rows,
		doRow("benchmark.slos", slos),
		flagRow(ar+"dir", "artifact-dir", kString),
		flagRow(ar+"prefix", "profile-export-prefix", kString),
		doRow(ar+"records", exportRecords),
		doRow(ar+"summary", exportSummary),
		flagRow(ar+"slice_duration", "slice-duration", kSeconds),
		noRow(ar+"raw", "no raw request/response export", "false"),
		noRow(ar+"trace", "no HTTP trace export", "false"),
		noRow(ar+"show_trace_timing", "", "false"),
		noRow(ar+"user_files", "", "[]"),
		noRow(ar+"auto_plot", "run 'llmbench plot DIR' after the run", "false"),
		noRow(ar+"plot_required", "", "false"),
		noRow(ar+"export_outputs_json", "", "false"),
		doRow("benchmark.server_metrics.enabled", disabledUnlessTrue("no-server-metrics")),
		doRow("benchmark.server_metrics.urls", repeated("server-metrics", valued)),
		doRow("benchmark.server_metrics.formats", repeated("server-metrics-formats", valued)),
		doRow("benchmark.gpu_telemetry.enabled", disabledUnlessTrue("no-gpu-telemetry")),
		doRow("benchmark.gpu_telemetry.urls", repeated("gpu-telemetry", inlined)),
		doRow("benchmark.gpu_telemetry.mode", gpuMode),
		doRow("benchmark.gpu_telemetry.metrics_file", repeated("gpu-telemetry", inlined)),
		noRow("benchmark.gpu_telemetry.collector", "it reads DCGM exporters", "dcgm"),
		noRow("benchmark.runtime", "", ""),
		noRow("benchmark.logging", "", ""),
		noRow("benchmark.accuracy", "no accuracy benchmarks", ""),
		noRow("benchmark.otel", "", ""),
		noRow("benchmark.mlflow", "", ""),
		noRow("benchmark.wandb", "", ""),
		noRow("benchmark.network_latency", "", ""),
		noRow("benchmark.scenario", "no benchmark scenarios", ""),
		noRow("benchmark.unsafe_override", "", "false"),
		noRow("benchmark.trajectory_start_min_ratio", "", ""),
		noRow("benchmark.trajectory_start_max_ratio", "", ""),

		flagRow("random_seed", "random-seed", kInt),
		flagRow("multi_run.num_runs", "num-profile-runs", kInt),
		flagRow("multi_run.cooldown_seconds", "profile-run-cooldown-seconds", kSeconds),
		flagRow("multi_run.confidence_level", "confidence-level", kFloat),
		flagRow("multi_run.set_consistent_seed", "set-consistent-seed", kBool),
		flagRow("multi_run.disable_warmup_after_first", "profile-run-disable-warmup-after-first", kBool),
		noRow("multi_run.vary_seed_per_trial", "trials share the cell's seed (set_consistent_seed) or draw their own", "false"),
		noRow("multi_run.convergence", "no early stop of trials: set num_runs", ""),
		doRow("sweep", sweepBlock),
		skipRow("sweep.type"),
		skipRow("sweep.parameters"),
		flagRow("sweep.iteration_order", "parameter-sweep-mode", kString),
		flagRow("sweep.same_seed", "parameter-sweep-same-seed", kBool),
		flagRow("sweep.cooldown_seconds", "parameter-sweep-cooldown-seconds", kSeconds),
		noRow("sweep.sla_filters", "give them on the command line: --search-sla TAG:STAT:OP:THRESHOLD", "[]"),
		noRow("sweep.runs", "no scenario sweeps", ""),
		noRow("sweep.post_process", "", ""),
		noRow("sweep.recipe_name", "give --search-recipe on the command line", ""),
		flagRow("no_sweep_table", "no-sweep-table", kTrueOnly),
		noRow("plot", "run 'llmbench plot DIR' after the run", ""),
	)
	s := &schema{rows: rows, byPath: map[string]*row{}, sections: map[string]bool{}}
	for i, r := range rows {
		r.rank = i
		s.byPath[r.path] = r
		for p := r.path; strings.Contains(p, "."); {
			p = p[:strings.LastIndexByte(p, '.')]
			s.sections[p] = true
		}
	}
	return s
}

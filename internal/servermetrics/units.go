package servermetrics

import "strings"

// unitSuffixes maps metric-name suffixes to the exported unit, from the
// JSON schema's unit table. InferUnit tries the longest suffix first.
var unitSuffixes = []struct{ suffix, unit string }{
	{"_error_count_total", "errors"},
	{"_requests_total", "requests"},
	{"_seconds_total", "seconds"},
	{"_tokens_total", "tokens"},
	{"_errors_total", "errors"},
	{"_blocks_total", "blocks"},
	{"_bytes_total", "bytes"},
	{"_milliseconds", "milliseconds"},
	{"_nanoseconds", "nanoseconds"},
	{"_error_count", "errors"},
	{"_block_count", "blocks"},
	{"_ms_total", "milliseconds"},
	{"_ns_total", "nanoseconds"},
	{"_kilobytes", "kilobytes"},
	{"_megabytes", "megabytes"},
	{"_gigabytes", "gigabytes"},
	{"_requests", "requests"},
	{"_celsius", "celsius"},
	{"_seconds", "seconds"},
	{"_percent", "percent"},
	{"_tokens", "tokens"},
	{"_errors", "errors"},
	{"_blocks", "blocks"},
	{"_joules", "joule"},
	{"_watts", "watt"},
	{"_bytes", "bytes"},
	{"_total", "count"},
	{"_count", "count"},
	{"_ratio", "ratio"},
	{"_reqs", "requests"},
	{"_gb_s", "gb/s"},
	{"_perc", "percent"},
	{"_ms", "milliseconds"},
	{"_ns", "nanoseconds"},
	{"request_success", "requests"}, // the schema's special case: no underscore prefix
}

// descriptionUnits are phrases in HELP text that name a unit. The schema
// gives description-based inference priority over the suffix.
var descriptionUnits = []struct{ phrase, unit string }{
	// vLLM: "KV-cache usage. 1 means 100 percent usage." is a 0..1 ratio,
	// which is what the schema's own example exports for kv_cache_usage_perc.
	{"1 means 100 percent", "ratio"},
	{"in milliseconds", "milliseconds"},
	{"in microseconds", "microseconds"},
	{"in nanoseconds", "nanoseconds"},
	{"in seconds", "seconds"},
	{"(gb/s)", "gb/s"},
	{"in bytes", "bytes"},
}

// InferUnit infers a metric's unit from its HELP text, then its name; ""
// when neither says. For example "vllm:num_requests_running" has no unit:
// no suffix of the table matches (the schema's minimal example shows
// "requests" for it, but its table, which wins, has no such rule).
func InferUnit(name, help string) string {
	h := strings.ToLower(help)
	for _, d := range descriptionUnits {
		if strings.Contains(h, d.phrase) {
			return d.unit
		}
	}
	for _, s := range unitSuffixes {
		if strings.HasSuffix(name, s.suffix) {
			return s.unit
		}
	}
	return ""
}

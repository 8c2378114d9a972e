package servermetrics

import (
	"regexp"
	"strings"
)

// Unit inference follows AIPerf's units.py (aiperf-implementation-notes
// S11) rule for rule, so units match AIPerf's exports: scale words in the
// description first (ratio, then percent), then "(in X)" tags, then nine
// description patterns, then name suffixes (longest first, on the
// lower-cased name), then the num_requests_ wildcard. The seed's table is
// the suffix part only; its own example, which exports
// vllm:num_requests_running in "requests", is what the wildcard gives.

const (
	sep     = `\s*(?:[-–—]+|to)\s*`
	zero    = `0(?:\.0)?`
	one     = `1(?:\.0)?`
	hundred = `100(?:\.0)?`
)

// Description scale words, case-insensitive: a 0..1 range is a ratio,
// 0..100 a percent. vLLM's "1 means 100 percent usage" is a ratio.
var (
	ratioPatterns = []*regexp.Regexp{
		regexp.MustCompile(`(?i)\(\s*` + zero + sep + one + `\s*\)`),
		regexp.MustCompile(`(?i)\b` + zero + sep + one + `\b`),
		regexp.MustCompile(`(?i)\brange\s+` + zero + sep + one + `\b`),
		regexp.MustCompile(`(?i)(?:\b|\()` + one + `\s*(?:means|is|equals|equal|==|=)\s*100\s*(?:%|percent)`),
	}
	percentPatterns = []*regexp.Regexp{
		regexp.MustCompile(`(?i)\(\s*` + zero + sep + hundred + `\s*\)`),
		regexp.MustCompile(`(?i)\brange\s+0` + sep + `100\b`),
		regexp.MustCompile(`(?i)\b0` + sep + `100\s*%`),
	}
)

// inTag is DCGM's "(in X)", X looked up case-sensitively in inTagUnits.
var inTag = regexp.MustCompile(`\((?i:in)\s+([^\s)]+)\)`)

var inTagUnits = map[string]string{
	"MiB": "megabytes", "MB": "megabytes", "GiB": "gigabytes", "GB": "gigabytes",
	"KiB": "kilobytes", "KB": "kilobytes", "B": "bytes", "TB": "terabytes",
	"C": "celsius", "°C": "celsius", "F": "fahrenheit", "°F": "fahrenheit", "K": "kelvin",
	"Hz": "hertz", "MHz": "megahertz", "GHz": "gigahertz",
	"W": "watt", "mW": "milliwatt", "J": "joule", "mJ": "millijoule", "MJ": "megajoule",
	"s": "seconds", "sec": "seconds", "ms": "milliseconds", "ns": "nanoseconds", "us": "microseconds", "µs": "microseconds",
	"GB/s": "gb/s", "MB/s": "mb/s", "%": "percent", "percent": "percent",
}

// descriptionPatterns open with the word "in" or a "(", and end at a word
// boundary or ")"; case-insensitive, tried in order.
var descriptionPatterns = []struct {
	re   *regexp.Regexp
	unit string
}{
	{opened(`seconds?`), "seconds"},
	{opened(`(?:milliseconds?|ms)`), "milliseconds"},
	{opened(`(?:nanoseconds?|ns)`), "nanoseconds"},
	{opened(`bytes?`), "bytes"},
	{opened(`gb/s`), "gb/s"},
	{opened(`mb/s`), "mb/s"},
	{opened(`tokens?/s(?:ec(?:ond)?)?`), "tokens/s"},
	{opened(`requests?/s(?:ec(?:ond)?)?`), "requests/s"},
	{regexp.MustCompile(`(?i)\bin\s+tokens?\b`), "tokens"},
}

func opened(unit string) *regexp.Regexp {
	return regexp.MustCompile(`(?i)(?:\bin\s+|\()` + unit + `(?:\b|\))`)
}

// unitSuffixes map lower-cased name suffixes to units, longest first (a
// test keeps them so).
var unitSuffixes = []struct{ suffix, unit string }{
	{"_error_count_total", "errors"},
	{"_requests_total", "requests"},
	{"request_success", "requests"}, // AIPerf's special case: no underscore
	{"_seconds_total", "seconds"},
	{"_tokens_total", "tokens"},
	{"_errors_total", "errors"},
	{"_blocks_total", "blocks"},
	{"_milliseconds", "milliseconds"},
	{"_bytes_total", "bytes"},
	{"_nanoseconds", "nanoseconds"},
	{"_error_count", "errors"},
	{"_block_count", "blocks"},
	{"_kilobytes", "kilobytes"},
	{"_megabytes", "megabytes"},
	{"_gigabytes", "gigabytes"},
	{"_requests", "requests"},
	{"_ms_total", "milliseconds"},
	{"_ns_total", "nanoseconds"},
	{"_celsius", "celsius"},
	{"_seconds", "seconds"},
	{"_percent", "percent"},
	{"_tokens", "tokens"},
	{"_errors", "errors"},
	{"_blocks", "blocks"},
	{"_joules", "joule"},
	{"_bytes", "bytes"},
	{"_watts", "watt"},
	{"_total", "count"},
	{"_count", "count"},
	{"_ratio", "ratio"},
	{"_reqs", "requests"},
	{"_gb_s", "gb/s"},
	{"_perc", "percent"},
	{"_ms", "milliseconds"},
	{"_ns", "nanoseconds"},
}

// InferUnit infers a metric's unit from its HELP text, then its name; ""
// when neither says.
func InferUnit(name, help string) string {
	for _, re := range ratioPatterns {
		if re.MatchString(help) {
			return "ratio"
		}
	}
	for _, re := range percentPatterns {
		if re.MatchString(help) {
			return "percent"
		}
	}
	if m := inTag.FindStringSubmatch(help); m != nil {
		if u, ok := inTagUnits[m[1]]; ok {
			return u
		}
	}
	for _, p := range descriptionPatterns {
		if p.re.MatchString(help) {
			return p.unit
		}
	}
	lower := strings.ToLower(name)
	for _, s := range unitSuffixes {
		if strings.HasSuffix(lower, s.suffix) {
			return s.unit
		}
	}
	if strings.Contains(lower, "num_requests_") {
		return "requests"
	}
	return ""
}

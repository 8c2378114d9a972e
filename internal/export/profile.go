// Package export writes a run's results to files in AIPerf's formats:
// profile_export_aiperf.json and .csv (aggregated metrics), profile_export.jsonl
// (one line per request) and inputs.json (the payloads sent). Writers get
// their data handed in; they never reach back into the run.
package export

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/llmbench/llmbench/internal/clientload"
	"github.com/llmbench/llmbench/internal/gputelemetry"
	"github.com/llmbench/llmbench/internal/metrics"
	"github.com/llmbench/llmbench/internal/stats"
	"github.com/llmbench/llmbench/internal/verdict"
)

// Files are the client-side export file names.
type Files struct {
	ProfileJSON, ProfileCSV, Records, Inputs string
	TimeslicesJSON, TimeslicesCSV            string
	// Raw is --export-level raw's per-request exchanges.
	Raw string
	// Report is the run's report.html.
	Report string
}

// ProfileFiles names the client-side exports as AIPerf does. With no
// prefix: profile_export_aiperf.json/.csv, profile_export.jsonl and
// profile_export_aiperf_timeslices.json/.csv; with --profile-export-prefix
// p: p.json, p.csv, p.jsonl, p_timeslices.json/.csv. The report is
// report.html, or p_report.html.
func ProfileFiles(prefix string) Files {
	f := Files{Inputs: "inputs.json", Report: "report.html"}
	if prefix == "" {
		f.ProfileJSON, f.ProfileCSV, f.Records = "profile_export_aiperf.json", "profile_export_aiperf.csv", "profile_export.jsonl"
		f.Raw = "profile_export_raw.jsonl"
		f.TimeslicesJSON, f.TimeslicesCSV = "profile_export_aiperf_timeslices.json", "profile_export_aiperf_timeslices.csv"
		return f
	}
	f.ProfileJSON, f.ProfileCSV, f.Records = prefix+".json", prefix+".csv", prefix+".jsonl"
	f.Raw = prefix + "_raw.jsonl"
	f.TimeslicesJSON, f.TimeslicesCSV = prefix+"_timeslices.json", prefix+"_timeslices.csv"
	f.Report = prefix + "_report.html"
	return f
}

// ProfileSchemaVersion is the version of AIPerf's profile export layout
// that profile_export_aiperf.json follows.
const ProfileSchemaVersion = "1.3"

// Summary is what the aggregated exports hold.
type Summary struct {
	// Version is llmbench's, written as aiperf_version (the key AIPerf
	// users' scripts read) and as llmbench_version.
	Version      string
	BenchmarkID  string
	Results      metrics.Results
	WasCancelled bool
	Start, End   time.Time
	// InputConfig is the run's configuration, already redacted.
	InputConfig any
	RunInfo     RunInfo
	// ClientLoad is the client's own load during the run (llmbench's).
	ClientLoad *clientload.Report
	// Telemetry is the GPU telemetry (telemetry_data); nil when no GPU
	// was seen.
	Telemetry *gputelemetry.Report
	// Verdict is whether the run can be trusted (run_verdict,
	// llmbench's); nil for none.
	Verdict *verdict.Verdict
}

// RunInfo is AIPerf's run_info block: what identifies this run.
type RunInfo struct {
	BenchmarkID string `json:"benchmark_id"`
	RandomSeed  *int64 `json:"random_seed,omitempty"`
	// Trial and RunLabel name a run of --num-profile-runs (0 and "" for
	// a single run).
	Trial      int    `json:"trial,omitempty"`
	RunLabel   string `json:"run_label,omitempty"`
	CLICommand string `json:"cli_command,omitempty"`
	// Shard is set on one shard of a run spread over several processes;
	// Shards on their merge, one per shard merged.
	Shard  *ShardInfo  `json:"shard,omitempty"`
	Shards []ShardInfo `json:"shards,omitempty"`
}

// ShardInfo is what a shard records of itself for the merge: which part
// of which plan it ran, when, and on what clock.
type ShardInfo struct {
	Index int `json:"index"`
	Count int `json:"count"`
	// IndexFrom says where the index came from: --shard-index or an
	// environment variable (JOB_COMPLETION_INDEX, SLURM_PROCID, …).
	IndexFrom string `json:"index_from,omitempty"`
	// PlanHash identifies the global plan: the shards of one run share it.
	PlanHash string `json:"plan_hash"`
	Host     string `json:"host,omitempty"`
	// StartAt is --start-at as given; LateNs how long after it the
	// schedule started (0 when on time or without one).
	StartAt string `json:"start_at,omitempty"`
	LateNs  int64  `json:"late_ns"`
	// Clock anchors the shard's timestamps: its wall clock and its
	// monotonic clock (CLOCK_MONOTONIC, where there is one) read at one
	// instant when the run's clock started.
	Clock ClockAnchors `json:"clock"`
	// ProfilingStartNs and ProfilingEndNs bound its profiling phase on
	// its wall clock; Profiled is false when it never began.
	ProfilingStartNs int64 `json:"profiling_start_ns"`
	ProfilingEndNs   int64 `json:"profiling_end_ns"`
	Profiled         bool  `json:"profiled"`
	Cancelled        bool  `json:"was_cancelled"`
	// ScrapedServerMetrics says it collected server metrics and GPU
	// telemetry (--server-metrics-shards).
	ScrapedServerMetrics bool `json:"scraped_server_metrics"`
	// Records is the number of records in its shard_records.gob.
	Records int `json:"records"`
	// ServerClockOffset bounds the servers' clock minus this shard's wall
	// clock, from the responses' Date headers; nil when none was seen.
	ServerClockOffset *OffsetBound `json:"server_clock_offset,omitempty"`
}

// ClockAnchors are a wall-clock and a monotonic reading of one instant.
type ClockAnchors struct {
	WallNs      int64 `json:"wall_ns"`
	MonotonicNs int64 `json:"monotonic_ns,omitempty"`
}

// OffsetBound is an interval certain to hold a clock offset, in ns.
type OffsetBound struct {
	LowNs   int64 `json:"low_ns"`
	HighNs  int64 `json:"high_ns"`
	Samples int   `json:"samples"`
}

// AppendJSONNumber writes v as a JSON number as every export writes it:
// whole numbers without a fraction, others in their shortest digits, NaN
// and ±Inf (which JSON lacks) as null.
func AppendJSONNumber(b []byte, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return append(b, "null"...)
	}
	if math.Abs(v) < 1<<53 && v == math.Trunc(v) && (v != 0 || !math.Signbit(v)) {
		// A whole number (a token count): the same digits, faster.
		return strconv.AppendInt(b, int64(v), 10)
	}
	if math.Abs(v) < 1e21 {
		return strconv.AppendFloat(b, v, 'f', -1, 64)
	}
	return strconv.AppendFloat(b, v, 'e', -1, 64)
}

// appendStat appends `,"name":v`, or nothing when v is not finite:
// AIPerf's exports leave out what has no value rather than write null.
func appendStat(b []byte, name string, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return b
	}
	b = append(append(append(b, `,"`...), name...), `":`...)
	return AppendJSONNumber(b, v)
}

// appendMetric renders one metric's block: unit, avg, p1…p99, min, max,
// std, count, sum for distributions; unit and avg for single values.
func appendMetric(b []byte, r metrics.Result) []byte {
	b = append(b, `{"unit":`...)
	b = appendJSONString(b, r.Def.Unit)
	if r.Dist == nil {
		if r.Exact != nil {
			return append(strconv.AppendInt(append(b, `,"avg":`...), *r.Exact, 10), '}')
		}
		return append(appendStat(b, "avg", r.Value), '}')
	}
	s := r.Dist
	b = appendStat(b, "avg", s.Avg)
	for i, name := range stats.PercentileNames {
		b = appendStat(b, name, s.P[i])
	}
	b = appendStat(b, "min", s.Min)
	b = appendStat(b, "max", s.Max)
	b = appendStat(b, "std", s.Std)
	if r.Def.Kind == metrics.TimeWeighted {
		return append(b, '}') // a curve's statistics: no count, no sum
	}
	b = strconv.AppendInt(append(b, `,"count":`...), int64(s.Count), 10)
	b = appendStat(b, "sum", s.Sum)
	return append(b, '}')
}

// declaredOrder is the order of the metrics AIPerf's JsonExportData
// declares; they come first, before the run's metadata, and every other
// metric follows it.
var declaredOrder = []string{
	"request_throughput", "request_latency", "request_count", "time_to_first_token", "time_to_second_token",
	"inter_token_latency", "output_token_throughput", "output_token_throughput_per_user", "output_sequence_length",
	"input_sequence_length", "goodput", "good_request_count", "output_token_count", "reasoning_token_count",
	"min_request_timestamp", "max_response_timestamp", "inter_chunk_latency", "total_output_tokens",
	"total_reasoning_tokens", "benchmark_duration", "total_isl", "total_osl", "error_request_count", "error_isl",
	"total_error_isl",
}

// splitMetrics returns the exported metrics in AIPerf's order: the
// declared ones in declaredOrder, and the others as computed.
func splitMetrics(rs *metrics.Results) (declared, others []metrics.Result) {
	first := map[string]bool{}
	for _, tag := range declaredOrder {
		first[tag] = true
		if r, ok := rs.Get(tag); ok && Exported(r.Def) {
			declared = append(declared, r)
		}
	}
	for _, r := range rs.Metrics {
		if !first[r.Def.Tag] && Exported(r.Def) {
			others = append(others, r)
		}
	}
	return declared, others
}

// Exported reports whether a metric goes into the exports: not the
// internal ones (AIPerf's newest leaves out min_request_timestamp and
// max_response_timestamp).
func Exported(d metrics.Def) bool { return !d.Has(metrics.Internal) }

// ProfileJSON renders profile_export_aiperf.json in AIPerf's newest shape
// (aiperf-implementation-notes C1): schema_version, aiperf_version,
// benchmark_id; the declared metrics in their order; input_config,
// run_info, was_cancelled, error_summary, start_time, end_time; every
// other metric; then llmbench's own keys. Nothing is null: a metric or
// statistic without a value is left out.
func ProfileJSON(s Summary) ([]byte, error) {
	b := []byte("{\n")
	field := func(key string, raw []byte) {
		if len(b) > 2 {
			b = append(b, ",\n"...)
		}
		b = append(b, "  "...)
		b = appendJSONString(b, key)
		b = append(b, ": "...)
		b = append(b, raw...)
	}
	str := func(v string) []byte { return appendJSONString(nil, v) }
	field("schema_version", str(ProfileSchemaVersion))
	field("aiperf_version", str(s.Version))
	field("benchmark_id", str(s.BenchmarkID))
	declared, others := splitMetrics(&s.Results)
	for _, r := range declared {
		field(r.Def.Tag, appendMetric(nil, r))
	}
	if s.Telemetry != nil {
		field("telemetry_data", TelemetryJSON(*s.Telemetry))
	}
	cfg, err := indentedJSON("input config", s.InputConfig)
	if err != nil {
		return nil, err
	}
	field("input_config", cfg)
	info, err := indentedJSON("run info", s.RunInfo)
	if err != nil {
		return nil, err
	}
	field("run_info", info)
	field("was_cancelled", strconv.AppendBool(nil, s.WasCancelled))

	type errorSummary struct {
		ErrorDetails any `json:"error_details"`
		Count        int `json:"count"`
	}
	errs := make([]errorSummary, len(s.Results.Errors))
	for i, e := range s.Results.Errors {
		errs[i] = errorSummary{ErrorDetails: e.Error, Count: e.Count}
	}
	raw, err := json.Marshal(errs)
	if err != nil {
		return nil, fmt.Errorf("encode error summary: %w", err)
	}
	field("error_summary", raw)
	field("start_time", str(s.Start.Format(timeLayout)))
	field("end_time", str(s.End.Format(timeLayout)))
	for _, r := range others {
		field(r.Def.Tag, appendMetric(nil, r))
	}
	field("llmbench_version", str(s.Version))
	if s.ClientLoad != nil {
		raw, err := json.Marshal(s.ClientLoad)
		if err != nil {
			return nil, fmt.Errorf("encode client load: %w", err)
		}
		field("client_load", raw)
	}
	if bd := s.Results.TTFTBreakdown; bd != nil {
		// Every value is a finite mean of finite parts.
		raw, err := json.Marshal(bd)
		if err != nil {
			return nil, fmt.Errorf("encode the TTFT breakdown: %w", err)
		}
		field("ttft_breakdown", raw)
	}
	if s.Verdict != nil {
		raw, err := json.Marshal(s.Verdict)
		if err != nil {
			return nil, fmt.Errorf("encode run verdict: %w", err)
		}
		field("run_verdict", raw)
	}
	return append(b, "\n}\n"...), nil
}

// indentedJSON encodes v indented as a member of a top-level object.
func indentedJSON(what string, v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("  ", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode %s: %w", what, err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// timeLayout is ISO 8601 with microseconds, as AIPerf writes start_time.
const timeLayout = "2006-01-02T15:04:05.000000"

// CSVLabel is a metric's name in AIPerf's CSV exports: its display
// header, and its unit in parentheses unless the unit is none, count or
// requests ("Request Count", "Request Latency (ms)").
func CSVLabel(d metrics.Def) string {
	switch strings.ToLower(d.Unit) {
	case "", "count", "requests":
		return d.Header
	}
	return d.Header + " (" + d.Unit + ")"
}

// csvNumber formats a value as AIPerf's CSV exporter does: two decimals;
// no value is an empty field.
func csvNumber(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// ProfileCSV renders profile_export_aiperf.csv as AIPerf's newest does
// (aiperf-implementation-notes C2): the distributions
// ("Metric,avg,min,max,sum,p1,…,p99,std"), a blank line, then the single
// values ("Metric,Value"), each section sorted by metric tag.
func ProfileCSV(rs metrics.Results) []byte {
	sorted := sortedByTag(rs)
	var b bytes.Buffer
	b.WriteString("Metric,avg,min,max,sum")
	for _, n := range stats.PercentileNames {
		b.WriteString("," + n)
	}
	b.WriteString(",std\n")
	for _, r := range sorted {
		if r.Dist == nil {
			continue
		}
		d := r.Dist
		b.WriteString(CSVField(CSVLabel(r.Def)) + "," + csvNumber(d.Avg) + "," + csvNumber(d.Min) + "," + csvNumber(d.Max) + "," + csvNumber(d.Sum))
		for _, p := range d.P {
			b.WriteString("," + csvNumber(p))
		}
		b.WriteString("," + csvNumber(d.Std) + "\n")
	}
	b.WriteString("\nMetric,Value\n")
	for _, r := range sorted {
		if r.Dist == nil {
			b.WriteString(CSVField(CSVLabel(r.Def)) + "," + csvNumber(r.Value) + "\n")
		}
	}
	return b.Bytes()
}

// sortedByTag returns the exported metrics sorted by tag, as AIPerf's CSV
// exporters order their rows, llmbench's own metrics last.
func sortedByTag(rs metrics.Results) []metrics.Result {
	sorted := make([]metrics.Result, 0, len(rs.Metrics))
	for _, r := range rs.Metrics {
		if Exported(r.Def) {
			sorted = append(sorted, r)
		}
	}
	// llmbench's own rows come after AIPerf's, so AIPerf's keep the
	// positions its users' scripts may read them at.
	slices.SortStableFunc(sorted, func(a, b metrics.Result) int {
		if ao, bo := a.Def.Has(metrics.Own), b.Def.Has(metrics.Own); ao != bo {
			if ao {
				return 1
			}
			return -1
		}
		return strings.Compare(a.Def.Tag, b.Def.Tag)
	})
	return sorted
}

// CSVField quotes a CSV field when it must be (a comma, quote or newline).
func CSVField(s string) string {
	if strings.ContainsAny(s, ",\"\n") {
		return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	}
	return s
}

// WriteFile writes data to dir/name atomically: readers never see a half file.
func WriteFile(dir, name string, data []byte) error {
	return WriteFileFunc(dir, name, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteFileFunc writes dir/name through write, atomically: into a
// temporary file renamed into place once complete, so a reader never sees
// half a file and a failed export leaves no file behind.
func WriteFileFunc(dir, name string, write func(io.Writer) error) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create artifact dir %s: %w", dir, err)
	}
	tmp, err := os.CreateTemp(dir, "."+name+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	w := bufio.NewWriterSize(tmp, 1<<20)
	err = write(w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(dir, name))
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", filepath.Join(dir, name), err)
	}
	return nil
}

package report

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/llmbench/llmbench/internal/artifacts"
	"github.com/llmbench/llmbench/internal/chart"
	"github.com/llmbench/llmbench/internal/stats"
)

// maxScatter is how many per-request points an over-time chart draws at
// most; beyond it the points are thinned (the slowest always kept) while
// the percentile lines stay those of every request.
const maxScatter = 3000

// maxCDF is how many points a distribution's curve has at most.
const maxCDF = 600

// requestMetric is a per-request metric a report draws.
type requestMetric struct {
	Tag, Name, Short string
}

// The per-request metrics of the headline, the over-time charts and the
// distributions, in the order shown.
var (
	latencyMetrics = []requestMetric{
		{"time_to_first_token", "Time to first token", "TTFT"},
		{"inter_token_latency", "Inter-token latency", "ITL"},
		{"request_latency", "Request latency", "Latency"},
	}
	lengthMetrics = []requestMetric{
		{"input_sequence_length", "Input sequence length", "ISL"},
		{"output_sequence_length", "Output sequence length", "OSL"},
	}
	// overTimeIDs are AIPerf's plot names for the over-time charts.
	overTimeIDs = map[string]string{
		"time_to_first_token": "ttft_over_time",
		"inter_token_latency": "itl_over_time",
		"request_latency":     "latency_over_time",
	}
)

// RecordTags are the per-request metrics the pages draw; the records'
// other metrics need not be kept in memory.
var RecordTags = []string{
	"time_to_first_token", "inter_token_latency", "request_latency",
	"input_sequence_length", "output_sequence_length",
}

// headlineStats are the statistics of the headline table.
var headlineStats = []string{"avg", "min", "p50", "p90", "p99", "max"}

// SingleRun is the page of one run.
func SingleRun(r *artifacts.Run, generator string) *Page {
	p := &Page{Kind: "Single run", Generator: generator}
	p.Title = runTitle(r)
	p.Facts = runFacts(r)
	p.Warnings = runWarnings(r)
	v := newRunView(r)
	head := headlineSection(r, v)
	if !r.HasRecords {
		head.Intro = "This run's folder holds no per-request records (" + artifacts.RecordsFile + "; --export-level summary writes none), so the charts of requests over time and the distributions are not drawn."
	}
	p.Sections = append(p.Sections, head)
	if s, ok := overTimeSection(r, v); ok {
		p.Sections = append(p.Sections, s)
	}
	sv := newSliceView(r, v)
	if s, ok := sliceSection(v, sv); ok {
		p.Sections = append(p.Sections, s)
	}
	if s, ok := distributionSection(v); ok {
		p.Sections = append(p.Sections, s)
	}
	if s, ok := serverSection(r, v); ok {
		p.Sections = append(p.Sections, s)
	}
	if s, ok := gpuSection(r, v, sv); ok {
		p.Sections = append(p.Sections, s)
	}
	if s, ok := errorSection(r, v); ok {
		p.Sections = append(p.Sections, s)
	}
	p.Sections = append(p.Sections, configSection(r))
	return p
}

// runView is a run's profiling records on one time axis: seconds since
// the first request started.
type runView struct {
	records []artifacts.Record // profiling records with a start time
	t0      int64              // the first start, ns
	end     float64            // the last end, s after t0
}

func newRunView(r *artifacts.Run) *runView {
	v := &runView{}
	for _, rec := range r.Records {
		if rec.Profiling() && rec.StartNs > 0 {
			v.records = append(v.records, rec)
		}
	}
	slices.SortStableFunc(v.records, func(a, b artifacts.Record) int { return cmp.Compare(a.StartNs, b.StartNs) })
	if len(v.records) == 0 {
		return v
	}
	v.t0 = v.records[0].StartNs
	for _, rec := range v.records {
		v.end = max(v.end, v.at(max(rec.EndNs, rec.StartNs)))
	}
	return v
}

// at is a timestamp's seconds after the first request.
func (v *runView) at(ns int64) float64 { return float64(ns-v.t0) / 1e9 }

// values are the successful records' values of a metric, NaN where a
// record has none, with each record's start (s).
func (v *runView) values(tag string) (x, y []float64) {
	for _, rec := range v.records {
		if rec.Failed {
			continue
		}
		val, ok := rec.Value(tag)
		if !ok {
			continue
		}
		x, y = append(x, v.at(rec.StartNs)), append(y, val)
	}
	return x, y
}

// percentile is a metric's statistic: the export's when it has it (the
// numbers the run reported), else computed from the records.
func percentile(r *artifacts.Run, v *runView, tag, stat string) (float64, bool) {
	if x, ok := r.Stat(tag, stat); ok {
		return x, true
	}
	_, ys := v.values(tag)
	if len(ys) == 0 || !strings.HasPrefix(stat, "p") {
		return 0, false
	}
	var q float64
	if _, err := fmt.Sscanf(stat, "p%g", &q); err != nil {
		return 0, false
	}
	sorted := slices.Clone(ys)
	slices.Sort(sorted)
	return stats.PercentileSorted(sorted, q), true
}

func runTitle(r *artifacts.Run) string {
	cfg := inputConfig(r)
	parts := []string{}
	if m := cfg.models(); m != "" {
		parts = append(parts, m)
	}
	if t := cfg.str("endpoint", "type"); t != "" {
		s := t
		if cfg.boolean("endpoint", "streaming") {
			s += ", streaming"
		}
		parts = append(parts, s)
	}
	if l := cfg.load(); l != "" {
		parts = append(parts, l)
	}
	if len(parts) == 0 {
		return "Benchmark run"
	}
	return strings.Join(parts, " · ")
}

func runFacts(r *artifacts.Run) []Fact {
	cfg := inputConfig(r)
	var out []Fact
	add := func(name, value string) {
		if value != "" {
			out = append(out, Fact{name, value})
		}
	}
	add("Started", humanTime(r.String("start_time")))
	add("Ended", humanTime(r.String("end_time")))
	if d, ok := r.Stat("benchmark_duration", "avg"); ok {
		add("Duration", fmt.Sprintf("%.2f s", d))
	}
	add("Model", cfg.models())
	add("Endpoint", cfg.endpoint())
	add("Load", cfg.load())
	if n, ok := r.Stat("request_count", "avg"); ok {
		e, _ := r.Stat("error_request_count", "avg")
		add("Requests", fmt.Sprintf("%.0f succeeded, %.0f failed", n, e))
	}
	var runInfo struct {
		Seed *int64 `json:"random_seed"`
	}
	if json.Unmarshal(r.Export["run_info"], &runInfo) == nil && runInfo.Seed != nil {
		add("Seed", fmt.Sprint(*runInfo.Seed))
	}
	for _, k := range []string{"llmbench_version", "aiperf_version"} {
		if s := r.String(k); s != "" {
			add("Written by", strings.TrimSuffix(k, "_version")+" "+s)
			break
		}
	}
	add("Folder", r.Dir)
	return out
}

// humanTime shortens an ISO time to seconds ("2026-11-24 05:19:47").
func humanTime(s string) string {
	if s == "" {
		return ""
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02T15:04:05"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.Format("2006-01-02 15:04:05")
		}
	}
	return s
}

// runWarnings are the run's verdict when it is not a pass, its
// cancellation and its errors.
func runWarnings(r *artifacts.Run) []string {
	var out []string
	var verdict struct {
		Verdict string `json:"verdict"`
		Reasons []struct {
			Message string `json:"message"`
		} `json:"reasons"`
	}
	if json.Unmarshal(r.Export["run_verdict"], &verdict) == nil && verdict.Verdict != "" && !strings.EqualFold(verdict.Verdict, "pass") {
		msg := "Run verdict: " + verdict.Verdict
		for _, reason := range verdict.Reasons {
			msg += "; " + reason.Message
		}
		out = append(out, msg)
	}
	var cancelled bool
	if json.Unmarshal(r.Export["was_cancelled"], &cancelled) == nil && cancelled {
		out = append(out, "The run was cancelled before it finished: its numbers cover what finished.")
	}
	if e, ok := r.Stat("error_request_count", "avg"); ok && e > 0 {
		out = append(out, fmt.Sprintf("%.0f requests failed; see Errors.", e))
	}
	return out
}

// headlineSection is the console table's key numbers.
func headlineSection(r *artifacts.Run, v *runView) Section {
	s := Section{ID: "summary", Title: "Summary"}
	t := Table{ID: "summary-latency", Header: append([]string{"Metric"}, headlineStats...)}
	for _, m := range append(slices.Clone(latencyMetrics), append(lengthMetrics, requestMetric{"output_token_throughput_per_user", "Output token throughput per user", ""})...) {
		unit := unitOf(r, v, m.Tag)
		if unit == "" {
			continue
		}
		row := []Cell{{Text: fmt.Sprintf("%s (%s)", m.Name, unit)}}
		for _, st := range headlineStats {
			val, ok := percentile(r, v, m.Tag, st)
			if st == "avg" || st == "min" || st == "max" {
				val, ok = statOrComputed(r, v, m.Tag, st)
			}
			row = append(row, Cell{Text: number(val, ok), ID: "stat-" + m.Tag + "-" + st})
		}
		t.Rows = append(t.Rows, row)
	}
	s.Tables = append(s.Tables, t)
	totals := Table{ID: "summary-totals", Header: []string{"Metric", "Value"}}
	for _, m := range []struct{ tag, name string }{
		{"request_throughput", "Request throughput"},
		{"output_token_throughput", "Output token throughput"},
		{"total_token_throughput", "Total token throughput"},
		{"request_count", "Requests succeeded"},
		{"error_request_count", "Requests failed"},
		{"benchmark_duration", "Benchmark duration"},
		{"goodput", "Goodput"},
	} {
		if mt, ok := r.Metrics[m.tag]; ok {
			val, ok := mt.Stats["avg"]
			text := number(val, ok)
			if ok && mt.Unit == "requests" && val == math.Trunc(val) {
				text = commas(fmt.Sprintf("%.0f", val)) // a count
			}
			totals.Rows = append(totals.Rows, []Cell{{Text: m.name}, {Text: text + " " + mt.Unit, ID: "stat-" + m.tag + "-avg"}})
		}
	}
	if len(totals.Rows) > 0 {
		s.Tables = append(s.Tables, totals)
	}
	return s
}

// unitOf is a metric's unit from the export or the records; "" when the
// run has no such metric.
func unitOf(r *artifacts.Run, v *runView, tag string) string {
	if m, ok := r.Metrics[tag]; ok {
		return m.Unit
	}
	for _, rec := range v.records {
		if u := rec.Units[tag]; u != "" {
			return u
		}
	}
	return ""
}

func statOrComputed(r *artifacts.Run, v *runView, tag, stat string) (float64, bool) {
	if x, ok := r.Stat(tag, stat); ok {
		return x, true
	}
	_, ys := v.values(tag)
	if len(ys) == 0 {
		return 0, false
	}
	switch stat {
	case "min":
		return slices.Min(ys), true
	case "max":
		return slices.Max(ys), true
	}
	return stats.Mean(ys), true
}

// number formats a table value: two decimals, as the console table.
func number(v float64, ok bool) string {
	if !ok || math.IsNaN(v) {
		return "–"
	}
	if math.IsInf(v, 0) {
		return fmt.Sprint(v)
	}
	return commas(fmt.Sprintf("%.2f", v))
}

// commas groups an integer part's digits by thousands.
func commas(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	intPart, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	out := b.String()
	if frac != "" {
		out += "." + frac
	}
	if neg {
		out = "-" + out
	}
	return out
}

// overTimeSection draws every request's TTFT, ITL and latency at its
// start, with the run's p50 and p99.
func overTimeSection(r *artifacts.Run, v *runView) (Section, bool) {
	s := Section{ID: "over-time", Title: "Requests over time",
		Intro: "Each point is one successful request, at the time it was sent; the dashed lines are the run's p50 and p99 over every request."}
	for _, m := range latencyMetrics {
		xs, ys := v.values(m.Tag)
		if len(ys) == 0 {
			continue
		}
		unit := unitOf(r, v, m.Tag)
		keep := chart.Thin(ys, maxScatter)
		c := chart.Chart{ID: overTimeIDs[m.Tag], Title: m.Name + " of every request",
			X: chart.Axis{Label: "Time since the first request (s)"}, Y: chart.Axis{Label: fmt.Sprintf("%s (%s)", m.Short, unit)}}
		px, py := make([]float64, len(keep)), make([]float64, len(keep))
		for k, i := range keep {
			px[k], py[k] = xs[i], ys[i]
		}
		c.Series = append(c.Series, chart.Series{Label: m.Short, Style: chart.Points, X: px, Y: py})
		for _, st := range []string{"p50", "p99"} {
			if val, ok := percentile(r, v, m.Tag, st); ok {
				c.Series = append(c.Series, chart.Series{Label: st, Style: chart.Dashed, X: []float64{0, v.end}, Y: []float64{val, val}})
			}
		}
		if len(keep) < len(ys) {
			c.Note = fmt.Sprintf("%d of %d requests drawn (the slowest 1%% and an even sample of the rest); p50 and p99 are over all %d.", len(keep), len(ys), len(ys))
		}
		s.Charts = append(s.Charts, c)
	}
	return s, len(s.Charts) > 0
}

// distributionSection draws the empirical CDF of every per-request
// metric.
func distributionSection(v *runView) (Section, bool) {
	s := Section{ID: "distributions", Title: "Distributions",
		Intro: "The share of successful requests at or below each value (empirical CDF)."}
	for _, m := range append(slices.Clone(latencyMetrics), lengthMetrics...) {
		_, ys := v.values(m.Tag)
		x, y, ok := chart.CDF(ys, maxCDF)
		if !ok {
			continue
		}
		unit := ""
		for _, rec := range v.records {
			if unit = rec.Units[m.Tag]; unit != "" {
				break
			}
		}
		style := chart.Step
		if x[0] == x[len(x)-1] {
			style = chart.LinePoints // every request the same value: one point at 100 %
		}
		s.Charts = append(s.Charts, chart.Chart{ID: cdfID(m.Tag), Title: m.Name + " distribution",
			X: chart.Axis{Label: fmt.Sprintf("%s (%s)", m.Short, unit)}, Y: chart.Axis{Label: "Requests at or below (%)", Range: []float64{0, 100}},
			Series: []chart.Series{{Label: m.Short, Style: style, X: x, Y: y}}})
	}
	return s, len(s.Charts) > 0
}

func cdfID(tag string) string {
	short := map[string]string{"time_to_first_token": "ttft", "inter_token_latency": "itl", "request_latency": "latency",
		"input_sequence_length": "isl", "output_sequence_length": "osl"}[tag]
	return short + "_cdf"
}

// errorSection draws failed requests per slice by type, and the export's
// error summary.
func errorSection(r *artifacts.Run, v *runView) (Section, bool) {
	byType := map[string][]float64{}
	w := binWidth(r, max(v.end, 1e-3))
	starts := bins(max(v.end, 1e-3), w)
	for _, rec := range v.records {
		if !rec.Failed {
			continue
		}
		if byType[rec.ErrorType] == nil {
			byType[rec.ErrorType] = make([]float64, len(starts))
		}
		k := min(int(v.at(max(rec.EndNs, rec.StartNs))/w), len(starts)-1)
		byType[rec.ErrorType][max(k, 0)]++
	}
	var summary []struct {
		Details struct {
			Code    json.RawMessage `json:"code"`
			Type    string          `json:"type"`
			Message string          `json:"message"`
		} `json:"error_details"`
		Count int `json:"count"`
	}
	_ = json.Unmarshal(r.Export["error_summary"], &summary)
	if len(byType) == 0 && len(summary) == 0 {
		return Section{}, false
	}
	s := Section{ID: "errors", Title: "Errors"}
	if len(byType) > 0 {
		types := make([]string, 0, len(byType))
		for t := range byType {
			types = append(types, t)
		}
		sort.Strings(types)
		c := chart.Chart{ID: "errors_over_time", Title: "Failed requests over time, by type",
			X: chart.Axis{Label: "Time since the first request (s)"}, Y: chart.Axis{Label: fmt.Sprintf("Failed requests per %s", seconds(w))}}
		for _, t := range types {
			c.Series = append(c.Series, closedSteps(t, starts, byType[t], max(v.end, 1e-3), false))
		}
		s.Charts = append(s.Charts, c)
	}
	if len(summary) > 0 {
		t := Table{ID: "error-summary", Header: []string{"Type", "Code", "Count", "Message"}}
		for _, e := range summary {
			code := strings.Trim(string(e.Details.Code), `"`)
			if code == "null" {
				code = ""
			}
			t.Rows = append(t.Rows, []Cell{{Text: e.Details.Type}, {Text: code}, {Text: fmt.Sprint(e.Count)}, {Text: e.Details.Message, Class: "text"}})
		}
		s.Tables = append(s.Tables, t)
	}
	return s, true
}

// configSection shows the run's configuration as the export recorded it
// (secrets were redacted before it was written).
func configSection(r *artifacts.Run) Section {
	s := Section{ID: "configuration", Title: "Configuration"}
	var runInfo struct {
		CLI string `json:"cli_command"`
	}
	_ = json.Unmarshal(r.Export["run_info"], &runInfo)
	cli := runInfo.CLI
	if cli == "" {
		_ = json.Unmarshal(orNull(inputConfig(r).raw["cli_command"]), &cli)
	}
	if cli != "" {
		s.Intro = "Command: " + cli
	}
	var b bytes.Buffer
	if raw := r.Export["input_config"]; len(raw) > 0 && json.Indent(&b, raw, "", "  ") == nil {
		s.Pre = b.String()
	} else {
		s.Pre = "The run's export records no configuration."
	}
	return s
}

func orNull(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("null")
	}
	return b
}

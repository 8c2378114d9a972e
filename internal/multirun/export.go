package multirun

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/llmbench/llmbench/internal/export"
)

// AggregateSchemaVersion is the version of AIPerf's aggregate-confidence
// file layout, which evolves apart from the profile export's.
const AggregateSchemaVersion = "1.0"

// FailedRun is a run that produced no results, and why.
type FailedRun struct {
	Label string `json:"label"`
	Error string `json:"error"`
}

// Summary is what the aggregate files hold.
type Summary struct {
	Version         string
	NumRuns         int
	RunLabels       []string // the successful runs
	FailedRuns      []FailedRun
	ConfidenceLevel float64
	CooldownSeconds float64
	Stats           []Stat

	// Sweep cells only (left out of the files when empty, so a plain
	// multi-run aggregate is unchanged): the cell's label, its values by
	// dotted path, the sweep's order ("repeated" or "independent") and
	// the model.
	VariationLabel  string
	VariationValues VariationValues
	SweepMode       string
	Model           string
}

// VariationValue is one swept parameter of a sweep cell.
type VariationValue struct {
	Path  string
	Value any // marshalled as JSON and printed with fmt for the CSV
}

// VariationValues are a cell's swept values, written as a JSON object in
// their order.
type VariationValues []VariationValue

// MarshalJSON writes the values as an object keyed by path, in order.
func (vs VariationValues) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, v := range vs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, v.Path)
		raw, err := json.Marshal(v.Value)
		if err != nil {
			return nil, fmt.Errorf("encode %s: %w", v.Path, err)
		}
		b = append(append(b, ':'), raw...)
	}
	return append(b, '}'), nil
}

// python prints the values as Python prints a dict:
// {'phases.profiling.concurrency': 10}.
func (vs VariationValues) python() string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = "'" + v.Path + "': " + fmt.Sprint(v.Value)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// finite returns v, or nil for NaN and ±Inf, which AIPerf's exports leave
// out rather than write as null.
func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

type statJSON struct {
	Mean      *float64 `json:"mean,omitempty"`
	Std       *float64 `json:"std,omitempty"`
	Min       *float64 `json:"min,omitempty"`
	Max       *float64 `json:"max,omitempty"`
	CV        *float64 `json:"cv,omitempty"`
	SE        *float64 `json:"se,omitempty"`
	CILow     *float64 `json:"ci_low,omitempty"`
	CIHigh    *float64 `json:"ci_high,omitempty"`
	TCritical *float64 `json:"t_critical,omitempty"`
	Unit      string   `json:"unit"`
}

// AggregateJSON renders aggregate/profile_export_aiperf_aggregate.json as
// AIPerf's confidence exporter does: schema_version, aiperf_version, the
// metadata, then "metrics" keyed <tag>_<stat> with mean, std, min, max,
// cv, se, ci_low, ci_high, t_critical and unit; non-finite values left out.
func AggregateJSON(s Summary) ([]byte, error) {
	failed := s.FailedRuns
	if failed == nil {
		failed = []FailedRun{}
	}
	meta := struct {
		AggregationType   string      `json:"aggregation_type"`
		NumProfileRuns    int         `json:"num_profile_runs"`
		NumSuccessfulRuns int         `json:"num_successful_runs"`
		FailedRuns        []FailedRun `json:"failed_runs"`
		ConfidenceLevel   float64     `json:"confidence_level"`
		CooldownSeconds   float64     `json:"cooldown_seconds"`
		RunLabels         []string    `json:"run_labels"`
		SingleRun         bool        `json:"single_run,omitempty"`
		// AIPerf adds these to a sweep cell's metadata after the rest.
		VariationLabel  string          `json:"variation_label,omitempty"`
		VariationValues VariationValues `json:"variation_values,omitempty"`
		SweepMode       string          `json:"sweep_mode,omitempty"`
		Model           string          `json:"model,omitempty"`
	}{"confidence", s.NumRuns, len(s.RunLabels), failed, s.ConfidenceLevel, s.CooldownSeconds, s.RunLabels, len(s.RunLabels) == 1,
		s.VariationLabel, s.VariationValues, s.SweepMode, s.Model}
	var b bytes.Buffer
	b.WriteString("{\n  \"schema_version\": " + strconv.Quote(AggregateSchemaVersion) + ",\n  \"aiperf_version\": " + strconv.Quote(s.Version) + ",\n  \"metadata\": ")
	raw, err := json.MarshalIndent(meta, "  ", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode aggregate metadata: %w", err)
	}
	b.Write(raw)
	b.WriteString(",\n  \"metrics\": {")
	for i, st := range s.Stats {
		if i > 0 {
			b.WriteByte(',')
		}
		raw, err := json.Marshal(statJSON{finite(st.Mean), finite(st.Std), finite(st.Min), finite(st.Max), finite(st.CV), finite(st.SE),
			finite(st.CILow), finite(st.CIHigh), finite(st.TCritical), st.Unit})
		if err != nil {
			return nil, fmt.Errorf("encode %s: %w", st.Name, err)
		}
		b.WriteString("\n    " + strconv.Quote(st.Name) + ": ")
		b.Write(raw)
	}
	if len(s.Stats) > 0 {
		b.WriteString("\n  ")
	}
	b.WriteString("},\n  \"llmbench_version\": " + strconv.Quote(s.Version) + "\n}\n")
	return b.Bytes(), nil
}

// csvNumber is AIPerf's aggregate CSV number: fixed decimals, "inf" and
// "-inf" spelled out, NaN empty.
func csvNumber(v float64, decimals int) string {
	switch {
	case math.IsNaN(v):
		return ""
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	return strconv.FormatFloat(v, 'f', decimals, 64)
}

// AggregateCSV renders aggregate/profile_export_aiperf_aggregate.csv as
// AIPerf does: the statistics table (metric,mean,std,min,max,cv,se,ci_low,
// ci_high,t_critical,unit; cv, se and t_critical with 4 decimals, the rest
// with 2), a blank line, then the metadata as name,value rows.
func AggregateCSV(s Summary) []byte {
	var b bytes.Buffer
	b.WriteString("metric,mean,std,min,max,cv,se,ci_low,ci_high,t_critical,unit\n")
	for _, st := range s.Stats {
		fields := []string{st.Name, csvNumber(st.Mean, 2), csvNumber(st.Std, 2), csvNumber(st.Min, 2), csvNumber(st.Max, 2),
			csvNumber(st.CV, 4), csvNumber(st.SE, 4), csvNumber(st.CILow, 2), csvNumber(st.CIHigh, 2), csvNumber(st.TCritical, 4), st.Unit}
		for i, f := range fields {
			fields[i] = export.CSVField(f)
		}
		b.WriteString(strings.Join(fields, ",") + "\n")
	}
	b.WriteString("\n")
	labels := make([]string, len(s.RunLabels))
	for i, l := range s.RunLabels {
		labels[i] = "'" + l + "'"
	}
	failed := make([]string, len(s.FailedRuns))
	for i, f := range s.FailedRuns {
		failed[i] = f.Label + ": " + f.Error
	}
	rows := [][2]string{
		{"Aggregation Type", "confidence"},
		{"Total Runs", strconv.Itoa(s.NumRuns)},
		{"Successful Runs", strconv.Itoa(len(s.RunLabels))},
		{"Failed Runs", strings.Join(failed, "; ")},
		{"Confidence Level", strconv.FormatFloat(s.ConfidenceLevel, 'g', -1, 64)},
		{"Cooldown Seconds", strconv.FormatFloat(s.CooldownSeconds, 'g', -1, 64)},
		{"Run Labels", "[" + strings.Join(labels, ", ") + "]"},
	}
	// A sweep cell's metadata rows, titled from their keys as AIPerf does.
	for _, row := range [][2]string{
		{"Variation Label", s.VariationLabel},
		{"Variation Values", s.VariationValues.python()},
		{"Sweep Mode", s.SweepMode},
		{"Model", s.Model},
	} {
		if row[1] != "" && row[1] != "{}" {
			rows = append(rows, row)
		}
	}
	for _, row := range rows {
		b.WriteString(export.CSVField(row[0]) + "," + export.CSVField(row[1]) + "\n")
	}
	return b.Bytes()
}

// keyStats are the statistics the console shows after a multi-run profile.
var keyStats = []string{
	"request_throughput_avg", "output_token_throughput_avg", "request_latency_avg", "request_latency_p99",
	"time_to_first_token_avg", "time_to_first_token_p99", "inter_token_latency_avg", "inter_token_latency_p99",
}

// ConsoleTable shows the key metrics' means with their confidence
// intervals: "mean ± half-width unit", the interval and the CV.
func ConsoleTable(stats []Stat, level float64, runs int) string {
	byName := map[string]Stat{}
	for _, s := range stats {
		byName[s.Name] = s
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Across %d runs: mean ± half-width of the %g%% confidence interval\n", runs, level*100)
	fmt.Fprintf(&b, "%-30s %26s %28s %8s\n", "metric", "mean", "interval", "CV")
	for _, name := range keyStats {
		s, ok := byName[name]
		if !ok {
			continue
		}
		half := (s.CIHigh - s.CILow) / 2
		mean := fmt.Sprintf("%.2f ± %.2f %s", s.Mean, half, s.Unit)
		interval := fmt.Sprintf("[%.2f, %.2f]", s.CILow, s.CIHigh)
		fmt.Fprintf(&b, "%-30s %26s %28s %7.2f%%\n", name, mean, interval, s.CV*100)
	}
	return b.String()
}

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
	"strconv"
	"time"

	"github.com/llmbench/llmbench/internal/clientload"
	"github.com/llmbench/llmbench/internal/metrics"
	"github.com/llmbench/llmbench/internal/stats"
)

// Files are the client-side export file names.
type Files struct {
	ProfileJSON, ProfileCSV, Records, Inputs string
}

// ProfileFiles names the client-side exports as AIPerf does: with the default
// prefix "profile_export", profile_export.jsonl and profile_export_aiperf.json/.csv.
func ProfileFiles(prefix string) Files {
	if prefix == "" {
		prefix = "profile_export"
	}
	return Files{ProfileJSON: prefix + "_aiperf.json", ProfileCSV: prefix + "_aiperf.csv", Records: prefix + ".jsonl", Inputs: "inputs.json"}
}

// Summary is what the aggregated exports hold.
type Summary struct {
	SchemaVersion string
	Version       string
	BenchmarkID   string
	Results       metrics.Results
	WasCancelled  bool
	Start, End    time.Time
	// InputConfig is the run's configuration, already redacted.
	InputConfig any
	// ClientLoad is the client's own load during the run (llmbench's).
	ClientLoad *clientload.Report
}

// appendFloat writes v as a JSON number (NaN and ±Inf, which JSON lacks, as null).
func appendFloat(b []byte, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return append(b, "null"...)
	}
	if math.Abs(v) < 1e21 {
		return strconv.AppendFloat(b, v, 'f', -1, 64)
	}
	return strconv.AppendFloat(b, v, 'e', -1, 64)
}

func appendDist(b []byte, unit string, s *stats.Summary) []byte {
	b = append(b, `{"unit":`...)
	b = strconv.AppendQuote(b, unit)
	b = append(b, `,"avg":`...)
	b = appendFloat(b, s.Avg)
	for i, name := range stats.PercentileNames {
		b = append(b, `,"`...)
		b = append(b, name...)
		b = append(b, `":`...)
		b = appendFloat(b, s.P[i])
	}
	b = append(b, `,"min":`...)
	b = appendFloat(b, s.Min)
	b = append(b, `,"max":`...)
	b = appendFloat(b, s.Max)
	b = append(b, `,"std":`...)
	b = appendFloat(b, s.Std)
	return append(b, '}')
}

// ProfileJSON renders profile_export_aiperf.json: one object per metric
// (distributions with avg, p1…p99, min, max, std; single values as avg),
// then the run's status, error summary and configuration.
func ProfileJSON(s Summary) ([]byte, error) {
	b := []byte("{\n")
	field := func(key string, raw []byte) {
		if len(b) > 2 {
			b = append(b, ",\n"...)
		}
		b = append(b, "  "...)
		b = strconv.AppendQuote(b, key)
		b = append(b, ": "...)
		b = append(b, raw...)
	}
	str := func(v string) []byte { return strconv.AppendQuote(nil, v) }
	field("schema_version", str(s.SchemaVersion))
	field("llmbench_version", str(s.Version))
	field("benchmark_id", str(s.BenchmarkID))
	for _, r := range s.Results.Metrics {
		if r.Dist != nil {
			field(r.Def.Tag, appendDist(nil, r.Def.Unit, r.Dist))
			continue
		}
		v := append([]byte(`{"unit":`), strconv.AppendQuote(nil, r.Def.Unit)...)
		v = append(v, `,"avg":`...)
		if r.Exact != nil {
			v = strconv.AppendInt(v, *r.Exact, 10)
		} else {
			v = appendFloat(v, r.Value)
		}
		v = append(v, '}')
		field(r.Def.Tag, v)
	}
	field("was_cancelled", strconv.AppendBool(nil, s.WasCancelled))
	field("start_time", str(s.Start.Format(timeLayout)))
	field("end_time", str(s.End.Format(timeLayout)))
	if s.ClientLoad != nil {
		raw, err := json.Marshal(s.ClientLoad)
		if err != nil {
			return nil, fmt.Errorf("encode client load: %w", err)
		}
		field("client_load", raw)
	}

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
	var cfg bytes.Buffer
	enc := json.NewEncoder(&cfg)
	enc.SetEscapeHTML(false)
	enc.SetIndent("  ", "  ")
	if err := enc.Encode(s.InputConfig); err != nil {
		return nil, fmt.Errorf("encode input config: %w", err)
	}
	field("input_config", bytes.TrimRight(cfg.Bytes(), "\n"))
	return append(b, "\n}\n"...), nil
}

// timeLayout is ISO 8601 with microseconds, as AIPerf writes start_time.
const timeLayout = "2006-01-02T15:04:05.000000"

// ProfileCSV renders profile_export_aiperf.csv: a section of distributions
// ("Metric,avg,min,max,p1,…,p99,std"), a blank line, then a section of
// single values ("Metric,Value"). Numbers have two decimals, as AIPerf's.
func ProfileCSV(rs metrics.Results) []byte {
	var b bytes.Buffer
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
	label := func(d metrics.Def) string {
		if d.Unit == "" {
			return csvField(d.Header)
		}
		return csvField(d.Header + " (" + d.Unit + ")")
	}
	b.WriteString("Metric,avg,min,max")
	for _, n := range stats.PercentileNames {
		b.WriteString("," + n)
	}
	b.WriteString(",std\n")
	for _, r := range rs.Metrics {
		if r.Dist == nil {
			continue
		}
		d := r.Dist
		b.WriteString(label(r.Def) + "," + num(d.Avg) + "," + num(d.Min) + "," + num(d.Max))
		for _, p := range d.P {
			b.WriteString("," + num(p))
		}
		b.WriteString("," + num(d.Std) + "\n")
	}
	b.WriteString("\nMetric,Value\n")
	for _, r := range rs.Metrics {
		switch {
		case r.Exact != nil:
			b.WriteString(label(r.Def) + "," + strconv.FormatInt(*r.Exact, 10) + "\n")
		case r.Dist == nil:
			b.WriteString(label(r.Def) + "," + num(r.Value) + "\n")
		}
	}
	return b.Bytes()
}

func csvField(s string) string {
	if bytes.ContainsAny([]byte(s), ",\"\n") {
		return `"` + string(bytes.ReplaceAll([]byte(s), []byte(`"`), []byte(`""`))) + `"`
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

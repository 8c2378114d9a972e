// Package artifacts reads the files a profile run leaves in its artifact
// folder (llmbench's or AIPerf's): the per-request records with their
// timestamps, the aggregate export, the server-metrics scrapes and export,
// and the GPU telemetry. Reports and plots are drawn from these files, so
// that a report regenerated later, or drawn from AIPerf's own folders,
// shows exactly what a run's own report shows.
package artifacts

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// The files of one run, as AIPerf and llmbench name them without
// --profile-export-prefix.
const (
	RecordsFile       = "profile_export.jsonl"
	ExportFile        = "profile_export_aiperf.json"
	ServerScrapesFile = "server_metrics_export.jsonl"
	ServerExportFile  = "server_metrics_export.json"
	TelemetryFile     = "gpu_telemetry_export.jsonl"
)

// Names are the file names a run's files have (a run made with
// --profile-export-prefix has others).
type Names struct {
	Records, Export string
}

// DefaultNames are the names of a run without an export prefix.
var DefaultNames = Names{Records: RecordsFile, Export: ExportFile}

// Run is one run's artifacts, as far as they were found.
type Run struct {
	Dir string
	// Metrics are the aggregate export's metrics by tag; nil without the
	// export.
	Metrics map[string]Metric
	// Export is the aggregate export's other top-level entries, raw
	// (input_config, run_info, error_summary, start_time, run_verdict, …).
	Export map[string]json.RawMessage
	// Records are the per-request records in file order; HasRecords is
	// false without the records file.
	Records    []Record
	HasRecords bool
	// Server is the server-metrics export and scrapes; nil without either.
	Server *Server
	// GPUs are the GPU telemetry samples; nil without the file.
	GPUs []GPUSample
}

// Metric is one metric of the aggregate export.
type Metric struct {
	Unit string
	// Stats are the numeric statistics by name: avg, p50, p99, min, …
	Stats map[string]float64
}

// Stat returns one statistic of a metric.
func (r *Run) Stat(tag, stat string) (float64, bool) {
	m, ok := r.Metrics[tag]
	if !ok {
		return 0, false
	}
	v, ok := m.Stats[stat]
	return v, ok
}

// String returns a top-level string entry of the export ("" if none).
func (r *Run) String(key string) string {
	var s string
	_ = json.Unmarshal(r.Export[key], &s)
	return s
}

// ErrNotARun is returned by LoadRun for a folder with neither the
// records nor the aggregate export.
var ErrNotARun = errors.New("not a run's artifact folder")

// LoadRun reads a run's folder. It needs the records or the aggregate
// export; the server metrics and GPU telemetry are read when present.
// keep, when given, names the only per-request metrics kept of each
// record (a long run's records hold dozens each).
func LoadRun(dir string, names Names, keep ...string) (*Run, error) {
	r := &Run{Dir: dir}
	b, err := os.ReadFile(filepath.Join(dir, names.Export))
	switch {
	case err == nil:
		if r.Metrics, r.Export, err = ParseExport(b); err != nil {
			return nil, fmt.Errorf("read %s: %w", filepath.Join(dir, names.Export), err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("read %s: %w", filepath.Join(dir, names.Export), err)
	}
	f, err := os.Open(filepath.Join(dir, names.Records))
	switch {
	case err == nil:
		r.Records, err = ReadRecords(f, keep...)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", filepath.Join(dir, names.Records), err)
		}
		r.HasRecords = true
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("read %s: %w", filepath.Join(dir, names.Records), err)
	}
	if r.Metrics == nil && !r.HasRecords {
		return nil, fmt.Errorf("%s: %w: it holds neither %s nor %s", dir, ErrNotARun, names.Records, names.Export)
	}
	if r.Server, err = loadServer(dir); err != nil {
		return nil, err
	}
	if r.GPUs, err = loadTelemetry(filepath.Join(dir, TelemetryFile)); err != nil {
		return nil, err
	}
	return r, nil
}

// ParseExport splits profile_export_aiperf.json into its metrics (objects
// with a unit and numeric statistics) and its other entries.
func ParseExport(b []byte) (map[string]Metric, map[string]json.RawMessage, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return nil, nil, err
	}
	metrics := make(map[string]Metric, len(top))
	for tag, raw := range top {
		if len(raw) == 0 || raw[0] != '{' {
			continue
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(raw, &fields); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", tag, err)
		}
		var unit string
		if u, ok := fields["unit"]; !ok || json.Unmarshal(u, &unit) != nil {
			continue
		}
		m := Metric{Unit: unit, Stats: make(map[string]float64, len(fields))}
		for name, v := range fields {
			if x, err := strconv.ParseFloat(string(v), 64); err == nil {
				m.Stats[name] = x
			}
		}
		metrics[tag] = m
		delete(top, tag)
	}
	return metrics, top, nil
}

package benchmark

import (
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/llmbench/llmbench/internal/config"
	"github.com/llmbench/llmbench/internal/export"
	"github.com/llmbench/llmbench/internal/metrics"
	"github.com/llmbench/llmbench/internal/record"
)

// ReplayInput is a run whose records were kept before (the shards of a
// sharded run), to be exported as one.
type ReplayInput struct {
	// Profile is the run's configuration; its ArtifactDir is where the
	// exports go.
	Profile config.Profile
	Version string
	// StartNs and EndNs bound the profiling phase (wall-clock ns);
	// Profiled is false when it never began.
	StartNs, EndNs int64
	Profiled       bool
	Cancelled      bool
	// Records hands every kept record and its metrics to keep.
	Records func(keep func(*record.Record, *metrics.Values)) error
	// RunInfo is written as run_info; its BenchmarkID is drawn when empty.
	RunInfo export.RunInfo
	// Log receives warnings; nil discards them.
	Log io.Writer
}

// Replay computes and writes a run's client exports (the profile JSON and
// CSV, time slices, the report) from records kept before, through the
// collector and exporters Run uses: the same statistics, by the same
// code. It writes neither profile_export.jsonl nor inputs.json, nor any
// server-side file: a merge takes those from the shards as they are.
func Replay(in ReplayInput) (*Result, error) {
	if in.Log == nil {
		in.Log = io.Discard
	}
	p := in.Profile
	dir, names := p.Output.ArtifactDir, export.ProfileFiles(p.Output.ExportPrefix)
	win := &window{startNs: in.StartNs, endNs: in.EndNs, profiled: in.Profiled, start: time.Unix(0, in.StartNs), end: time.Unix(0, in.EndNs)}
	win.profilingStart.Store(in.StartNs)
	col := newCollector(export.DiscardRecords(), p, win, nil) // no processors: records are kept as they come
	defer col.close()
	readErr := in.Records(col.keep)
	results, spillErr := col.finish()
	if w := col.invalid.warning(); w != "" {
		fmt.Fprintln(in.Log, w)
	}
	runVerdict := judgeRun(p, &results, nil, col.verdict, win, nil)
	info := in.RunInfo
	if info.BenchmarkID == "" {
		info.BenchmarkID = record.UUID(rand.Uint64(), rand.Uint64())
	}
	summary := export.Summary{
		Version: in.Version, BenchmarkID: info.BenchmarkID, Results: results, WasCancelled: in.Cancelled,
		Start: win.start, End: win.end, InputConfig: p.Redacted(), Verdict: &runVerdict, RunInfo: info,
	}
	res := &Result{Summary: summary, ArtifactDir: dir, ProfileJSON: names.ProfileJSON, ServerURLs: p.Endpoint.URLs}
	if p.Endpoint.Mock {
		res.ServerURLs = []string{"the built-in servers of the shards"}
	}
	if err := writeExports(dir, names, summary, nil, col.timeslices(win.endNs), nil, res); err != nil {
		return res, err
	}
	if readErr != nil {
		return res, readErr
	}
	if err := col.close(); err != nil {
		return res, err
	}
	if spillErr != nil {
		return res, spillErr
	}
	return res, nil
}

// WriteReport draws a run folder's report.html from its files (after a
// merge has put every one in place).
func WriteReport(dir string, p config.Profile, version string, log io.Writer, res *Result) {
	if log == nil {
		log = io.Discard
	}
	writeReport(dir, export.ProfileFiles(p.Output.ExportPrefix), Options{Version: version, Log: log}, res)
}

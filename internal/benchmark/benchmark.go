// Package benchmark runs one profile: it builds the dataset, starts the
// simulated server when asked, drives the load through the client, turns
// every record into metrics as it arrives, and writes the exports. It is the
// only package that sees the whole flow.
package benchmark

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"sync"
	"time"

	"github.com/llmbench/llmbench/internal/clientload"
	"github.com/llmbench/llmbench/internal/config"
	"github.com/llmbench/llmbench/internal/export"
	"github.com/llmbench/llmbench/internal/gputelemetry"
	"github.com/llmbench/llmbench/internal/mockserver"
	"github.com/llmbench/llmbench/internal/record"
	"github.com/llmbench/llmbench/internal/schedule"
	"github.com/llmbench/llmbench/internal/servermetrics"
	"github.com/llmbench/llmbench/internal/ui"
)

// SchemaVersion is the version of llmbench's profile export layout.
const SchemaVersion = "1.0"

// Options are what a run needs besides its profile.
type Options struct {
	Profile config.Profile
	// Mock configures the built-in server when Profile.Endpoint.Mock is set.
	Mock    mockserver.Config
	Version string
	// Progress receives the live progress line; nil for none.
	Progress io.Writer
	Terminal bool
	// ProgressInterval defaults to one second.
	ProgressInterval time.Duration
	// Log receives warnings (an endpoint disabled, …); nil discards them.
	Log io.Writer
	// Abort, when it ends (a second Ctrl-C), stops waiting for anything
	// (the final server-metrics scrape) and writes the artifacts with what
	// there is. ctx ending (a first Ctrl-C) stops sending and cancels the
	// requests in flight. Nil: never.
	Abort context.Context
	// Trial and RunLabel identify a run of --num-profile-runs in run_info
	// (0 and "" for a single run).
	Trial    int
	RunLabel string
	// Redactor removes the run's secrets from error messages that servers
	// echo back before they are recorded; nil for none.
	Redactor *config.Redactor
	// Shared, when set, is what this run reuses from the runs before it
	// and leaves to the runs after it (a sweep's cells, a search's
	// probes); nil: the run makes and closes its own.
	Shared *Shared
	// Samples names metrics whose per-request values of the profiling
	// phase Result.Samples keeps, for decisions on pooled samples (a
	// search's SLA verdicts). request_error_rate keeps 100 per failed
	// request and 0 per success; good_request_fraction 1 or 0 per success.
	Samples []string
	// HistogramEstimator, when set, estimates the server histograms'
	// percentiles instead of --histogram-estimator's (a caller's own, or
	// one that records what it was asked).
	HistogramEstimator servermetrics.Estimator
}

// Result is what a finished run produced.
type Result struct {
	Summary     export.Summary
	ArtifactDir string
	// Files are the artifact files written, by name.
	Files []string
	// ProfileJSON is the name of the aggregate JSON export among them.
	ProfileJSON string
	// ServerURLs are the base URLs benchmarked (the mock's when it was used).
	ServerURLs []string
	// ServerMetrics are the aggregated server metrics, when collected.
	ServerMetrics []servermetrics.Metric
	// GPUTelemetry is the GPUs' statistics and energy, when any GPU was
	// seen; ShowGPUTables says whether the per-GPU tables were asked for.
	GPUTelemetry  *gputelemetry.Report
	ShowGPUTables bool
	// Samples are the per-request values of Options.Samples, by tag.
	Samples map[string][]float64
}

// clientLoadInterval is how often the client's own CPU use and timer
// delay are sampled during the load.
const clientLoadInterval = 10 * time.Millisecond

// Run executes the profile. It returns an error only when the run could not
// start or its artifacts could not be written; failed requests are results.
// When ctx is cancelled the run stops early and still writes its artifacts.
func Run(ctx context.Context, opts Options) (*Result, error) {
	opts = opts.withDefaults()
	p := opts.Profile
	seed := seedOf(&p)

	// Prepare: the tokenizer, every request body, the server, the output
	// files, the baseline scrape (the reference for deltas), the client.
	tok, corpus, err := opts.Shared.loadText(ctx, p, opts.Log)
	if err != nil {
		return nil, inputError(ctx, err)
	}
	if err := fetchPublicDataset(ctx, &p); err != nil {
		return nil, inputError(ctx, err)
	}
	in, err := buildInputs(p, seed, corpus)
	if err != nil {
		return nil, inputError(ctx, err)
	}
	plan, err := planOf(p, in, seed)
	if err != nil {
		return nil, inputError(ctx, err)
	}
	mock := opts.Mock
	if mock.Language == nil {
		mock.Language = corpus // the built-in server speaks the client's tokenizer
	}
	targets, gpuURLs, stopTargets, err := opts.Shared.startTargets(p, mock, opts.Log)
	if err != nil {
		return nil, err
	}
	defer stopTargets()
	if err := waitForModel(ctx, p, targets, in, opts.Log); err != nil {
		return nil, err
	}
	if p.Endpoint.ResetKVCache {
		if err := resetKVCache(ctx, p, targets, opts.Log); err != nil {
			return nil, err
		}
	}
	dir, names, clock := p.Output.ArtifactDir, export.ProfileFiles(p.Output.ExportPrefix), opts.Shared.runClock()
	records, err := newRecordWriter(p, dir, names, clock, opts.Redactor)
	if err != nil {
		return nil, err
	}
	sm, gpu, err := startScrapes(ctx, p, targets, gpuURLs, dir, clock, opts.Log, opts.HistogramEstimator)
	if err != nil {
		_ = records.Close()
		return nil, err
	}
	cl, closeClients := opts.Shared.newClients(p, targets, in.kind, in.typ, clock)
	defer closeClients()
	shard, err := startShard(p, dir, opts.Version)
	if err != nil {
		_ = records.Close()
		return nil, err
	}

	// Drive the load; every finished request goes to the collector.
	var counters ui.Counters
	stopProgress := startProgress(opts, &counters, in.expected+plan.Shard.Part(p.Loadgen.WarmupRequestCount), p.Loadgen.BenchmarkDuration)
	win := &window{clock: clock}
	col := startCollector(records, tok, clock, p, opts.Redactor, win, opts.Samples)
	defer col.close()
	col.shard = shard.log // before any record is sent
	// A spill that cannot write (a full disk) stops the load: the run
	// fails with its error rather than going on without its values.
	loadCtx, stopLoad := context.WithCancelCause(ctx)
	defer stopLoad(nil)
	col.spill.OnError(func(err error) {
		fmt.Fprintf(opts.Log, "ERROR  %v: stopping the run\n", err)
		stopLoad(err)
	})
	stopWatch := watchInterrupt(ctx, func() {
		// Everything finished so far goes to disk now, whatever comes next.
		_ = records.Flush()
		_ = shard.log.Flush()
		lead := ""
		if opts.Progress != nil && opts.Terminal {
			lead = "\n" // off the progress line redrawn in place
		}
		fmt.Fprintln(opts.Log, lead+stoppingMessage(counters.InFlight(), sm, p.ServerMetrics.ReachabilityTimeout))
	})
	defer stopWatch()
	runtime.GC() // the tokenizer's and inputs' garbage, collected before the load, not during it
	if gpu != nil && !hasWarmup(p) {
		gpu.referenceReading(ctx)
	}
	load := clientload.Start(clientLoadInterval)
	outcome, runErr := schedule.Run(loadCtx, plan, newRequester(p, in, cl, tok, clock, &counters, col, seed).send, win.observer(ctx, sm, gpu, p.ServerMetrics.Interval))
	clientLoad := load.Stop()
	results, writeErr := col.finish()
	shardErr := shard.log.Close()
	shard.ran(outcome, win)
	clientLoad.Judge(finestLatency(&results))
	stopProgress()
	for _, w := range []string{lateWarning(p, outcome), col.invalid.warning(), clientLoad.Warning()} {
		if w != "" {
			fmt.Fprintln(opts.Log, w)
		}
	}
	win.close()

	// Finish: the final scrapes, then every export.
	var smErr, gpuErr error
	var finishing sync.WaitGroup
	if sm != nil {
		finishing.Go(func() { smErr = sm.finish(ctx, opts.Abort) })
	}
	if gpu != nil {
		finishing.Go(func() { gpuErr = gpu.finish(ctx, opts.Abort) })
	}
	finishing.Wait()
	var telemetry *gputelemetry.Report
	if gpu != nil {
		telemetry = gpu.summarize(win, opts.Log)
		results.Metrics = append(results.Metrics, energyMetrics(telemetry, results, p)...)
	}
	runVerdict := judgeRun(p, &results, &clientLoad, col.verdict, win, sm)
	closeErr := records.Close()
	benchmarkID := record.UUID(rand.Uint64(), rand.Uint64())
	summary := export.Summary{
		Version: opts.Version, BenchmarkID: benchmarkID,
		Results: results, WasCancelled: outcome.Cancelled, Start: win.start, End: win.end,
		InputConfig: p.Redacted(), ClientLoad: &clientLoad, Telemetry: telemetry, Verdict: &runVerdict,
		RunInfo: export.RunInfo{BenchmarkID: benchmarkID, RandomSeed: p.Input.RandomSeed, Trial: opts.Trial, RunLabel: opts.RunLabel, CLICommand: p.CLICommand, Shard: shard.info},
	}
	res := &Result{Summary: summary, ArtifactDir: dir, ServerURLs: bases(targets), ProfileJSON: names.ProfileJSON, GPUTelemetry: telemetry, Samples: col.samples.kept()}
	if p.Output.WritesRecords() {
		res.Files = append(res.Files, names.Records)
	}
	if gpu != nil {
		res.Files, res.ShowGPUTables = append(res.Files, gpu.files()...), gpu.show
	}
	if err := writeExports(dir, names, summary, in.inputsJSON, col.timeslices(win.endNs), opts.Redactor, res); err != nil {
		return res, err
	}
	if sm != nil {
		files, metrics, err := sm.export(dir, win, export.ServerMetrics{
			SchemaVersion: SchemaVersion, Version: opts.Version, BenchmarkID: summary.BenchmarkID, InputConfig: summary.InputConfig,
			ModelNames: p.Endpoint.ModelNames, Concurrency: p.Loadgen.Concurrency, RequestRate: p.Loadgen.RequestRate,
		})
		res.Files, res.ServerMetrics = append(res.Files, files...), metrics
		if err != nil {
			return res, err
		}
	}
	writeReport(dir, names, opts, res)
	spillErr := col.close()
	for _, err := range []error{runErr, writeErr, closeErr, shardErr, smErr, gpuErr, spillErr} {
		if err != nil {
			return res, err
		}
	}
	return res, nil
}

// InputError is a refusal of the user's input before the first request:
// a dataset, trace, tokenizer or --extra-inputs value that cannot be used.
// Like a bad command line, it is a usage error (exit code 2), not a run
// whose requests failed.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// inputError marks err as the input's fault, unless the run was stopped
// (a Ctrl-C while loading is no fault of the input).
func inputError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return err
	}
	return &InputError{Err: err}
}

func (o Options) withDefaults() Options {
	if o.Abort == nil {
		o.Abort = context.Background()
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	// The scrape collectors warn from their own goroutines while the load
	// reports progress and Run warns from its own; the caller's writers
	// (often one terminal, or a bytes.Buffer in tests) need not be safe for
	// that, so every write goes through one lock.
	mu := new(sync.Mutex)
	o.Log = &lockedWriter{mu: mu, w: o.Log}
	if o.Progress != nil {
		o.Progress = &lockedWriter{mu: mu, w: o.Progress}
	}
	return o
}

// lockedWriter serializes writes to w under mu, shared by the writers of
// one run.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// writeExports writes the client-side files: the profile JSON and CSV,
// inputs.json (the payloads as sent, but for the run's secrets: an
// --extra-inputs api_key is sent, not written; not when sessions is
// nil), and with time slices
// (non-nil) their JSON and CSV.
func writeExports(dir string, names export.Files, s export.Summary, sessions []export.InputSession, slices []export.Timeslice, red *config.Redactor, res *Result) error {
	j, err := export.ProfileJSON(s)
	if err != nil {
		return err
	}
	profileCSV := export.ProfileCSV(s.Results)
	if s.Telemetry != nil {
		profileCSV = append(profileCSV, export.TelemetryCSV(*s.Telemetry)...)
	}
	type file struct {
		name string
		data []byte
	}
	files := []file{
		{names.ProfileJSON, j},
		{names.ProfileCSV, profileCSV},
	}
	if sessions != nil { // nil: a merge, which takes the shards' inputs.json
		inputs, err := export.InputsJSON(sessions)
		if err != nil {
			return err
		}
		files = append(files, file{names.Inputs, red.RedactBytes(inputs)})
	}
	if slices != nil {
		sj, err := export.TimeslicesJSON(slices, s.InputConfig)
		if err != nil {
			return err
		}
		files = append(files, file{names.TimeslicesJSON, sj}, file{names.TimeslicesCSV, export.TimeslicesCSV(slices)})
	}
	for _, f := range files {
		if err := export.WriteFile(dir, f.name, f.data); err != nil {
			return err
		}
		res.Files = append(res.Files, f.name)
	}
	return nil
}

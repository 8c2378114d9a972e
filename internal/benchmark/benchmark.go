// Package benchmark runs one profile: it builds the dataset, starts the
// simulated server when asked, drives the load through the client, turns
// every record into metrics as it arrives, and writes the exports. It is the
// only package that sees the whole flow.
package benchmark

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/llmbench/llmbench/internal/client"
	"github.com/llmbench/llmbench/internal/config"
	"github.com/llmbench/llmbench/internal/dataset"
	"github.com/llmbench/llmbench/internal/endpoint"
	"github.com/llmbench/llmbench/internal/export"
	"github.com/llmbench/llmbench/internal/metrics"
	"github.com/llmbench/llmbench/internal/mockserver"
	"github.com/llmbench/llmbench/internal/record"
	"github.com/llmbench/llmbench/internal/schedule"
	"github.com/llmbench/llmbench/internal/servermetrics"
	"github.com/llmbench/llmbench/internal/tokenizer"
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
	// Redactor removes the run's secrets from error messages that servers
	// echo back before they are recorded; nil for none.
	Redactor *config.Redactor
}

// Result is what a finished run produced.
type Result struct {
	Summary     export.Summary
	ArtifactDir string
	// Files are the artifact files written, by name.
	Files []string
	// ProfileJSON is the name of the aggregate JSON export among them.
	ProfileJSON string
	// ServerURL is the base URL benchmarked (the mock's when it was used).
	ServerURL string
	// ServerMetrics are the aggregated server metrics, when collected.
	ServerMetrics []servermetrics.Metric
}

// Run executes the profile. It returns an error only when the run could not
// start or its artifacts could not be written; failed requests are results.
// When ctx is cancelled the run stops early and still writes its artifacts.
func Run(ctx context.Context, opts Options) (*Result, error) {
	p := opts.Profile
	if opts.Abort == nil {
		opts.Abort = context.Background()
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	tok := tokenizer.Builtin{}
	if p.Input.RandomSeed == nil {
		// Record the seed drawn so the exported config can reproduce the run.
		s := int64(rand.Uint64() >> 1)
		p.Input.RandomSeed = &s
	}
	seed := uint64(*p.Input.RandomSeed)
	entries, err := dataset.Synthetic{
		Entries:      p.Input.NumDatasetEntries,
		InputMean:    p.Input.Prompt.InputTokens.Mean,
		InputStddev:  p.Input.Prompt.InputTokens.Stddev,
		OutputMean:   p.Input.Prompt.OutputTokens.Mean,
		OutputStddev: p.Input.Prompt.OutputTokens.Stddev,
		Seed:         seed,
	}.Generate(tok)
	if err != nil {
		return nil, err
	}
	kind, err := endpoint.Parse(p.Endpoint.Type)
	if err != nil {
		return nil, err
	}
	extra, err := endpoint.ParseExtraInputs(p.Endpoint.ExtraInputs)
	if err != nil {
		return nil, err
	}
	model := p.Endpoint.ModelNames[0]
	payloads := make([][]byte, len(entries))
	sessions := make([]export.InputSession, len(entries))
	for i, e := range entries {
		payloads[i], err = kind.Body(endpoint.Input{Model: model, Prompt: e.Prompt, MaxTokens: e.MaxTokens, Streaming: p.Endpoint.Streaming, Extra: extra})
		if err != nil {
			return nil, err
		}
		sessions[i] = export.InputSession{SessionID: e.ConversationID, Payloads: []json.RawMessage{payloads[i]}}
	}

	baseURL := p.Endpoint.URL
	if p.Endpoint.Mock {
		srv, err := mockserver.New(opts.Mock)
		if err != nil {
			return nil, fmt.Errorf("start the built-in server: %w", err)
		}
		// The server outlives ctx so that requests cancelled by Ctrl-C end
		// on the client side, where they are recorded.
		url, stop, err := srv.Start(context.Background(), "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("start the built-in server: %w", err)
		}
		defer stop()
		baseURL = url
	}
	path := kind.Path()
	if p.Endpoint.Custom != "" {
		path = "/" + trimSlashes(p.Endpoint.Custom)
	}
	targetURL := config.JoinURL(baseURL, path)

	dir := p.Output.ArtifactDir
	names := export.ProfileFiles(p.Output.ExportPrefix)
	clock := record.NewClock()
	records, err := export.NewRecordWriter(dir, names.Records, clock)
	if err != nil {
		return nil, err
	}
	// The baseline scrape happens here, before warm-up: the reference for deltas.
	sm, err := startServerMetrics(ctx, p, baseURL, dir, clock, opts.Log)
	if err != nil {
		_ = records.Close()
		return nil, err
	}
	maxConns := p.Loadgen.Concurrency
	if maxConns == 0 {
		maxConns = 256
	}
	cl := client.New(client.Options{
		URL: targetURL, Kind: kind, Streaming: p.Endpoint.Streaming, Timeout: p.Endpoint.RequestTimeout,
		APIKey: p.Endpoint.APIKey, Headers: p.Endpoint.Headers, User: p.Endpoint.User, MaxConns: maxConns, Clock: clock,
	})
	defer cl.Close()

	var counters ui.Counters
	stopProgress := make(chan struct{})
	var progressDone sync.WaitGroup
	if opts.Progress != nil {
		interval := opts.ProgressInterval
		if interval <= 0 {
			interval = time.Second
		}
		progressDone.Go(func() {
			ui.Progress(opts.Progress, &counters, p.Loadgen.RequestCount+p.Loadgen.WarmupRequestCount, interval, opts.Terminal, stopProgress)
		})
	}

	// One collector turns records into metrics and JSONL lines in arrival order.
	done := make(chan *record.Record, 4096)
	agg := metrics.NewAggregator()
	mopts := metrics.DefaultOptions()
	mopts.UseServerTokenCount = p.Tokenizer.UseServerTokenCount
	var writeErr error
	var invalid invalidTally
	var collector sync.WaitGroup
	collector.Go(func() {
		for r := range done {
			if r.Err != nil {
				r.Err.Message = opts.Redactor.Redact(r.Err.Message)
			}
			invalid.add(r)
			v := metrics.Compute(r, tok, clock, mopts)
			if err := records.Write(r, &v); err != nil && writeErr == nil {
				writeErr = err
			}
			if r.Phase == record.PhaseProfiling {
				agg.Add(r, &v)
			}
		}
	})

	idRNG := rand.New(rand.NewPCG(seed, 0x7265717565737473)) // "requests"
	var idMu sync.Mutex
	send := func(ctx context.Context, job schedule.Job) {
		e := entries[job.Index%len(entries)]
		idMu.Lock()
		reqID := record.UUID(idRNG.Uint64(), idRNG.Uint64())
		idMu.Unlock()
		r := &record.Record{
			SessionNum: job.Index, ConversationID: e.ConversationID, XRequestID: reqID, Phase: job.Phase,
			InputTokens: e.InputTokens, RequestedOutputTokens: e.MaxTokens,
		}
		counters.Sent.Add(1)
		cl.Do(ctx, r, payloads[job.Index%len(entries)])
		if r.Valid() {
			counters.Completed.Add(1)
		} else {
			counters.Errors.Add(1)
		}
		done <- r
	}

	var start, end time.Time
	var startNs, endNs int64
	obs := schedule.Observer{
		PhaseStart: func(ph record.Phase, t time.Time) {
			if ph == record.PhaseProfiling {
				start, startNs = t, clock.Wall(clock.Perf(t))
			}
		},
		PhaseEnd: func(ph record.Phase, t time.Time) {
			switch {
			case ph == record.PhaseProfiling:
				end, endNs = t, clock.Wall(clock.Perf(t))
			case ph == record.PhaseWarmup && sm != nil:
				// The reference for profiling deltas: the state right now.
				sm.collector.Checkpoint(ctx, p.ServerMetrics.Interval)
			}
		},
	}
	plan := schedule.Plan{
		Concurrency: p.Loadgen.Concurrency, Rate: p.Loadgen.RequestRate, Poisson: p.Loadgen.RequestRateMode == config.RatePoisson,
		Count: p.Loadgen.RequestCount, Warmup: p.Loadgen.WarmupRequestCount,
		Duration: p.Loadgen.BenchmarkDuration, Grace: p.Loadgen.GracePeriod, Seed: seed,
	}
	stopWatch := watchInterrupt(ctx, func() {
		// Everything finished so far goes to disk now, whatever comes next.
		_ = records.Flush()
		lead := ""
		if opts.Progress != nil && opts.Terminal {
			lead = "\n" // off the progress line redrawn in place
		}
		fmt.Fprintln(opts.Log, lead+stoppingMessage(counters.InFlight(), sm, p.ServerMetrics.ReachabilityTimeout))
	})
	defer stopWatch()
	outcome, runErr := schedule.Run(ctx, plan, send, obs)
	close(done)
	collector.Wait()
	close(stopProgress)
	progressDone.Wait()
	if w := invalid.warning(); w != "" {
		fmt.Fprintln(opts.Log, w)
	}
	if start.IsZero() {
		start = time.Now()
		startNs = clock.Now() + clock.Wall(0)
	}
	if end.IsZero() {
		end = time.Now()
		endNs = clock.Now() + clock.Wall(0)
	}
	var smErr error
	if sm != nil {
		smErr = sm.finish(ctx, opts.Abort)
	}

	closeErr := records.Close()
	summary := export.Summary{
		SchemaVersion: SchemaVersion, Version: opts.Version, BenchmarkID: record.UUID(rand.Uint64(), rand.Uint64()),
		Results: agg.Results(), WasCancelled: outcome.Cancelled, Start: start, End: end,
		InputConfig: p.Redacted(),
	}
	res := &Result{Summary: summary, ArtifactDir: dir, ServerURL: baseURL, Files: []string{names.Records}, ProfileJSON: names.ProfileJSON}
	if err := writeExports(dir, names, summary, sessions, res); err != nil {
		return res, err
	}
	if sm != nil {
		files, metrics, err := sm.export(dir, startNs, endNs, start, end, export.ServerMetrics{
			SchemaVersion: SchemaVersion, Version: opts.Version, BenchmarkID: summary.BenchmarkID, InputConfig: summary.InputConfig,
			ModelNames: p.Endpoint.ModelNames, Concurrency: p.Loadgen.Concurrency, RequestRate: p.Loadgen.RequestRate,
		})
		res.Files, res.ServerMetrics = append(res.Files, files...), metrics
		if err != nil {
			return res, err
		}
	}
	for _, err := range []error{runErr, writeErr, closeErr, smErr} {
		if err != nil {
			return res, err
		}
	}
	return res, nil
}

func writeExports(dir string, names export.Files, s export.Summary, sessions []export.InputSession, res *Result) error {
	j, err := export.ProfileJSON(s)
	if err != nil {
		return err
	}
	inputs, err := export.InputsJSON(sessions)
	if err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		data []byte
	}{
		{names.ProfileJSON, j},
		{names.ProfileCSV, export.ProfileCSV(s.Results)},
		{names.Inputs, inputs},
	} {
		if err := export.WriteFile(dir, f.name, f.data); err != nil {
			return err
		}
		res.Files = append(res.Files, f.name)
	}
	return nil
}

func trimSlashes(s string) string {
	for len(s) > 0 && s[0] == '/' {
		s = s[1:]
	}
	return s
}

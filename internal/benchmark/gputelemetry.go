package benchmark

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/llmbench/llmbench/internal/config"
	"github.com/llmbench/llmbench/internal/export"
	"github.com/llmbench/llmbench/internal/gputelemetry"
	"github.com/llmbench/llmbench/internal/metrics"
	"github.com/llmbench/llmbench/internal/record"
	"github.com/llmbench/llmbench/internal/scrape"
)

// gpuTelemetry is a run's GPU telemetry collection: DCGM exporters scraped
// by the same collector as server metrics, on their own schedule, into a
// store of per-GPU readings and the per-scrape JSONL.
type gpuTelemetry struct {
	cfg       config.GPUTelemetry
	store     *gputelemetry.Store
	collector *scrape.Collector
	jsonl     *export.TelemetryWriter
	jsonlName string
	jsonlErr  error
	// show is whether the per-GPU tables are printed: --gpu-telemetry, or
	// GPUs asked of the built-in server.
	show bool
	// optional are the default ports probed.
	optional map[string]bool
	log      io.Writer
}

// newGPUTelemetry prepares the scraping of the DCGM exporters given with
// --gpu-telemetry, the built-in server's (--mock-gpus), and AIPerf's
// default ports (startScrapes starts it). A default port is dropped
// without a word when nothing answers there, or something that is not a
// DCGM exporter; one that is said so, since its GPUs are counted. The
// defaults are left out with --mock: the simulated server runs on none of
// this machine's GPUs. nil when telemetry is off.
func newGPUTelemetry(p config.Profile, mockURLs []string, dir string, clock record.Clock, log io.Writer) (*gpuTelemetry, error) {
	cfg := p.GPUTelemetry
	if cfg.Disabled || !p.Shard.Scrapes() {
		return nil, nil // off, or another shard reads the GPUs
	}
	fields := slices.Clone(gputelemetry.DefaultFields)
	if cfg.MetricsFile != "" {
		f, err := os.Open(cfg.MetricsFile)
		if err != nil {
			return nil, fmt.Errorf("--gpu-telemetry custom metrics: %w", err)
		}
		custom, err := gputelemetry.ReadCustomFields(f, fields)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("--gpu-telemetry %s: %w", cfg.MetricsFile, err)
		}
		fields = append(fields, custom...)
	}
	if cfg.Dashboard {
		fmt.Fprintln(log, "INFO  --gpu-telemetry dashboard: llmbench has no live dashboard; the GPU telemetry tables are printed after the run.")
	}
	urls := slices.Clone(cfg.URLs)
	for _, u := range mockURLs {
		if !slices.Contains(urls, u) {
			urls = append(urls, u)
		}
	}
	optional := map[string]bool{}
	if !p.Endpoint.Mock {
		for _, u := range cfg.DefaultURLs {
			if !slices.Contains(urls, u) {
				urls = append(urls, u)
				optional[u] = true
			}
		}
	}
	g := &gpuTelemetry{
		cfg: cfg, store: gputelemetry.NewStore(fields), jsonlName: export.GPUTelemetryFile(p.Output.ExportPrefix),
		show: cfg.Show || len(mockURLs) > 0, optional: optional, log: log,
	}
	g.jsonl = export.NewTelemetryWriter(dir, g.jsonlName)
	g.collector = scrape.NewCollector(scrape.Options{
		URLs: urls, Interval: cfg.Interval, ReachabilityTimeout: cfg.ReachabilityTimeout,
		// The final scrape comes AIPerf's grace after the end; the exact
		// end reading is the checkpoint taken when profiling ends.
		Flush: time.Duration(gputelemetry.FinalGrace),
		Clock: clock, Log: log, Sink: g.add, Users: cfg.Users,
		Subject: "GPU telemetry", Suppress: "--no-gpu-telemetry", Optional: optional, NoFallback: true,
		Wanted: gputelemetry.IsDCGM,
	})
	return g, nil
}

// started says which default ports turned out to have a DCGM exporter:
// their GPUs count in the run's energy, so the user is told.
func (g *gpuTelemetry) started() {
	for _, u := range g.collector.Live() {
		if g.optional[u] {
			fmt.Fprintf(g.log, "INFO  GPU telemetry: a DCGM exporter answers at %s (a default port); its GPUs are measured and count in the energy metrics. --no-gpu-telemetry turns this off.\n", u)
		}
	}
}

// referenceReading scrapes right before a load with no warm-up (after one,
// the warm-up's end checkpoint is the reference): the energy counters'
// start reading then precedes the profiling start by microseconds, not by
// the client's set-up since the baseline scrape.
func (g *gpuTelemetry) referenceReading(ctx context.Context) {
	g.collector.Checkpoint(ctx, checkpointWait)
}

func hasWarmup(p config.Profile) bool {
	return p.Loadgen.WarmupRequestCount > 0 || p.Loadgen.WarmupDuration > 0
}

func (g *gpuTelemetry) add(s *scrape.Snapshot) {
	rows := g.store.Add(s)
	if g.jsonlErr == nil {
		g.jsonlErr = g.jsonl.Write(rows)
	}
}

// finish takes the final scrape (cut short by abort) and closes the JSONL.
func (g *gpuTelemetry) finish(ctx, abort context.Context) error {
	g.collector.Finish(ctx, abort)
	if err := g.jsonl.Close(); err != nil && g.jsonlErr == nil {
		g.jsonlErr = err
	}
	return g.jsonlErr
}

// files are the GPU export files written.
func (g *gpuTelemetry) files() []string {
	if g.jsonl.Written() {
		return []string{g.jsonlName}
	}
	return nil
}

// summarize computes the per-GPU statistics and the energy over the
// profiling window; nil when no GPU was seen. It warns about a GPU that
// reported through only part of the window.
func (g *gpuTelemetry) summarize(win *window, log io.Writer) *gputelemetry.Report {
	w := gputelemetry.Window{StartNs: win.startNs, EndNs: win.endNs, Mode: gputelemetry.CounterMode(g.cfg.CounterWindow)}
	if !win.profiled {
		return nil
	}
	gpus := g.store.Summarize(w)
	if len(gpus) == 0 {
		return nil
	}
	t := &gputelemetry.Report{Start: win.start, End: win.end, GPUs: gpus, CounterWindow: w.Mode}
	for _, in := range g.collector.Infos() {
		// A default port with nothing behind it was never asked for.
		if in.TotalFetches > 0 || slices.Contains(g.cfg.URLs, in.URL) {
			t.Configured = append(t.Configured, in.URL)
		}
		if in.TotalFetches > 0 && !in.Disabled {
			t.Successful = append(t.Successful, in.URL)
		}
	}
	if e, ok := g.store.Energy(w); ok {
		t.Energy = &e
	} else {
		fmt.Fprintln(log, "WARNING  No GPU reported power or energy (DCGM_FI_DEV_POWER_USAGE, DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION): no energy metrics.")
	}
	for _, s := range gpus {
		for _, m := range s.Metrics {
			if m.Resets > 0 && m.Field.Name == gputelemetry.EnergyField {
				how := "counted across the reset"
				if w.Mode == gputelemetry.CounterAIPerf {
					how = "AIPerf's rule (--gpu-counter-window aiperf) clamps the difference at 0, losing what came before"
				}
				fmt.Fprintf(log, "WARNING  %s of GPU %d (%s) at %s went down %d time(s) during the run (a driver reload?); its increase is %s.\n",
					m.Field.Display, s.GPU.Index, s.GPU.UUID, s.GPU.Source, m.Resets, how)
			}
		}
		if s.Partial {
			fmt.Fprintf(log, "WARNING  GPU %d (%s) at %s reported only from %s to %s, not through the whole profiling window; its statistics and energy cover that part.\n",
				s.GPU.Index, s.GPU.UUID, s.GPU.Source, clockTime(s.FirstNs), clockTime(s.LastNs))
		}
	}
	return t
}

func clockTime(ns int64) string { return time.Unix(0, ns).UTC().Format("15:04:05.000 UTC") }

// energyMetrics are AIPerf's energy efficiency metrics for the run, as
// single-value metrics beside the client's.
func energyMetrics(t *gputelemetry.Report, rs metrics.Results, p config.Profile) []metrics.Result {
	if t == nil || t.Energy == nil {
		return nil
	}
	value := func(tag string) float64 {
		if r, ok := rs.Get(tag); ok {
			if r.Dist != nil {
				return r.Dist.Avg
			}
			return r.Value
		}
		return 0
	}
	in := gputelemetry.Inputs{
		TotalOSL: value("total_osl"), TotalISL: value("total_isl"),
		RequestCount: float64(rs.RequestCount), RequestLatencyAvgMs: value("request_latency"),
		RequestThroughput: value("request_throughput"), OutputTokenThroughput: value("output_token_throughput"),
	}
	in.Concurrency = p.Loadgen.Concurrency
	if r, ok := rs.Get("goodput"); ok {
		in.Goodput, in.HasGoodput = r.Value, true
	}
	var out []metrics.Result
	for _, m := range gputelemetry.Efficiency(*t.Energy, in) {
		flags := metrics.NoConsole
		if m.LargerIsBetter {
			flags |= metrics.LargerIsBetter
		}
		out = append(out, metrics.Result{Def: metrics.Def{Tag: m.Tag, Header: m.Header, Unit: m.Unit, Kind: metrics.Derived, Flags: flags}, Value: m.Value})
	}
	return out
}

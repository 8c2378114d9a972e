package benchmark

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"slices"
	"time"

	"github.com/llmbench/llmbench/internal/config"
	"github.com/llmbench/llmbench/internal/export"
	"github.com/llmbench/llmbench/internal/record"
	"github.com/llmbench/llmbench/internal/scrape"
	"github.com/llmbench/llmbench/internal/servermetrics"
	"github.com/llmbench/llmbench/internal/stats"
)

// serverMetrics is a run's server metrics collection: the collector, the
// store it fills, and the opt-in per-scrape JSONL.
type serverMetrics struct {
	cfg       config.ServerMetrics
	names     func(ext string) string
	store     *servermetrics.Store
	collector *scrape.Collector
	jsonl     *export.ScrapeWriter
	jsonlErr  error
	log       io.Writer
	estimator servermetrics.Estimator
}

// newServerMetrics prepares the scraping of every --url server's /metrics
// and every --server-metrics endpoint (startScrapes starts it). It returns
// nil when collection is off.
func newServerMetrics(p config.Profile, targets []target, dir string, clock record.Clock, log io.Writer, est servermetrics.Estimator) (*serverMetrics, error) {
	cfg := p.ServerMetrics
	if cfg.Disabled || !p.Shard.Scrapes() {
		return nil, nil // off, or another shard scrapes
	}
	urls := []string{}
	users := map[string]*url.Userinfo{}
	for _, t := range targets {
		u, err := config.MetricsURLOf(t.base)
		if err != nil {
			return nil, err
		}
		if slices.Contains(urls, u) {
			continue // two API paths of one server: one /metrics
		}
		urls = append(urls, u)
		if t.user != nil {
			// The --url server's credentials open its /metrics too.
			users[u] = t.user
		}
	}
	for _, u := range cfg.URLs {
		if !slices.Contains(urls, u) {
			urls = append(urls, u)
		}
	}
	maps.Copy(users, cfg.Users)
	if est == nil {
		est = estimatorNamed(cfg.HistogramEstimator)
	}
	sm := &serverMetrics{cfg: cfg, names: export.ServerMetricsFiles(p.Output.ExportPrefix), store: servermetrics.NewStore(), log: log, estimator: est}
	if cfg.HasFormat(config.FormatJSONL) {
		w, err := export.NewScrapeWriter(dir, sm.names("jsonl"))
		if err != nil {
			return nil, err
		}
		sm.jsonl = w
	}
	sm.collector = scrape.NewCollector(scrape.Options{
		URLs: urls, Interval: cfg.Interval, Flush: cfg.Flush, ReachabilityTimeout: cfg.ReachabilityTimeout,
		Clock: clock, Log: log, Sink: sm.add, Users: users,
	})
	return sm, nil
}

// warnResets says, once per series, that a counter or histogram was reset
// during the run and how its increase was counted.
func warnResets(log io.Writer, metrics []servermetrics.Metric, clamped bool) {
	how := "its increase is counted across the reset, as Prometheus' increase() does"
	if clamped {
		how = "with --counter-resets clamp its total is clamped at 0 (AIPerf's rule), losing what was counted before"
	}
	for _, m := range metrics {
		for _, s := range m.Series {
			if len(s.Resets) == 0 {
				continue
			}
			labels := ""
			if len(s.Labels) > 0 {
				labels = "{" + scrape.LabelKey(s.Labels) + "}"
			}
			fmt.Fprintf(log, "WARNING  Server metric %s%s on %s was reset %d time(s) during the run, first at %s (a server restart?); %s.\n",
				m.Name, labels, s.Endpoint, len(s.Resets), time.Unix(0, s.Resets[0]).UTC().Format("15:04:05.000 UTC"), how)
		}
	}
}

// warnEstimateFailures says, per series, that the histogram estimator gave
// no answer (its percentiles are exported empty) and why.
func warnEstimateFailures(log io.Writer, metrics []servermetrics.Metric) {
	for _, m := range metrics {
		for _, s := range m.Series {
			if s.Hist == nil || s.Hist.EstimateFailure == "" {
				continue
			}
			labels := ""
			if len(s.Labels) > 0 {
				labels = "{" + scrape.LabelKey(s.Labels) + "}"
			}
			fmt.Fprintf(log, "WARNING  Server metric %s%s on %s has no percentile estimates: %s. Its other statistics are exported; please report it with the series' samples (--server-metrics-formats jsonl writes them).\n",
				m.Name, labels, s.Endpoint, s.Hist.EstimateFailure)
		}
	}
}

// estimatorNamed maps --histogram-estimator to its implementation.
func estimatorNamed(name string) servermetrics.Estimator {
	switch name {
	case config.EstimatorAIPerf:
		return stats.AIPerfPolynomial{}
	case config.EstimatorLinear:
		return stats.BucketLinear{}
	}
	return stats.IntervalFit{}
}

func (sm *serverMetrics) add(s *scrape.Snapshot) {
	sm.store.Add(s)
	if sm.jsonl != nil && sm.jsonlErr == nil {
		sm.jsonlErr = sm.jsonl.Write(s)
	}
}

// finish waits the flush period (cut short by ctx) and takes the final
// scrape (cut short by abort).
func (sm *serverMetrics) finish(ctx, abort context.Context) error {
	sm.collector.Finish(ctx, abort)
	if sm.jsonl != nil {
		if err := sm.jsonl.Close(); err != nil && sm.jsonlErr == nil {
			sm.jsonlErr = err
		}
	}
	return sm.jsonlErr
}

// export aggregates the profiling window and writes the selected formats,
// returning the names written and the aggregated metrics.
func (sm *serverMetrics) export(dir string, win *window, base export.ServerMetrics) ([]string, []servermetrics.Metric, error) {
	startNs, endNs, start, end := win.startNs, win.endNs, win.start, win.end
	infos := sm.collector.Infos()
	intervals := map[string]int64{}
	var successful []string
	for _, in := range infos {
		intervals[in.URL] = in.UpdateIntervalNs
		if in.TotalFetches > 0 && !in.Disabled {
			successful = append(successful, in.URL)
		}
	}
	w := servermetrics.Window{StartNs: startNs, EndNs: endNs, SliceNs: int64(sm.cfg.SliceSeconds * 1e9), UpdateIntervalNs: intervals,
		ClampResets: sm.cfg.CounterResets == config.ResetsClamp}
	base.Configured, base.Successful, base.Infos = sm.collector.Configured(), successful, infos
	store := sm.store
	if !win.profiled {
		// Stopped during warm-up: no profiling window, so no statistics
		// (not rates over the instant between the stop and the export).
		// The files are still written, with their summaries and no metrics.
		store = servermetrics.NewStore()
	}
	base.Metrics = store.Aggregate(w, sm.estimator)
	warnResets(sm.log, base.Metrics, w.ClampResets)
	warnEstimateFailures(sm.log, base.Metrics)
	base.Window, base.Start, base.End = w, start, end

	var files []string
	if sm.jsonl != nil {
		files = append(files, sm.names("jsonl"))
	}
	// Every format is attempted: one that fails (naming its file) takes
	// none of the others with it.
	var errs []error
	write := func(ext string, render func(io.Writer) error) {
		name := sm.names(ext)
		if err := export.WriteFileFunc(dir, name, render); err != nil {
			errs = append(errs, fmt.Errorf("server metrics export %s: %w", name, err))
			return
		}
		files = append(files, name)
	}
	rendered := func(render func() ([]byte, error)) func(io.Writer) error {
		return func(w io.Writer) error {
			data, err := render()
			if err == nil {
				_, err = w.Write(data)
			}
			return err
		}
	}
	if sm.cfg.HasFormat(config.FormatJSON) {
		write("json", rendered(func() ([]byte, error) { return export.ServerMetricsJSON(base) }))
	}
	if sm.cfg.HasFormat(config.FormatCSV) {
		write("csv", rendered(func() ([]byte, error) { return export.ServerMetricsCSV(base) }))
	}
	if sm.cfg.HasFormat(config.FormatParquet) {
		// Streamed in bounded row groups: a long run's export needs a fixed
		// amount of memory.
		write("parquet", func(w io.Writer) error { return export.WriteServerMetricsParquet(w, store, base) })
	}
	return files, base.Metrics, errors.Join(errs...)
}

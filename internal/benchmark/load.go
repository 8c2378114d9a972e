package benchmark

import (
	"cmp"
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmbench/llmbench/internal/config"
	"github.com/llmbench/llmbench/internal/record"
	"github.com/llmbench/llmbench/internal/schedule"
	"github.com/llmbench/llmbench/internal/scrape"
	"github.com/llmbench/llmbench/internal/ui"
)

// startProgress prints the live progress line until the returned func is
// called; nothing when opts.Progress is nil.
func startProgress(opts Options, counters *ui.Counters, total int, duration time.Duration) (stop func()) {
	if opts.Progress == nil {
		return func() {}
	}
	interval := opts.ProgressInterval
	if interval <= 0 {
		interval = time.Second
	}
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		ui.Progress(opts.Progress, counters, total, duration, interval, opts.Terminal, quit)
	})
	return func() {
		close(quit)
		wg.Wait()
	}
}

// checkpointWait bounds the wait for the warm-up/profiling checkpoint.
const checkpointWait = time.Second

// window is the profiling phase's span, as the schedule reports it.
type window struct {
	clock          record.Clock
	start, end     time.Time
	startNs, endNs int64 // wall-clock epoch ns
	// profiled is false when the profiling phase never started (a run
	// stopped during warm-up): there is nothing to compute statistics over.
	profiled bool
	// profilingStart is startNs for readers on other goroutines (the
	// collector's time slices).
	profilingStart atomic.Int64
}

// observer records the profiling window and takes the checkpoints: server
// metrics and GPU telemetry at the warm-up/profiling boundary, GPU
// telemetry again when profiling ends (its counters are read at both).
func (w *window) observer(ctx context.Context, sm *serverMetrics, gpu *gpuTelemetry, interval time.Duration) schedule.Observer {
	var collectors []*scrape.Collector
	if sm != nil {
		collectors = append(collectors, sm.collector)
	}
	if gpu != nil {
		collectors = append(collectors, gpu.collector)
	}
	return schedule.Observer{
		PhaseStart: func(ph record.Phase, t time.Time) {
			if ph == record.PhaseProfiling {
				w.start, w.startNs = t, w.clock.Wall(w.clock.Perf(t))
				w.profilingStart.Store(w.startNs)
				w.profiled = true
			}
		},
		PhaseEnd: func(ph record.Phase, t time.Time) {
			switch {
			case ph == record.PhaseProfiling:
				w.end, w.endNs = t, w.clock.Wall(w.clock.Perf(t))
				if gpu != nil {
					// The energy counters' end reading, milliseconds after
					// the end rather than up to an interval before it.
					gpu.collector.Checkpoint(ctx, checkpointWait)
				}
			case ph == record.PhaseWarmup:
				// The reference for profiling deltas: the state right now.
				// Profiling waits for it up to a second (or one interval,
				// if longer): a checkpoint answered after profiling began
				// cannot be the reference, and the scrape before it would
				// count the last warm-up requests in. A healthy endpoint
				// answers in milliseconds; a slow one delays the start.
				var wg sync.WaitGroup
				for _, c := range collectors {
					wg.Go(func() { c.Checkpoint(ctx, max(interval, checkpointWait)) })
				}
				wg.Wait()
			}
		},
	}
}

// close ends a window the schedule never opened or closed (a run stopped
// early) at the present moment.
func (w *window) close() {
	if w.start.IsZero() {
		w.start, w.startNs = time.Now(), w.clock.Wall(w.clock.Now())
	}
	if w.end.IsZero() {
		w.end, w.endNs = time.Now(), w.clock.Wall(w.clock.Now())
	}
}

// planOf is the schedule the profile asks for, its sessions counted by
// the inputs.
func planOf(p config.Profile, in *inputs, seed uint64) (schedule.Plan, error) {
	l := p.Loadgen
	arrivals, err := schedule.NewArrivals(l.RequestRateMode, l.ArrivalSmoothness)
	if err != nil {
		return schedule.Plan{}, err
	}
	plan := schedule.Plan{
		Concurrency: l.Concurrency, Rate: l.RequestRate, Arrivals: arrivals, ConcurrencyRamp: l.ConcurrencyRamp, RateRamp: l.RateRamp,
		Count: in.sessions, Warmup: l.WarmupRequestCount, WarmupDuration: l.WarmupDuration, Duration: l.BenchmarkDuration, Grace: l.GracePeriod, Seed: seed,
		Shard: schedule.Shard{Index: p.Shard.Index, Count: p.Shard.Count}, StartAt: p.Shard.StartAt,
		PrefillConcurrency: l.PrefillConcurrency, PrefillRamp: l.PrefillRamp,
	}
	if w := l.WarmupShape; w.Given() {
		shape := &schedule.Shape{Concurrency: w.Concurrency, Rate: w.RequestRate, ConcurrencyRamp: w.ConcurrencyRamp, RateRamp: w.RateRamp,
			PrefillConcurrency: w.PrefillConcurrency, PrefillRamp: w.PrefillRamp}
		if w.ArrivalPattern != "" {
			if shape.Arrivals, err = schedule.NewArrivals(w.ArrivalPattern, cmp.Or(l.ArrivalSmoothness, 1)); err != nil {
				return schedule.Plan{}, err
			}
		}
		plan.WarmupShape = shape
	}
	if in.times != nil {
		// A trace is replayed on its own clock: no concurrency cap, no rate.
		plan.Times, plan.Count, plan.Concurrency, plan.Rate = in.times, len(in.times), 0, 0
	}
	if err := plan.Validate(); err != nil {
		return schedule.Plan{}, err
	}
	return plan, nil
}

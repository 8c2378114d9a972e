package multirun

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"time"

	"github.com/llmbench/llmbench/internal/benchmark"
	"github.com/llmbench/llmbench/internal/export"
	"github.com/llmbench/llmbench/internal/metrics"
	"github.com/llmbench/llmbench/internal/trial"
)

// Options configure a multi-run profile.
type Options struct {
	// Run is one run's options; each run gets its own artifact directory,
	// <artifact dir>/profile_runs/run_0001, … (AIPerf 0.12's layout).
	Run benchmark.Options
	// OnRun hears of each run as it ends (res may be nil when err is set).
	OnRun func(label string, res *benchmark.Result, err error)
	// Sleep waits between runs; nil for time-based, ctx-aware waiting.
	Sleep func(ctx context.Context, d time.Duration)
}

// Outcome is what a multi-run profile produced.
type Outcome struct {
	Summary   Summary
	Runs      []*benchmark.Result // the successful ones, in order
	Dir       string              // the aggregate directory
	Files     []string            // the aggregate files, in Dir
	Cancelled bool
}

// RunLabel names run i (0-based) as AIPerf does: run_0001, run_0002, …
func RunLabel(i int) string { return fmt.Sprintf("run_%04d", i+1) }

// Run executes the profile's --num-profile-runs runs one after another,
// with the cooldown between them, then writes the confidence aggregate of
// the successful ones. A run that fails (no artifacts, or every request
// failed) is recorded in failed_runs, not fatal; it is an error only when
// every run failed. ctx ending stops after the current run.
func Run(ctx context.Context, opts Options) (*Outcome, error) {
	base := opts.Run.Profile
	mr := base.MultiRun
	if mr.ConsistentSeed && base.Input.RandomSeed == nil {
		// One seed for every run: the same prompts and arrivals each time.
		s := int64(rand.Uint64() >> 1)
		base.Input.RandomSeed = &s
	}
	sleep := opts.Sleep
	if sleep == nil {
		sleep = sleepCtx
	}
	out := &Outcome{Summary: Summary{Version: opts.Run.Version, NumRuns: mr.NumRuns, ConfidenceLevel: mr.ConfidenceLevel, CooldownSeconds: mr.Cooldown.Seconds()}}
	var results []metrics.Results
	shared := opts.Run.Shared
	if shared == nil {
		// The runs reuse the tokenizer, the built-in server and the
		// connections, as a sweep's cells do.
		shared = benchmark.NewShared()
		defer shared.Close()
	}
	for i := range mr.NumRuns {
		if i > 0 && mr.Cooldown > 0 {
			sleep(ctx, mr.Cooldown)
		}
		if ctx.Err() != nil {
			out.Cancelled = true
			break
		}
		label := RunLabel(i)
		ro := opts.Run
		ro.Profile, ro.Shared = base, shared
		if i > 0 && mr.DisableWarmupAfterFirst {
			ro.Profile.Loadgen.WarmupRequestCount, ro.Profile.Loadgen.WarmupDuration, ro.Profile.Loadgen.WarmupDurationSec = 0, 0, 0
		}
		o, err := trial.Run(ctx, trial.Spec{Options: ro, Dir: filepath.Join(base.Output.ArtifactDir, "profile_runs", label), Label: label, Index: i})
		if err != nil {
			return out, err // every run would refuse the same input
		}
		out.Cancelled = out.Cancelled || o.Cancelled && o.Err != nil
		if opts.OnRun != nil {
			opts.OnRun(label, o.Result, o.Err)
		}
		if o.Err != nil {
			out.Summary.FailedRuns = append(out.Summary.FailedRuns, FailedRun{Label: label, Error: o.Err.Error()})
			if out.Cancelled {
				break
			}
			continue
		}
		res := o.Result
		out.Runs = append(out.Runs, res)
		out.Summary.RunLabels = append(out.Summary.RunLabels, label)
		results = append(results, res.Summary.Results)
	}
	if len(results) == 0 {
		return out, fmt.Errorf("all %d profile runs failed; see failed runs above", len(out.Summary.FailedRuns))
	}
	out.Summary.Stats = Aggregate(results, mr.ConfidenceLevel, export.Exported)
	out.Dir = filepath.Join(base.Output.ArtifactDir, "aggregate")
	j, err := AggregateJSON(out.Summary)
	if err != nil {
		return out, err
	}
	for _, f := range []struct {
		name string
		data []byte
	}{
		{"profile_export_aiperf_aggregate.json", j},
		{"profile_export_aiperf_aggregate.csv", AggregateCSV(out.Summary)},
	} {
		if err := export.WriteFile(out.Dir, f.name, f.data); err != nil {
			return out, err
		}
		out.Files = append(out.Files, f.name)
	}
	return out, nil
}

func sleepCtx(ctx context.Context, d time.Duration) { trial.Sleep(ctx, d) }

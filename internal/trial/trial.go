// Package trial runs one benchmark as part of a larger plan (a trial of a
// multi-run, a cell of a sweep, a probe of a search): in its own artifact
// directory, with what the plan's runs share, and it judges whether the
// run produced results the plan can use. Every plan that runs many
// benchmarks runs each of them through here.
package trial

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/llmbench/llmbench/internal/benchmark"
)

// Spec is one run of a plan.
type Spec struct {
	// Options are the run's, its profile already set to the cell's values.
	Options benchmark.Options
	// Dir is the run's artifact directory.
	Dir string
	// Label names the run in run_info and in failed_runs (run_0001, …).
	Label string
	// Index is the run's trial number, 0-based, for run_info.
	Index int
}

// Outcome is what one run gave.
type Outcome struct {
	Label  string
	Result *benchmark.Result // nil when the run could not start
	// Err says why the run is unusable: it could not start or write its
	// artifacts, it was interrupted, or every request failed. A run with
	// some failed requests is usable.
	Err error
	// Cancelled is set when ctx ended during the run.
	Cancelled bool
}

// OK reports whether the run's results are usable.
func (o Outcome) OK() bool { return o.Err == nil }

// Run runs one benchmark. An input the benchmark refuses (a dataset, a
// tokenizer) is returned as fatal: every later run would refuse it too.
func Run(ctx context.Context, s Spec) (Outcome, error) {
	opts := s.Options
	opts.Profile.Output.ArtifactDir = s.Dir
	opts.Trial, opts.RunLabel = s.Index, s.Label
	res, err := benchmark.Run(ctx, opts)
	if input := (*benchmark.InputError)(nil); errors.As(err, &input) {
		return Outcome{Label: s.Label, Err: err}, err
	}
	out := Outcome{Label: s.Label, Result: res, Err: err}
	if err == nil && res.Summary.WasCancelled {
		out.Err, out.Cancelled = errors.New("interrupted"), true
	}
	if err == nil && res.Summary.Results.RequestCount == 0 {
		out.Err = fmt.Errorf("every request failed (%d errors)", res.Summary.Results.ErrorCount)
	}
	if ctx.Err() != nil {
		out.Cancelled = true
	}
	return out, nil
}

// Sleep waits d, or until ctx ends: the cooldown between runs.
func Sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

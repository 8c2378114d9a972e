package capacity

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/llmbench/llmbench/internal/config"
	"github.com/llmbench/llmbench/internal/export"
	"github.com/llmbench/llmbench/internal/multirun"
	"github.com/llmbench/llmbench/internal/sla"
	"github.com/llmbench/llmbench/internal/sweep"
	"github.com/llmbench/llmbench/internal/trial"
)

// sweepPlan is a sweep to run: its cells, how they were made, the SLA
// filters its aggregate judges cells by, and the Pareto axes a recipe
// declares.
type sweepPlan struct {
	cells   []sweep.Cell
	kind    sweep.Kind
	filters []sla.Filter
	axes    *sweep.ParetoAxes
}

// sweepResult is what a sweep ran: each cell's outcome and the aggregate.
type sweepResult struct {
	outcomes []sweep.CellOutcome
	summary  sweep.Summary
	meta     sweep.Meta
	dir      string // the sweep aggregate directory
}

// seedCells gives the cells their seeds: from --random-seed, or with
// AIPerf's --set-consistent-seed and several trials from 42 when no seed
// is given, so that every trial of a cell sends the same workload.
func seedCells(p config.Profile, cells []sweep.Cell) {
	base := p.Input.RandomSeed
	if base == nil && p.MultiRun.NumRuns > 1 && p.MultiRun.ConsistentSeed {
		s := int64(42)
		base = &s
	}
	sweep.AssignSeeds(cells, base, p.Sweep.SameSeed)
}

// runSweep runs every cell of the plan --num-profile-runs times, in the
// order --parameter-sweep-mode says, and writes the per-cell and sweep
// aggregates. A failed run is listed and the sweep goes on; ctx ending
// stops it after the current run, and the aggregates cover what finished.
func runSweep(ctx context.Context, opts Options, plan sweepPlan) (*Outcome, *sweepResult, error) {
	p := opts.Run.Profile
	trials := p.MultiRun.NumRuns
	layout := sweep.Layout{Base: p.Output.ArtifactDir, Trials: trials, Independent: p.Sweep.Mode == config.SweepIndependent}
	seedCells(p, plan.cells)

	// Every cell's profile is built before the first run, so that a cell
	// the options refuse stops the sweep before it starts.
	profiles := make([]config.Profile, len(plan.cells))
	for i, c := range plan.cells {
		ov, err := overrides(c)
		if err != nil {
			return nil, nil, err
		}
		if profiles[i], err = opts.Build(ov); err != nil {
			return nil, nil, fmt.Errorf("sweep cell %s: %w", c.Label, err)
		}
		opts.Run.Shared.MaxConns = max(opts.Run.Shared.MaxConns, profiles[i].Loadgen.Concurrency)
	}

	out := &Outcome{}
	outcomes := make([]sweep.CellOutcome, len(plan.cells))
	for i, c := range plan.cells {
		outcomes[i].Cell = c
	}
	meta := sweep.Meta{
		Version: opts.Run.Version, Model: p.Endpoint.ModelNames[0], Kind: plan.kind, Independent: layout.Independent,
		ConfidenceLevel: p.MultiRun.ConfidenceLevel, Filters: plan.filters, ParetoAxes: plan.axes,
		CooldownSeconds: p.MultiRun.CooldownSeconds,
	}
	done := make([]int, len(plan.cells))
	var prev *step
	for _, st := range runOrder(len(plan.cells), trials, layout.Independent) {
		if prev != nil {
			// --profile-run-cooldown-seconds between trials (a new trial
			// of the sweep, or the next trial of a cell), else
			// --parameter-sweep-cooldown-seconds between cells.
			if prev.trial != st.trial {
				trial.Sleep(ctx, p.MultiRun.Cooldown)
			} else {
				trial.Sleep(ctx, p.Sweep.Cooldown)
			}
		}
		if ctx.Err() != nil {
			out.Cancelled = true
			break
		}
		prev = &st
		c := plan.cells[st.cell]
		ro := opts.Run
		ro.Profile = profiles[st.cell]
		if st.trial > 0 && p.MultiRun.DisableWarmupAfterFirst {
			ro.Profile.Loadgen.WarmupRequestCount, ro.Profile.Loadgen.WarmupDuration, ro.Profile.Loadgen.WarmupDurationSec = 0, 0, 0
		}
		dir := layout.RunDir(c, st.trial)
		label := runLabel(p.Output.ArtifactDir, dir)
		o, err := trial.Run(ctx, trial.Spec{Options: ro, Dir: dir, Label: label, Index: st.trial})
		if err != nil {
			return out, nil, err
		}
		out.Runs++
		if opts.OnRun != nil {
			opts.OnRun(label, o.Result, o.Err)
		}
		oc := &outcomes[st.cell]
		if o.Err != nil {
			oc.Failed = append(oc.Failed, multirun.FailedRun{Label: label, Error: o.Err.Error()})
			if o.Cancelled {
				out.Cancelled = true
				break
			}
		} else {
			if f := unreported(o.Result.Summary.Results, plan.filters); f != nil {
				return out, nil, unreportedError(f, label)
			}
			oc.Runs = append(oc.Runs, withFilterMetrics(o.Result.Summary.Results, plan.filters))
			oc.Labels = append(oc.Labels, label)
			out.Successful++
		}
		done[st.cell]++
		if done[st.cell] == trials && opts.Table && len(plan.cells) > 1 {
			fmt.Fprint(opts.Out, "\n"+sweep.Table(sweep.Aggregate(finished(outcomes, done, trials), meta), opts.Width))
		}
	}

	res := &sweepResult{outcomes: outcomes, meta: meta}
	for _, oc := range outcomes {
		if len(oc.Runs) == 0 {
			continue
		}
		dir := layout.CellAggregateDir(oc.Cell)
		_, err := writeCellAggregate(dir, sweep.CellSummary(oc, meta))
		out.CellAggregates++
		out.CellAggregateDirs = append(out.CellAggregateDirs, dir)
		if err != nil {
			return out, res, err
		}
	}
	if out.Successful < 2 {
		return out, res, ErrTooFewRuns
	}
	res.summary = sweep.Aggregate(outcomes, meta)
	res.dir = layout.SweepAggregateDir()
	j, err := sweep.SummaryJSON(res.summary)
	if err != nil {
		return out, res, err
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{"profile_export_aiperf_sweep.json", j}, {"profile_export_aiperf_sweep.csv", sweep.SummaryCSV(res.summary)}} {
		if err := export.WriteFile(res.dir, f.name, f.data); err != nil {
			return out, res, err
		}
		out.Files = append(out.Files, filepath.Join(res.dir, f.name))
	}
	return out, res, nil
}

// finished are the outcomes of the cells whose every trial has run.
func finished(outcomes []sweep.CellOutcome, done []int, trials int) []sweep.CellOutcome {
	var out []sweep.CellOutcome
	for i, oc := range outcomes {
		if done[i] == trials {
			out = append(out, oc)
		}
	}
	return out
}

// step is one run of a sweep: a cell's trial.
type step struct{ cell, trial int }

// runOrder is the order of the runs: repeated runs every cell once per
// trial (the trial is the outer loop); independent runs all trials of a
// cell before the next cell.
func runOrder(cells, trials int, independent bool) []step {
	out := make([]step, 0, cells*trials)
	if independent {
		for c := range cells {
			for t := range trials {
				out = append(out, step{c, t})
			}
		}
		return out
	}
	for t := range trials {
		for c := range cells {
			out = append(out, step{c, t})
		}
	}
	return out
}

// runLabel names a run by its directory under the base: concurrency_8,
// profile_runs/trial_0001/concurrency_8, …
func runLabel(base, dir string) string {
	if rel, err := filepath.Rel(base, dir); err == nil {
		return filepath.ToSlash(rel)
	}
	return dir
}

// writeCellAggregate writes a cell's confidence aggregate, JSON and CSV.
func writeCellAggregate(dir string, s multirun.Summary) ([]string, error) {
	j, err := multirun.AggregateJSON(s)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, f := range []struct {
		name string
		data []byte
	}{{"profile_export_aiperf_aggregate.json", j}, {"profile_export_aiperf_aggregate.csv", multirun.AggregateCSV(s)}} {
		if err := export.WriteFile(dir, f.name, f.data); err != nil {
			return files, err
		}
		files = append(files, filepath.Join(dir, f.name))
	}
	return files, nil
}

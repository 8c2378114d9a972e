package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/llmbench/llmbench/internal/benchmark"
	"github.com/llmbench/llmbench/internal/capacity"
	"github.com/llmbench/llmbench/internal/config"
	"github.com/llmbench/llmbench/internal/multirun"
	"github.com/llmbench/llmbench/internal/report"
	"github.com/llmbench/llmbench/internal/ui"
	"github.com/llmbench/llmbench/internal/verdict"
)

// runReporter prints each run of a multi-run, sweep or search as it ends
// and keeps the worst run verdict, for --fail-on-verdict.
type runReporter struct {
	stdout, stderr io.Writer
	quiet          bool
	// of is the number of runs planned, shown as "run_0002 of 3" (0: not
	// shown); verdicts prints each run's verdict block.
	of       int
	verdicts bool

	worst      *verdict.Verdict
	worstLabel string
}

func (r *runReporter) onRun(label string, res *benchmark.Result, err error) {
	if res != nil && res.Summary.Verdict != nil && (r.worst == nil || res.Summary.Verdict.Level > r.worst.Level) {
		r.worst, r.worstLabel = res.Summary.Verdict, label
	}
	switch {
	case err != nil:
		fmt.Fprintf(r.stderr, "llmbench profile: %s failed: %v\n", label, err)
	case !r.quiet:
		rs := res.Summary.Results
		of := ""
		if r.of > 0 {
			of = fmt.Sprintf(" of %d", r.of)
		}
		fmt.Fprintf(r.stdout, "%s%s: %d requests, %d errors; artifacts in %s\n", label, of, rs.RequestCount, rs.ErrorCount, res.ArtifactDir)
		if v := res.Summary.Verdict; v != nil && r.verdicts {
			fmt.Fprint(r.stdout, ui.Verdict(*v))
		}
	}
}

// exit is the exit code of runs that all ended: exitVerdict when the
// worst verdict is as bad as --fail-on-verdict (failOn), else exitOK.
func (r *runReporter) exit(failOn string) int {
	if r.worst == nil {
		return exitOK
	}
	return verdictExit(r.stderr, failOn, r.worstLabel, *r.worst)
}

// profileRuns runs --num-profile-runs profiles and prints each run's
// outcome and the confidence intervals of the key metrics.
func profileRuns(ctx context.Context, opts benchmark.Options, stdout, stderr io.Writer) int {
	quiet := opts.Profile.Output.UIType == "none"
	rep := &runReporter{stdout: stdout, stderr: stderr, quiet: quiet, of: opts.Profile.MultiRun.NumRuns, verdicts: true}
	out, err := multirun.Run(ctx, multirun.Options{Run: opts, OnRun: rep.onRun})
	reportPath := ""
	if out != nil && len(out.Files) > 0 {
		reportPath = writeTopReport(opts.Profile.Output.ArtifactDir, stderr)
	}
	if out != nil && len(out.Files) > 0 && !quiet {
		fmt.Fprint(stdout, "\n"+multirun.ConsoleTable(out.Summary.Stats, out.Summary.ConfidenceLevel, len(out.Summary.RunLabels)))
		fmt.Fprintf(stdout, "\nAggregate in %s:\n", out.Dir)
		for _, f := range out.Files {
			fmt.Fprintf(stdout, "  %s\n", filepath.Join(out.Dir, f))
		}
		if reportPath != "" {
			fmt.Fprintf(stdout, "Report in %s\n", reportPath)
		}
	}
	switch {
	case out != nil && out.Cancelled:
		fmt.Fprintln(stderr, "llmbench profile: interrupted; the aggregate covers the runs completed before it")
		return exitCancelled
	case err != nil:
		fmt.Fprintf(stderr, "llmbench profile: %v\n", err)
		if input := (*benchmark.InputError)(nil); errors.As(err, &input) {
			return exitUsage
		}
		return exitFailed
	}
	return rep.exit(opts.Profile.Output.FailOnVerdict)
}

// profileCapacity runs a sweep (comma lists) or a search recipe: every
// cell's outcome as it ends, the table of finished cells, the answer, and
// where the aggregates are.
func profileCapacity(ctx context.Context, args []string, opts benchmark.Options, stdout, stderr io.Writer, width int) int {
	quiet := opts.Profile.Output.UIType == "none"
	rep := &runReporter{stdout: stdout, stderr: stderr, quiet: quiet}
	out, err := capacity.Run(ctx, capacity.Options{
		Run: opts, Out: stdout, Log: stderr, Width: width,
		Table: !quiet && !opts.Profile.Sweep.NoTable && width > 0, // a terminal: ui.Width is 0 for a file or a pipe
		Build: func(overrides [][2]string) (config.Profile, error) {
			p, _, err := parseProfile(args, overrides)
			return p, err
		},
		OnRun: rep.onRun,
	})
	reportPath := ""
	if out != nil && (len(out.Files) > 0 || out.CellAggregates > 0) {
		reportPath = writeTopReport(opts.Profile.Output.ArtifactDir, stderr)
	}
	if out != nil && !quiet {
		if out.Answer != "" {
			fmt.Fprint(stdout, "\n"+out.Answer)
		}
		if len(out.Files) > 0 || out.CellAggregates > 0 {
			fmt.Fprintln(stdout, "\nAggregates:")
			for _, f := range out.Files {
				fmt.Fprintf(stdout, "  %s\n", f)
			}
			if n := out.CellAggregates; n > 0 {
				fmt.Fprintf(stdout, "  and %d per-cell confidence aggregates (profile_export_aiperf_aggregate.json, .csv), e.g. in %s\n", n, out.CellAggregateDirs[0])
			}
		}
		if reportPath != "" {
			fmt.Fprintf(stdout, "Report in %s\n", reportPath)
		}
	}
	switch {
	case out != nil && out.Cancelled && errors.Is(err, capacity.ErrTooFewRuns):
		fmt.Fprintf(stderr, "llmbench profile: interrupted after %d successful runs, too few for a sweep aggregate; each run's artifacts are kept\n", out.Successful)
		return exitCancelled
	case out != nil && out.Cancelled:
		fmt.Fprintln(stderr, "llmbench profile: interrupted; the aggregates cover the runs completed before it")
		return exitCancelled
	case err != nil:
		fmt.Fprintf(stderr, "llmbench profile: %v\n", err)
		var input *benchmark.InputError
		var usage *capacity.UsageError
		if errors.As(err, &input) || errors.As(err, &usage) {
			return exitUsage
		}
		return exitFailed
	}
	return rep.exit(opts.Profile.Output.FailOnVerdict)
}

// writeTopReport draws the report of a multi-run, sweep or search at the
// top of its folder, from its files; "" with a warning when it cannot
// (the aggregates are complete, and `llmbench plot DIR` draws it later).
func writeTopReport(dir string, stderr io.Writer) string {
	page, err := report.Build([]string{dir}, "llmbench "+version)
	if err == nil {
		var path string
		if path, err = report.Write(dir, page); err == nil {
			return path
		}
	}
	fmt.Fprintf(stderr, "WARNING  no report: %v; 'llmbench plot %s' draws it\n", err, dir)
	return ""
}

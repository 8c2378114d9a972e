package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/llmbench/llmbench/internal/artifacts"
	"github.com/llmbench/llmbench/internal/compare"
	"github.com/llmbench/llmbench/internal/export"
	"github.com/llmbench/llmbench/internal/report"
	"github.com/llmbench/llmbench/internal/ui"
)

const compareUsage = `Usage: llmbench compare BASE NEW [flags]

Compares two artifact folders (a run, or a multi-run with profile_runs/):
every metric's change from BASE to NEW with its confidence interval (a
bootstrap over requests for single runs, Welch's t over runs when both are
multi-runs) and a verdict: improved, regressed or no significant change.
Writes compare.json and compare.html (the same, as a page with the two
sides' distributions). Exit code 1 when a --fail-on gate fails.

Flags:
  --fail-on GATE           fail (exit 1) on a significant regression beyond
                           the allowance; repeatable:
                             time_to_first_token:p99:+5%   5 % worse allowed
                             request_latency:avg:+20ms     20 ms worse allowed
                             output_token_throughput:avg:+3%  a 3 % drop allowed
                             error_rate:+1                 1 percentage point
  --confidence-level L     level of the intervals [default: 0.95]
  --resamples N            bootstrap resamples [default: 2000]
  --seed N                 seed of the bootstrap [default: 1]
  --output PATH            where compare.json goes [default: NEW/compare.json]
`

// compareCommand is `llmbench compare BASE NEW`.
func compareCommand(args []string, stdout, stderr io.Writer) int {
	const cmd = "llmbench compare"
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	opts := compare.Options{Level: compare.DefaultLevel, Resamples: compare.DefaultResamples, Seed: 1}
	fs.Float64Var(&opts.Level, "confidence-level", opts.Level, "")
	fs.IntVar(&opts.Resamples, "resamples", opts.Resamples, "")
	fs.Uint64Var(&opts.Seed, "seed", opts.Seed, "")
	output := fs.String("output", "", "")
	fs.Func("fail-on", "", func(v string) error {
		g, err := compare.ParseGate(v)
		if err != nil {
			return err
		}
		opts.Gates = append(opts.Gates, g)
		return nil
	})
	// The folders may come before, between or after the flags.
	folders, err := parseInterleaved(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, compareUsage)
		return exitOK
	}
	if err != nil {
		return compareUsageError(stderr, flagErrorText(err))
	}
	if len(folders) != 2 {
		return compareUsageError(stderr, fmt.Sprintf("give two artifact folders, BASE and NEW (got %d)", len(folders)))
	}
	sides := make([]*compare.Side, 2)
	for i, dir := range folders {
		s, err := compare.Load(dir)
		if err != nil {
			return compareUsageError(stderr, err.Error())
		}
		sides[i] = s
	}
	ctx, _, release := interrupts()
	defer release()
	res, err := compare.Compare(ctx, sides[0], sides[1], opts)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
		return exitFailed
	}
	fmt.Fprint(stdout, res.Table(ui.Width(stdout, os.Getenv)))
	data, err := res.JSON()
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
		return exitFailed
	}
	path := *output
	if path == "" {
		path = filepath.Join(folders[1], "compare.json")
	}
	if err := export.WriteFile(filepath.Dir(path), filepath.Base(path), data); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
		return exitFailed
	}
	fmt.Fprintf(stdout, "\nComparison in %s\n", path)
	if htmlPath, err := writeComparisonReport(res, sides, filepath.Dir(path)); err != nil {
		fmt.Fprintf(stderr, "WARNING  no comparison report: %v\n", err)
	} else {
		fmt.Fprintf(stdout, "Report in %s\n", htmlPath)
	}
	if res.Failed() {
		// A gate fails on a significant regression beyond its allowance,
		// or when it could not be checked (it must not pass silently).
		var failed []string
		for _, g := range res.Gates {
			if !g.Passed {
				status := "failed"
				if g.Status == compare.GateNotTested {
					status = "could not be checked"
				}
				failed = append(failed, fmt.Sprintf("--fail-on %s %s (%s)", g.Expr, status, g.Reason))
			}
		}
		fmt.Fprintf(stderr, "%s: %s: exit code %d\n", cmd, strings.Join(failed, "; "), exitFailed)
		return exitFailed
	}
	return exitOK
}

func compareUsageError(stderr io.Writer, msg string) int {
	fmt.Fprintf(stderr, "llmbench compare: %s. Run 'llmbench compare --help' for the flags.\n", strings.TrimSuffix(msg, "."))
	return exitUsage
}

// writeComparisonReport writes compare.html into dir, with the two sides'
// distributions drawn from their runs' records.
func writeComparisonReport(res *compare.Result, sides []*compare.Side, dir string) (string, error) {
	runs := make([][]*artifacts.Run, len(sides))
	for i, s := range sides {
		for _, r := range s.Runs {
			if !r.HasRecords {
				continue
			}
			run, err := artifacts.LoadRun(r.Dir, artifacts.DefaultNames, report.RecordTags...)
			if err != nil {
				return "", err
			}
			runs[i] = append(runs[i], run)
		}
	}
	return report.WriteAs(dir, report.CompareFileName, report.Comparison(res, runs[0], runs[1], "llmbench "+version))
}

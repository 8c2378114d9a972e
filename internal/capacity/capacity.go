// Package capacity answers "how much load does this deployment sustain":
// it runs the cells of a parameter sweep (AIPerf's comma lists), the grid
// recipes (concurrency-ramp, prefill-ttft-curve, decode-itl-curve,
// pareto-sweep) and the adaptive SLA searches, one benchmark after another
// in one process, and writes their aggregates, search history and
// post-process files in AIPerf's layout. Each benchmark runs through
// package trial with the resources the runs share.
package capacity

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/llmbench/llmbench/internal/benchmark"
	"github.com/llmbench/llmbench/internal/config"
	"github.com/llmbench/llmbench/internal/search"
	"github.com/llmbench/llmbench/internal/sweep"
)

// Options configure a sweep or a search.
type Options struct {
	// Run are the base profile's run options: Profile is the command
	// line's own profile (a list's first value), whose artifact directory
	// is the base of every cell's.
	Run benchmark.Options
	// Build is a cell's profile: the command line with these flag values
	// set after its own, finished.
	Build func(overrides [][2]string) (config.Profile, error)
	// Out receives the tables and the answer; Log the warnings.
	Out, Log io.Writer
	// Table reprints the table of finished cells after each cell (a
	// terminal, and not --no-sweep-table); Width is the console's (0: any).
	Table bool
	Width int
	// OnRun hears of each run as it ends (res may be nil when err is set).
	OnRun func(label string, res *benchmark.Result, err error)
}

// Outcome is what a sweep or search produced.
type Outcome struct {
	// Runs and Successful count the benchmark runs.
	Runs, Successful int
	// Files are the sweep aggregate, search history and answer files
	// written; CellAggregates counts the per-cell (per-probe) confidence
	// aggregates written besides, in CellAggregateDirs.
	Files             []string
	CellAggregates    int
	CellAggregateDirs []string
	Cancelled         bool
	// Answer is the one-paragraph answer printed at the end (a search's
	// boundary, a recipe's knee or curve); empty for a plain sweep.
	Answer string
}

// ErrTooFewRuns is returned when fewer than two runs succeeded: there is
// nothing to aggregate across (AIPerf's rule; exit code 1).
var ErrTooFewRuns = errors.New("fewer than two runs succeeded: no sweep aggregate")

// Check refuses, before anything runs or moves, the sweep or search the
// profile asks for when its options do not make one: an unknown recipe,
// a missing or unused SLA, a bad range or grid.
func Check(p config.Profile) error {
	if p.Search.Recipe != "" {
		rr, err := resolveRecipe(p)
		if err != nil {
			return &UsageError{err}
		}
		if rr.recipe.Kind != search.Adaptive || rr.style == search.StyleGrid {
			if _, err := gridPlan(rr); err != nil {
				return &UsageError{err}
			}
		}
		return nil
	}
	_, err := plainSweep(p)
	return err
}

// plainSweep is the sweep of the profile's comma lists.
func plainSweep(p config.Profile) (sweepPlan, error) {
	params, err := sweepParams(p)
	if err != nil {
		return sweepPlan{}, &UsageError{err}
	}
	zip := p.Sweep.Type == config.SweepZip
	cells, err := sweep.Expand(params, zip)
	if err != nil {
		return sweepPlan{}, &UsageError{err}
	}
	kind := sweep.Grid
	if zip {
		kind = sweep.Zip
	}
	sla, err := search.BuildSLA(search.Recipe{}, shorthand(p))
	if err != nil {
		return sweepPlan{}, &UsageError{err}
	}
	return sweepPlan{cells: cells, kind: kind, filters: sla.Filters}, nil
}

// Run runs the profile's sweep or search recipe.
func Run(ctx context.Context, opts Options) (*Outcome, error) {
	p := opts.Run.Profile
	shared := benchmark.NewShared()
	defer shared.Close()
	opts.Run.Shared = shared
	if p.Search.Recipe != "" {
		return runRecipe(ctx, opts)
	}
	plan, err := plainSweep(p)
	if err != nil {
		return nil, err
	}
	out, _, err := runSweep(ctx, opts, plan)
	return out, err
}

// UsageError is a combination of options the sweep or search refuses
// before its first run (exit code 2).
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// sweepParams are the profile's comma lists as sweep parameters.
func sweepParams(p config.Profile) ([]sweep.Param, error) {
	var params []sweep.Param
	for _, sp := range config.SweepParams {
		items, ok := p.Sweep.Lists[sp.Flag]
		if !ok {
			continue
		}
		param := sweep.Param{Path: sp.Path}
		for _, it := range items {
			x, err := strconv.ParseFloat(it, 64)
			if err != nil {
				return nil, fmt.Errorf("--%s: %q is not a number", sp.Flag, it)
			}
			if sp.Int && x != float64(int64(x)) {
				return nil, fmt.Errorf("--%s: %q is not a whole number", sp.Flag, it)
			}
			param.Values = append(param.Values, sweep.Value{F: x, Int: sp.Int})
		}
		params = append(params, param)
	}
	return params, nil
}

// overrides are the flag values that make a cell of the base profile.
func overrides(c sweep.Cell) ([][2]string, error) {
	var out [][2]string
	for _, a := range c.Assign {
		sp, ok := config.SweepParamOf(a.Path)
		if !ok {
			return nil, fmt.Errorf("sweep parameter %s is no option of llmbench", a.Path)
		}
		out = append(out, [2]string{sp.Flag, flagValue(a.Value)})
	}
	if c.Seed != nil {
		out = append(out, [2]string{"random-seed", strconv.FormatInt(*c.Seed, 10)})
	}
	return out, nil
}

// flagValue writes a swept value as a flag takes it.
func flagValue(v sweep.Value) string {
	if v.Int {
		return strconv.FormatInt(int64(v.F), 10)
	}
	return strconv.FormatFloat(v.F, 'g', -1, 64)
}

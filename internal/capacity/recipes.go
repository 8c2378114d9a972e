package capacity

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/llmbench/llmbench/internal/config"
	"github.com/llmbench/llmbench/internal/search"
	"github.com/llmbench/llmbench/internal/sweep"
)

// styleConfident is llmbench's planner, the default of every adaptive
// recipe: each probe's verdict decided at --confidence-level.
const styleConfident = search.StyleConfident

// shorthand are the profile's SLA flags as package search takes them
// (--slo-attainment-fraction only when given: its default is the goodput
// recipe's business).
func shorthand(p config.Profile) search.SLAFlags {
	se := p.Search
	f := search.SLAFlags{TTFTms: se.TTFTms, ITLms: se.ITLms, TPOTms: se.TPOTms, E2Ems: se.E2Ems, ErrorRate: se.ErrorRate, Search: se.SLAs}
	if p.WasSet("slo-attainment-fraction") {
		f.SLOAttainment = se.SLOAttainment
	}
	return f
}

// recipeRun is a recipe resolved against the command line: what to run
// and how to read it.
type recipeRun struct {
	recipe  search.Recipe
	style   string
	budget  int
	sla     search.SLAPlan
	lo, hi  int
	extra   [][2]string // flag values every run of the recipe gets
	profile config.Profile
	// maxTrials is the most trials a confident probe may run.
	maxTrials int
}

// resolveRecipe checks the recipe's options and refuses, in one line
// each, what it cannot take.
func resolveRecipe(p config.Profile) (*recipeRun, error) {
	se := p.Search
	r, err := search.LookupRecipe(se.Recipe)
	if err != nil {
		return nil, err
	}
	style := se.Style
	switch style {
	case search.StyleBO, search.StyleOptuna, search.StyleBayesian:
		return nil, fmt.Errorf("--search-style %s (Bayesian optimisation) is not built into llmbench: over one dimension the best point lies on the SLA boundary, which --search-style confident (the default), smooth_isotonic or monotonic find", style)
	}
	if r.DefaultStyle == search.StyleBayesian {
		// The BO recipes run the boundary search: over concurrency, with
		// SLA metrics that grow with load, the best feasible point is the
		// feasibility boundary (docs/capacity.md).
		if style != "" && style != styleConfident {
			return nil, fmt.Errorf("recipe %s takes --search-style confident only (its Bayesian optimiser is replaced by llmbench's boundary search); use --search-recipe max-concurrency-under-sla for the %s planner", r.Name, style)
		}
		style = styleConfident
		r.Styles = append(r.Styles, styleConfident)
	}
	if style == "" {
		style = r.DefaultStyle
		if r.Kind == search.Adaptive {
			style = styleConfident
		}
	}
	budget, err := r.Budget(style)
	if err != nil {
		return nil, err
	}
	adaptive := r.Kind == search.Adaptive && style != search.StyleGrid
	if se.MaxIterations != 0 {
		if !adaptive {
			return nil, fmt.Errorf("--search-max-iterations bounds an adaptive search; recipe %s runs a fixed grid (set its points with --concurrency-steps, --isl-steps or --osl-steps)", r.Name)
		}
		if se.MaxIterations < 2 || se.MaxIterations > 200 {
			return nil, fmt.Errorf("--search-max-iterations %d: use 2 to 200", se.MaxIterations)
		}
		budget = se.MaxIterations
	}
	plan, err := search.BuildSLA(r, shorthand(p))
	if err != nil {
		return nil, err
	}
	if plan.Streaming && !p.Endpoint.Streaming {
		return nil, fmt.Errorf("recipe %s needs --streaming: time to first token and inter-token latency are measured on streamed responses", r.Name)
	}
	rr := &recipeRun{recipe: r, style: style, budget: budget, sla: plan, profile: p, maxTrials: max(p.MultiRun.NumRuns, se.MaxTrialsPerProbe)}
	if style == styleConfident {
		if rr.maxTrials, err = trialsPerProbe(p, plan.Filters); err != nil {
			return nil, err
		}
	}
	rr.lo, rr.hi = orDefault(se.ConcurrencyMin, 1), orDefault(se.ConcurrencyMax, 1000)
	if r.Name == "decode-itl-curve" {
		rr.hi = orDefault(se.ConcurrencyMax, 200)
	}
	if rr.lo < 1 || rr.hi < rr.lo {
		return nil, fmt.Errorf("--concurrency-min %d and --concurrency-max %d: want 1 ≤ min ≤ max", rr.lo, rr.hi)
	}
	if len(plan.GoodputSLOs) > 0 {
		objs := make([]string, len(plan.GoodputSLOs))
		for i, g := range plan.GoodputSLOs {
			objs[i] = g.Tag + ":" + strconv.FormatFloat(g.Threshold, 'g', -1, 64)
		}
		rr.extra = append(rr.extra, [2]string{"goodput", strings.Join(objs, " ")})
	}
	return rr, nil
}

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// runRecipe runs --search-recipe: an adaptive search, or a grid or
// scenario sweep followed by the recipe's post-process file.
func runRecipe(ctx context.Context, opts Options) (*Outcome, error) {
	rr, err := resolveRecipe(opts.Run.Profile)
	if err != nil {
		return nil, &UsageError{err}
	}
	build := opts.Build
	opts.Build = func(ov [][2]string) (config.Profile, error) { return build(append(slices.Clone(rr.extra), ov...)) }
	if rr.recipe.Kind == search.Adaptive && rr.style != search.StyleGrid {
		pl, err := newPlanner(rr, opts.Run.Profile.MultiRun.ConfidenceLevel)
		if err != nil {
			return nil, &UsageError{err}
		}
		objective := rr.recipe.Objective
		if objective == "" {
			objective = objectiveTag
		}
		return runSearch(ctx, opts, adaptiveSearch{
			recipe: rr.recipe.Name, style: rr.style, filters: rr.sla.Filters, planner: pl,
			lo: rr.lo, hi: rr.hi, maxIter: rr.budget, objective: objective,
			maxTrials: rr.maxTrials,
		})
	}
	plan, err := gridPlan(rr)
	if err != nil {
		return nil, &UsageError{err}
	}
	out, res, err := runSweep(ctx, opts, plan)
	if err != nil || res == nil {
		return out, err
	}
	file, answer, perr := postProcess(rr, res)
	if file != "" {
		out.Files = append(out.Files, file)
	}
	out.Answer = answer
	return out, perr
}

// newPlanner makes the adaptive recipe's planner.
func newPlanner(rr *recipeRun, level float64) (search.Planner, error) {
	switch rr.style {
	case search.StyleMonotonic:
		return search.NewMonotonic(rr.lo, rr.hi, rr.budget, search.MonotonicOptions{})
	case search.StyleSmoothIsotonic:
		seed := uint64(0)
		if s := rr.profile.Input.RandomSeed; s != nil {
			seed = uint64(*s)
		}
		return search.NewSmoothIsotonic(rr.lo, rr.hi, rr.budget, search.SmoothOptions{Filters: rr.sla.Filters, Seed: seed})
	}
	c, err := search.NewConfident(rr.lo, rr.hi, rr.budget)
	if err != nil {
		return nil, err
	}
	c.Level = level
	return c, nil
}

// gridPlan lays out a grid or scenario recipe's cells.
func gridPlan(rr *recipeRun) (sweepPlan, error) {
	se := rr.profile.Search
	plan := sweepPlan{kind: sweep.Grid, filters: rr.sla.Filters}
	conc := func(steps int) sweep.Param {
		return intParam(search.PathConcurrency, search.LogGrid(rr.lo, rr.hi, orDefault(se.ConcurrencySteps, steps)))
	}
	var params []sweep.Param
	switch rr.recipe.Name {
	case "max-concurrency-under-sla": // --search-style grid
		params = []sweep.Param{conc(8)}
	case "concurrency-ramp":
		params = []sweep.Param{conc(8)}
	case "prefill-ttft-curve":
		isl := search.LogGrid(orDefault(se.ISLMin, 256), orDefault(se.ISLMax, 32768), orDefault(se.ISLSteps, 8))
		params = []sweep.Param{intParam(search.PathISL+".mean", isl), intParam(search.PathConcurrency, []int{1})}
	case "decode-itl-curve":
		osl := search.LogGrid(orDefault(se.OSLMin, 64), orDefault(se.OSLMax, 1024), orDefault(se.OSLSteps, 4))
		params = []sweep.Param{conc(6), intParam(search.PathOSL+".mean", osl)}
	case "pareto-sweep":
		return paretoPlan(rr)
	default:
		return plan, fmt.Errorf("recipe %s has no grid", rr.recipe.Name)
	}
	for _, steps := range []int{se.ConcurrencySteps, se.ISLSteps, se.OSLSteps} {
		if steps == 1 || steps < 0 {
			return plan, fmt.Errorf("a recipe's --concurrency-steps, --isl-steps and --osl-steps must be at least 2, not %d", steps)
		}
	}
	cells, err := sweep.Expand(params, false)
	if err != nil {
		return plan, err
	}
	plan.cells = cells
	return plan, nil
}

// paretoPlan is pareto-sweep's scenarios: every --isl-osl-pairs shape at
// every --concurrency value.
func paretoPlan(rr *recipeRun) (sweepPlan, error) {
	p := rr.profile
	raw := p.Search.ISLOSLPairs
	if raw == "" {
		return sweepPlan{}, fmt.Errorf("recipe pareto-sweep needs --isl-osl-pairs (e.g. 128/128,512/256)")
	}
	pairs, err := search.ParseISLOSLPairs(raw)
	if err != nil {
		return sweepPlan{}, err
	}
	concs := rr.recipe.Concurrencies
	if items, ok := p.Sweep.Lists["concurrency"]; ok {
		concs = nil
		for _, it := range items {
			c, _ := strconv.Atoi(it)
			concs = append(concs, c)
		}
	} else if p.WasSet("concurrency") {
		concs = []int{p.Loadgen.Concurrency}
	}
	scen, err := search.ParetoScenarios(pairs, concs)
	if err != nil {
		return sweepPlan{}, err
	}
	list := make([]sweep.Scenario, len(scen))
	for i, s := range scen {
		list[i] = sweep.Scenario{Name: s.Name, Values: []sweep.Assignment{
			{Path: "isl", Value: sweep.Int(int64(s.ISL))}, {Path: "osl", Value: sweep.Int(int64(s.OSL))}, {Path: "concurrency", Value: sweep.Int(int64(s.Concurrency))},
		}}
	}
	axes := &sweep.ParetoAxes{XMetric: "time_to_first_token", XStat: "p95", XMinimize: true, YMetric: "output_token_throughput", YStat: "avg", YMaximize: true}
	return sweepPlan{cells: sweep.Scenarios(list), kind: sweep.ScenarioSweep, filters: rr.sla.Filters, axes: axes}, nil
}

// intParam is a swept path with integer values.
func intParam(path string, values []int) sweep.Param {
	p := sweep.Param{Path: path}
	for _, v := range values {
		p.Values = append(p.Values, sweep.Int(int64(v)))
	}
	return p
}

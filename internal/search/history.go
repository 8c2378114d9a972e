package search

import (
	"math"

	"github.com/llmbench/llmbench/internal/sla"
)

// History is the content of search_history.json (b7), rewritten after
// every iteration and once at the end.
type History struct {
	Config     HistoryConfig
	Iterations []Iteration
	// Boundary is the planner's boundary_summary (Planner.Boundary); nil
	// derives it from the iterations: the highest feasible and the
	// lowest infeasible swept value.
	Boundary *BoundarySummary
	Recipe   string // "" is null
	// Reason is the convergence_reason. Mid-run writes leave Final false
	// and get null; the final write gets Reason, or "unknown" when empty.
	Reason string
	Final  bool
}

// HistoryConfig is search_history.json's config block. AIPerf's defaults
// for the Bayesian knobs are improvement_patience 10, plateau_window 8,
// plateau_threshold 0.01.
type HistoryConfig struct {
	Planner             string
	Objectives          []Objective
	OutcomeConstraints  []OutcomeConstraint
	MaxIterations       int
	InitialPoints       int
	RandomSeed          *int64 // nil is null
	ImprovementPatience int
	PlateauWindow       int
	PlateauThreshold    float64
	SearchSpace         []Dimension
	SLAFilters          []sla.Filter
}

// Objective is one of config.objectives.
type Objective struct {
	Metric, Stat string
	Maximize     bool
	Threshold    float64 // NaN is null
}

// OutcomeConstraint is one of config.outcome_constraints; Op is "<=",
// ">=" or "==".
type OutcomeConstraint struct {
	Metric, Op string
	Bound      float64
}

// Dimension is one of config.search_space; Kind is "int" or "real".
type Dimension struct {
	Path   string
	Lo, Hi float64
	Kind   string
}

// Iteration is one entry of iterations.
type Iteration struct {
	Index int
	// Values are variation_values, path → value, in order.
	Values []PathValue
	// Objectives are objective_values; empty is null.
	Objectives   []float64
	Feasible     bool
	NonMonotonic bool
	// FirstBreach is not written per iteration; it fills the derived
	// boundary_summary's infeasible_min.
	FirstBreach *Breach
}

// PathValue is one swept path's value.
type PathValue struct {
	Path  string
	Value float64
}

// JSON renders the history with AIPerf's keys and key order: config,
// iterations, best_trials, boundary_summary, recipe, convergence_reason;
// non-finite numbers become null.
func (h History) JSON() []byte {
	iters := make([]any, len(h.Iterations))
	for i, it := range h.Iterations {
		iters[i] = obj{}.
			with("iteration_idx", it.Index).
			with("variation_values", valuesJSON(it.Values)).
			with("objective_values", objectivesJSON(it.Objectives)).
			with("feasible", it.Feasible).
			with("non_monotonic_warning", it.NonMonotonic)
	}
	var recipe, reason any
	if h.Recipe != "" {
		recipe = h.Recipe
	}
	if h.Final {
		reason = h.Reason
		if h.Reason == "" {
			reason = "unknown"
		}
	}
	return encode(obj{}.
		with("config", h.Config.json()).
		with("iterations", iters).
		with("best_trials", h.bestTrials()).
		with("boundary_summary", h.boundary()).
		with("recipe", recipe).
		with("convergence_reason", reason))
}

func (c HistoryConfig) json() obj {
	objectives := make([]any, len(c.Objectives))
	for i, o := range c.Objectives {
		dir := "MINIMIZE"
		if o.Maximize {
			dir = "MAXIMIZE"
		}
		objectives[i] = obj{}.with("metric", o.Metric).with("stat", o.Stat).with("direction", dir).with("threshold", o.Threshold)
	}
	constraints := make([]any, len(c.OutcomeConstraints))
	for i, oc := range c.OutcomeConstraints {
		constraints[i] = obj{}.with("metric", oc.Metric).with("op", oc.Op).with("bound", oc.Bound)
	}
	space := make([]any, len(c.SearchSpace))
	for i, d := range c.SearchSpace {
		space[i] = obj{}.with("path", d.Path).with("lo", d.Lo).with("hi", d.Hi).with("kind", d.Kind)
	}
	var seed any
	if c.RandomSeed != nil {
		seed = int(*c.RandomSeed)
	}
	return obj{}.
		with("planner", c.Planner).
		with("objectives", objectives).
		with("outcome_constraints", constraints).
		with("max_iterations", c.MaxIterations).
		with("n_initial_points", c.InitialPoints).
		with("random_seed", seed).
		with("improvement_patience", c.ImprovementPatience).
		with("plateau_window", c.PlateauWindow).
		with("plateau_threshold", c.PlateauThreshold).
		with("search_space", space).
		with("sla_filters", filtersJSON(c.SLAFilters))
}

func filtersJSON(fs []sla.Filter) []any {
	out := make([]any, len(fs))
	for i, f := range fs {
		out[i] = obj{}.with("metric_tag", f.Tag).with("stat", f.Stat).with("op", string(f.Op)).with("threshold", f.Threshold)
	}
	return out
}

func valuesJSON(vs []PathValue) obj {
	o := make(obj, 0, len(vs))
	for _, v := range vs {
		o = o.with(v.Path, v.Value)
	}
	return o
}

func objectivesJSON(xs []float64) any {
	if len(xs) == 0 {
		return nil
	}
	return xs
}

// primary is an iteration's first objective, NaN when it has none.
func (it Iteration) primary() float64 {
	if len(it.Objectives) == 0 {
		return math.NaN()
	}
	return it.Objectives[0]
}

// bestTrials: among iterations with a finite first objective, the
// feasible ones (all of them when none is feasible, feasible_count then
// 0); one objective gives the single best (the first on ties), several
// the non-dominated set. null when none is scored.
func (h History) bestTrials() any {
	var scored, feasible []Iteration
	for _, it := range h.Iterations {
		if p := it.primary(); !math.IsNaN(p) && !math.IsInf(p, 0) {
			scored = append(scored, it)
			if it.Feasible {
				feasible = append(feasible, it)
			}
		}
	}
	pool := feasible
	if len(pool) == 0 {
		pool = scored
	}
	if len(pool) == 0 {
		return nil
	}
	var best []Iteration
	if len(h.Config.Objectives) <= 1 {
		maximize := len(h.Config.Objectives) == 0 || h.Config.Objectives[0].Maximize
		b := pool[0]
		for _, it := range pool[1:] {
			if (maximize && it.primary() > b.primary()) || (!maximize && it.primary() < b.primary()) {
				b = it
			}
		}
		best = []Iteration{b}
	} else {
		for i, it := range pool {
			dominated := false
			for j, other := range pool {
				if i != j && h.dominates(other, it) {
					dominated = true
					break
				}
			}
			if !dominated {
				best = append(best, it)
			}
		}
	}
	out := make([]any, len(best))
	for i, it := range best {
		out[i] = obj{}.
			with("iteration_idx", it.Index).
			with("objective_values", objectivesJSON(it.Objectives)).
			with("variation_values", valuesJSON(it.Values)).
			with("feasible", it.Feasible).
			with("feasible_count", len(feasible)).
			with("pareto_rank", 0)
	}
	return out
}

// dominates: a is no worse on every objective and better on one. An
// objective absent on either side is skipped; a non-finite one makes the
// pair incomparable (AIPerf's rules).
func (h History) dominates(a, b Iteration) bool {
	better := false
	for k, o := range h.Config.Objectives {
		if k >= len(a.Objectives) || k >= len(b.Objectives) {
			continue
		}
		x, y := a.Objectives[k], b.Objectives[k]
		if math.IsNaN(x) || math.IsInf(x, 0) || math.IsNaN(y) || math.IsInf(y, 0) {
			return false
		}
		if (o.Maximize && x < y) || (!o.Maximize && x > y) {
			return false
		}
		better = better || x != y
	}
	return better
}

// boundary is boundary_summary: null unless the search has one dimension
// and at least one iteration.
func (h History) boundary() any {
	if len(h.Config.SearchSpace) != 1 || len(h.Iterations) == 0 {
		return nil
	}
	path := h.Config.SearchSpace[0].Path
	b := h.Boundary
	if b == nil {
		b = deriveBoundary(h.Iterations, path)
		if b == nil {
			return nil
		}
	}
	if b.SweptDimPath != "" {
		path = b.SweptDimPath
	}
	var fmax, imin any
	if f := b.FeasibleMax; f != nil {
		fmax = obj{}.with("value", f.Value).with("iteration_idx", f.Iteration).with("objective_value", f.Objective)
	}
	if i := b.InfeasibleMin; i != nil {
		imin = obj{}.with("value", i.Value).with("iteration_idx", i.Iteration).with("first_breach", i.FirstBreach)
	}
	o := obj{}.with("swept_dim_path", path).with("feasible_max", fmax).with("infeasible_min", imin)
	if b.BoundaryType != "" {
		o = o.with("boundary_type", b.BoundaryType)
	}
	if b.BindingConstraint != "" {
		o = o.with("binding_constraint", b.BindingConstraint)
	}
	if ci := b.BoundaryCI; ci != nil {
		o = o.with("boundary_ci", obj{}.with("lo", ci.Lo).with("hi", ci.Hi))
	}
	// llmbench's additions come last, after AIPerf's keys.
	if b.UncertainValues != nil {
		o = o.with("uncertain_values", b.UncertainValues)
	}
	if b.ConfidenceLevel != 0 {
		o = o.with("confidence_level", b.ConfidenceLevel)
	}
	return o
}

// deriveBoundary is the summary of a planner without its own: the highest
// feasible and the lowest infeasible swept value (first on ties).
func deriveBoundary(its []Iteration, path string) *BoundarySummary {
	var b BoundarySummary
	var fv, iv float64
	for _, it := range its {
		v, ok := valueAt(it.Values, path)
		if !ok {
			continue
		}
		if it.Feasible && (b.FeasibleMax == nil || v > fv) {
			fv = v
			b.FeasibleMax = &FeasibleBound{Value: int(v), Iteration: it.Index, Objective: it.primary()}
		}
		if !it.Feasible && (b.InfeasibleMin == nil || v < iv) {
			iv = v
			b.InfeasibleMin = &InfeasibleBound{Value: int(v), Iteration: it.Index, FirstBreach: it.FirstBreach}
		}
	}
	if b.FeasibleMax == nil && b.InfeasibleMin == nil {
		return nil
	}
	return &b
}

func valueAt(vs []PathValue, path string) (float64, bool) {
	for _, v := range vs {
		if v.Path == path {
			return v.Value, true
		}
	}
	return 0, false
}

// Package search owns the logic of an adaptive SLA search and of AIPerf's
// search recipes: the recipe table, the confidence of a statistic read
// from per-request samples, the planners that choose the next concurrency
// to probe, and the JSON files a search and a recipe leave behind. It runs
// nothing: an orchestrator asks a Planner for a value, runs the probe, and
// tells the planner what came out.
package search

import (
	"errors"
	"fmt"
	"math"

	"github.com/llmbench/llmbench/internal/sla"
)

// Verdict is how one probe reads against the SLA filters.
type Verdict int

// The verdicts. The zero Verdict means "not given": the planners that
// read verdicts then fall back to Outcome.Feasible.
const (
	Pass      Verdict = iota + 1 // every filter holds at the stated confidence
	Fail                         // some filter is violated at the stated confidence
	Uncertain                    // neither, with the samples at hand
)

// String is the verdict's lower-case name.
func (v Verdict) String() string {
	switch v {
	case Pass:
		return "pass"
	case Fail:
		return "fail"
	case Uncertain:
		return "uncertain"
	}
	return "unknown"
}

// Breach is one failing filter with the value observed (search_history's
// first_breach, sla_breach.json's breaches). Observed is NaN when the
// metric was missing; it is written as null.
type Breach struct {
	MetricTag string
	Stat      string
	Op        sla.Op
	Threshold float64
	Observed  float64
}

// BreachOf is the breach record of filter f at observed value v.
func BreachOf(f sla.Filter, v float64) *Breach {
	return &Breach{MetricTag: f.Tag, Stat: f.Stat, Op: f.Op, Threshold: f.Threshold, Observed: v}
}

// Outcome is what one probe (one iteration of the search, all its trials)
// produced, as the orchestrator reports it to a planner.
type Outcome struct {
	// Value is the probed concurrency: the value Next returned.
	Value int
	// Feasible is AIPerf's iteration feasibility (b1): at least one
	// successful trial met every filter. The monotonic and smooth
	// planners decide on it.
	Feasible bool
	// Verdict is the confident reading of the probe; the confident
	// planner decides on it (zero: taken from Feasible).
	Verdict Verdict
	// Margins holds, per SLA filter in order, the signed margin
	// (sla.Filter.Margin of the mean over successful trials of the
	// filter's statistic): negative passes. NaN when the metric is
	// missing. The smooth planner needs it; others ignore it.
	Margins []float64
	// Objective is the mean objective over successful trials, NaN for none.
	Objective float64
	// FirstBreach is the first failing filter, nil when none fails.
	FirstBreach *Breach
}

// Planner chooses the concurrency of each probe of a one-dimensional SLA
// search. Call Next, run the probe, Tell its outcome, until Next reports
// the search finished.
type Planner interface {
	// Next is the value to probe, ok=false once the search is finished.
	// Until Tell is called it keeps returning the same value.
	Next() (value int, ok bool)
	// Tell records the outcome of the value Next returned. nonMonotonic
	// is this iteration's non_monotonic_warning: the outcome contradicts
	// the boundary found so far.
	Tell(o Outcome) (nonMonotonic bool, err error)
	// Reason is the convergence_reason, "" while the search runs.
	Reason() string
	// Boundary is the boundary_summary from the planner's own state, nil
	// when nothing is known yet.
	Boundary() *BoundarySummary
}

// BoundarySummary is search_history.json's boundary_summary.
type BoundarySummary struct {
	// SweptDimPath is the searched path; the history writer fills it
	// from the search space when empty (planners leave it empty).
	SweptDimPath  string
	FeasibleMax   *FeasibleBound
	InfeasibleMin *InfeasibleBound
	// BoundaryType ("smooth" or "cliff"), BindingConstraint and
	// BoundaryCI are the smooth planner's; zero values are left out.
	BoundaryType      string
	BindingConstraint string
	BoundaryCI        *Interval
	// UncertainValues are the probed values whose verdict stayed
	// uncertain (llmbench's; nil: left out).
	UncertainValues []int
	// ConfidenceLevel is the level the verdicts were decided at
	// (llmbench's; 0: left out).
	ConfidenceLevel float64
}

// FeasibleBound is boundary_summary.feasible_max.
type FeasibleBound struct {
	Value     int
	Iteration int
	Objective float64 // NaN: null
}

// InfeasibleBound is boundary_summary.infeasible_min.
type InfeasibleBound struct {
	Value       int
	Iteration   int
	FirstBreach *Breach
}

// Interval is a closed interval; a NaN end is written as null.
type Interval struct{ Lo, Hi float64 }

// The planners compile against the interface.
var (
	_ Planner = (*Monotonic)(nil)
	_ Planner = (*SmoothIsotonic)(nil)
	_ Planner = (*Confident)(nil)
)

// defaultPrecision is AIPerf's SLA_PRECISION_DEFAULT: bisection stops when
// the bracket gap is below this fraction of infeasible_min.
const defaultPrecision = 0.05

// noValue marks an unset bound: every probed value is at least 1.
const noValue = 0

var errNoProbe = errors.New("search: Tell without a pending probe: call Next first")

// checkRange validates a planner's range and budget.
func checkRange(lo, hi, maxIter int) error {
	if lo < 1 {
		return fmt.Errorf("search: the lowest concurrency must be at least 1, not %d", lo)
	}
	if hi < lo {
		return fmt.Errorf("search: the highest concurrency %d is below the lowest %d", hi, lo)
	}
	if maxIter < 1 {
		return fmt.Errorf("search: the iteration budget must be at least 1, not %d", maxIter)
	}
	return nil
}

// probe is the cursor every planner shares: the value asked and whether
// its outcome is still awaited, the count of outcomes told, the stop reason.
type probe struct {
	lo, hi, maxIter int
	cur             int
	pending         bool
	iter            int
	reason          string
	trail           []record
}

// record is one told outcome, kept to fill the boundary blocks.
type record struct {
	value     int
	iter      int
	feasible  bool
	objective float64
	breach    *Breach
}

// ask hands out the next value (from the given choice unless one is
// already pending) or reports the search finished, latching
// max_iterations when the budget is spent.
func (p *probe) ask(choose func() int) (int, bool) {
	if p.reason != "" {
		return 0, false
	}
	if p.iter >= p.maxIter {
		p.reason = "max_iterations"
		return 0, false
	}
	if !p.pending {
		p.cur = choose()
		p.pending = true
	}
	return p.cur, true
}

// take checks that o answers the pending probe and records it.
func (p *probe) take(o Outcome, feasible bool) error {
	if !p.pending {
		return errNoProbe
	}
	if o.Value != p.cur {
		return fmt.Errorf("search: told the outcome of %d, but the pending probe is %d", o.Value, p.cur)
	}
	p.pending = false
	p.trail = append(p.trail, record{value: o.Value, iter: p.iter, feasible: feasible, objective: o.Objective, breach: o.FirstBreach})
	return nil
}

// told closes an iteration: it counts it and latches max_iterations when
// no other reason ended the search and the budget is spent.
func (p *probe) told() {
	p.iter++
	if p.reason == "" && p.iter >= p.maxIter {
		p.reason = "max_iterations"
	}
}

// stop latches the first stop reason.
func (p *probe) stop(reason string) {
	if p.reason == "" {
		p.reason = reason
	}
}

// bracketStep moves the exponential bracket after the verdict at v: a
// pass asks 2v next (hi once 2v reaches it; a pass at hi sets fmax to hi
// and ends the search, <name>_no_failure_in_range); a fail before any
// pass ends it (<name>_no_pass_in_range). It reports whether the bracket
// is found (a fail above a pass), where bisection starts.
func (p *probe) bracketStep(name string, v int, pass bool, fmax, next *int) (found bool) {
	if !pass {
		if *fmax == noValue {
			p.stop(name + "_no_pass_in_range")
			return false
		}
		return true
	}
	n, top := p.doubling(v)
	if top {
		*fmax = p.hi
		p.stop(name + "_no_failure_in_range")
		return false
	}
	*next = n
	return false
}

// doubling is the bracket's next value after a pass at v: 2v, or hi once
// 2v reaches it; top reports that v is already hi.
func (p *probe) doubling(v int) (next int, top bool) {
	if v >= p.hi {
		return p.hi, true
	}
	if 2*v >= p.hi {
		return p.hi, false
	}
	return 2 * v, false
}

// latest is the last record at value with the given feasibility: the
// iteration a latched bound is reported from (AIPerf's rule).
func (p *probe) latest(value int, feasible bool) *record {
	for i := len(p.trail) - 1; i >= 0; i-- {
		r := &p.trail[i]
		if r.value == value && r.feasible == feasible {
			return r
		}
	}
	return nil
}

// bounds builds boundary_summary's feasible_max and infeasible_min blocks
// from latched bounds (noValue: unset); nil when both are unset.
func (p *probe) bounds(fmax, imin int) *BoundarySummary {
	if fmax == noValue && imin == noValue {
		return nil
	}
	b := &BoundarySummary{}
	if fmax != noValue {
		if r := p.latest(fmax, true); r != nil {
			b.FeasibleMax = &FeasibleBound{Value: fmax, Iteration: r.iter, Objective: r.objective}
		}
	}
	if imin != noValue {
		if r := p.latest(imin, false); r != nil {
			b.InfeasibleMin = &InfeasibleBound{Value: imin, Iteration: r.iter, FirstBreach: r.breach}
		}
	}
	return b
}

// precisionReached is AIPerf's stop test on an integer bracket: a gap of
// at most 1, or a gap below precision × infeasible_min.
func precisionReached(fmax, imin int, precision float64) bool {
	gap := imin - fmax
	return gap <= 1 || float64(gap)/math.Max(float64(imin), 1) < precision
}

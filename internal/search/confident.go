package search

import (
	"math"
	"slices"
)

// Confident is llmbench's default boundary search. It brackets like
// monotonic_sla (lo, doubling, hi once) and bisects, but probes each value
// once and decides on the probe's Verdict, which the orchestrator reached
// at a stated confidence (Decide) and with as many requests as its budget
// allowed:
//
//   - Pass raises feasible_max;
//   - Fail lowers infeasible_min;
//   - Uncertain is "not a confident pass": bisection narrows below it as
//     below a fail, but it is not reported as infeasible_min; it is listed
//     in uncertain_values.
//
// The search ends when the bracket gap (up to the lowest fail or
// uncertain value above feasible_max) is 1: the exact integer boundary,
// where AIPerf stops within 5 %.
type Confident struct {
	probe
	// Level is the confidence level the verdicts were decided at,
	// reported as boundary_summary.confidence_level (0: left out).
	Level     float64
	bisecting bool
	next      int
	fmax      int   // highest confident pass (noValue: none)
	imin      int   // lowest confident fail (noValue: none)
	uncertain []int // values whose verdict stayed uncertain, ascending
}

// NewConfident plans a confident search of concurrency in [lo, hi] within
// maxIter probes. The bracket and bisection need at most
// ⌈log2(hi/lo)⌉ + 1 + ⌈log2(gap)⌉ probes: 20 for [1, 1000].
func NewConfident(lo, hi, maxIter int) (*Confident, error) {
	if err := checkRange(lo, hi, maxIter); err != nil {
		return nil, err
	}
	return &Confident{probe: probe{lo: lo, hi: hi, maxIter: maxIter}, next: lo}, nil
}

// Next implements Planner.
func (c *Confident) Next() (int, bool) { return c.ask(func() int { return c.next }) }

// Reason implements Planner: confident_boundary_found,
// confident_no_pass_in_range, confident_lowest_uncertain (the lowest
// value could be decided neither way), confident_no_failure_in_range or
// max_iterations.
func (c *Confident) Reason() string { return c.reason }

// Boundary implements Planner: feasible_max is the highest confident
// pass, infeasible_min the lowest confident fail, boundary_ci spans them
// (an end is null when its bound is unknown), and uncertain_values lists
// the values in between that could not be decided.
func (c *Confident) Boundary() *BoundarySummary {
	b := c.bounds(c.fmax, c.imin)
	if b == nil {
		if len(c.uncertain) == 0 {
			return nil
		}
		b = &BoundarySummary{}
	}
	if len(c.uncertain) > 0 {
		b.UncertainValues = slices.Clone(c.uncertain)
	}
	if c.fmax != noValue || c.imin != noValue {
		b.BoundaryCI = &Interval{Lo: boundOrNaN(c.fmax), Hi: boundOrNaN(c.imin)}
	}
	b.ConfidenceLevel = c.Level
	return b
}

func boundOrNaN(v int) float64 {
	if v == noValue {
		return math.NaN()
	}
	return float64(v)
}

// verdictOf is o's verdict, from Feasible when none was given.
func verdictOf(o Outcome) Verdict {
	if o.Verdict != 0 {
		return o.Verdict
	}
	if o.Feasible {
		return Pass
	}
	return Fail
}

// Tell implements Planner. It decides on o.Verdict.
func (c *Confident) Tell(o Outcome) (bool, error) {
	verdict := verdictOf(o)
	// Only a confident fail counts as infeasible in the record the
	// boundary blocks are built from.
	if err := c.take(o, verdict == Pass); err != nil {
		return false, err
	}
	defer c.told()
	v := o.Value
	nonMono := false
	switch verdict {
	case Pass:
		nonMono = c.imin != noValue && v >= c.imin
		if !nonMono && (c.fmax == noValue || v > c.fmax) {
			c.fmax = v
		}
	case Fail:
		nonMono = c.fmax != noValue && v <= c.fmax
		if !nonMono && (c.imin == noValue || v < c.imin) {
			c.imin = v
		}
	default:
		if i, found := slices.BinarySearch(c.uncertain, v); !found {
			c.uncertain = slices.Insert(c.uncertain, i, v)
		}
	}
	if !c.bisecting {
		if verdict == Pass {
			next, top := c.doubling(v)
			if top {
				c.fmax = c.hi
				c.stop("confident_no_failure_in_range")
				return nonMono, nil
			}
			c.next = next
			return nonMono, nil
		}
		if c.fmax == noValue {
			if verdict == Uncertain {
				// Not a fail: the lowest load could not be decided.
				c.stop("confident_lowest_uncertain")
			} else {
				c.stop("confident_no_pass_in_range")
			}
			return nonMono, nil
		}
		c.bisecting = true
	}
	c.bisect()
	return nonMono, nil
}

// upper is the lowest value above feasible_max that is not a confident
// pass: the bracket's top for bisection.
func (c *Confident) upper() int {
	up := c.imin
	for _, u := range c.uncertain {
		if u > c.fmax && (up == noValue || u < up) {
			up = u
			break // ascending: the first above fmax is the lowest
		}
	}
	return up
}

func (c *Confident) bisect() {
	up := c.upper()
	if up == noValue {
		c.stop("confident_no_failure_in_range")
		return
	}
	gap := up - c.fmax
	if gap <= 1 {
		c.stop("confident_boundary_found")
		return
	}
	c.next = c.fmax + gap/2
}

package search

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/llmbench/llmbench/internal/sla"
)

// SmoothOptions configure the smooth_isotonic planner; zero values take
// AIPerf's defaults.
type SmoothOptions struct {
	// Filters are the SLA filters in order; Outcome.Margins follows it.
	Filters []sla.Filter
	// Replicates is sla_replicates: the probes of the candidate boundary
	// (capped at 20); 0 sizes them from the spread at the highest value.
	Replicates int
	// Precision is the relative bracket width that ends the search (0.05).
	Precision float64
	// Seed seeds the bootstrap, so a search replays exactly.
	Seed uint64
	// Resamples is the bootstrap's resample count (10 000).
	Resamples int
}

type smoothPhase int

const (
	phaseBracket smoothPhase = iota
	phaseFit
	phaseReplicate
	phaseCliff
)

// Knobs of the fit step, as AIPerf sets them.
const (
	fitInternalProbes = 3  // first fit: probes inside the bracket
	fitMinDistinct    = 3  // fewer PAVA levels than this: more data
	maxFitCycles      = 3  // refits before giving up on more data
	maxReplicates     = 20 // cap of the replicate count
	bootstrapLevel    = 0.95
	// maxReplans bounds the planning steps run without a probe in
	// between (each step either queues a probe or stops; a handful is
	// the most a real sequence needs).
	maxReplans = 16
)

// SmoothIsotonic is AIPerf's smooth_isotonic planner (b4): the monotonic
// bracket with one probe per value, then fits of the binding filter's
// margin curve (PAVA, strictify, PCHIP) whose root proposes the
// boundary, a cliff guard that falls back to bisection, and replicate
// probes whose bootstrap interval confirms the boundary.
//
// One deliberate difference: where AIPerf, having queued no new probe,
// re-asks the last probed value, this planner plans again at once (the
// next step always queues a probe or stops), so no probe is spent on a
// stale value.
type SmoothIsotonic struct {
	probe
	filters    []sla.Filter
	replicates int
	precision  float64
	resamples  int
	rng        *rand.Rand

	phase        smoothPhase
	next         int   // the bracket's next value
	queue        []int // probes queued by the fit, replicate and cliff steps
	margins      map[int][][]float64
	fmax, imin   int
	candidate    int
	fitCount     int
	binding      int // index of the binding filter, -1 before the first fit
	boundaryType string
	ci           *Interval
}

// NewSmoothIsotonic plans a smooth_isotonic search of concurrency in
// [lo, hi] within maxIter iterations.
func NewSmoothIsotonic(lo, hi, maxIter int, opt SmoothOptions) (*SmoothIsotonic, error) {
	if err := checkRange(lo, hi, maxIter); err != nil {
		return nil, err
	}
	if len(opt.Filters) == 0 {
		return nil, errors.New("search: smooth_isotonic needs at least one SLA filter (--search-sla, --ttft-sla-ms, …)")
	}
	if opt.Precision <= 0 {
		opt.Precision = defaultPrecision
	}
	if opt.Resamples <= 0 {
		opt.Resamples = 10000
	}
	return &SmoothIsotonic{
		probe:      probe{lo: lo, hi: hi, maxIter: maxIter},
		filters:    slices.Clone(opt.Filters),
		replicates: opt.Replicates,
		precision:  opt.Precision,
		resamples:  opt.Resamples,
		rng:        rand.New(rand.NewPCG(opt.Seed, 0x5107)),
		next:       lo,
		margins:    map[int][][]float64{},
		binding:    -1,
	}, nil
}

// Next implements Planner.
func (s *SmoothIsotonic) Next() (int, bool) {
	return s.ask(func() int {
		if len(s.queue) > 0 {
			v := s.queue[0]
			s.queue = s.queue[1:]
			return v
		}
		return s.next
	})
}

// Reason implements Planner: smooth_isotonic_precision_reached,
// smooth_isotonic_cliff_precision_reached,
// smooth_isotonic_pchip_fallback_bisection,
// smooth_isotonic_no_pass_in_range, smooth_isotonic_no_failure_in_range
// or max_iterations.
func (s *SmoothIsotonic) Reason() string { return s.reason }

// Boundary implements Planner, with boundary_type, binding_constraint
// and boundary_ci (the bootstrap interval of the mean binding margin at
// the candidate) when known.
func (s *SmoothIsotonic) Boundary() *BoundarySummary {
	b := s.bounds(s.fmax, s.imin)
	if b == nil {
		return nil
	}
	b.BoundaryType = s.boundaryType
	if s.binding >= 0 {
		b.BindingConstraint = bindingKey(s.binding, s.filters[s.binding])
	}
	if s.ci != nil {
		ci := *s.ci
		b.BoundaryCI = &ci
	}
	return b
}

// Tell implements Planner. It decides on o.Feasible and fits o.Margins.
func (s *SmoothIsotonic) Tell(o Outcome) (bool, error) {
	if len(o.Margins) != len(s.filters) {
		return false, fmt.Errorf("search: the outcome has %d margins for %d SLA filters", len(o.Margins), len(s.filters))
	}
	if err := s.take(o, o.Feasible); err != nil {
		return false, err
	}
	defer s.told()
	v := o.Value
	s.margins[v] = append(s.margins[v], slices.Clone(o.Margins))
	nonMono := s.absorb(v, o.Feasible)
	if s.phase == phaseBracket {
		s.planBracket(v, o.Feasible)
	} else {
		s.step()
	}
	for i := 0; s.reason == "" && s.phase != phaseBracket && len(s.queue) == 0; i++ {
		if i == maxReplans {
			s.finish("smooth_isotonic_precision_reached")
			break
		}
		s.step()
	}
	return nonMono, nil
}

// absorb moves the bracket; a verdict contradicting the other bound is
// flagged and leaves the bracket alone.
func (s *SmoothIsotonic) absorb(v int, feasible bool) bool {
	if feasible {
		if s.imin != noValue && v >= s.imin {
			return true
		}
		if s.fmax == noValue || v > s.fmax {
			s.fmax = v
		}
		return false
	}
	if s.fmax != noValue && v <= s.fmax {
		return true
	}
	if s.imin == noValue || v < s.imin {
		s.imin = v
	}
	return false
}

func (s *SmoothIsotonic) planBracket(v int, feasible bool) {
	if s.bracketStep("smooth_isotonic", v, feasible, &s.fmax, &s.next) {
		s.phase = phaseFit
		s.queueInside()
	}
}

func (s *SmoothIsotonic) step() {
	switch s.phase {
	case phaseFit:
		s.planFit()
	case phaseReplicate:
		s.planReplicate()
	case phaseCliff:
		s.planCliff()
	}
}

// finish stops with reason; the boundary is smooth unless found a cliff.
func (s *SmoothIsotonic) finish(reason string) {
	s.stop(reason)
	if s.boundaryType == "" {
		s.boundaryType = "smooth"
	}
}

func (s *SmoothIsotonic) bracketed() bool { return s.fmax != noValue && s.imin != noValue }

func (s *SmoothIsotonic) probed(x int) bool { return len(s.margins[x]) > 0 }

// inside is fmax + max(1, round(gap·frac)) kept strictly inside the
// bracket (Python rounds half to even).
func (s *SmoothIsotonic) inside(frac float64) int {
	gap := s.imin - s.fmax
	x := s.fmax + max(1, int(math.RoundToEven(float64(gap)*frac)))
	return max(min(x, s.imin-1), s.fmax+1)
}

// queueInside queues the first fit's probes at k/4 of the gap, k = 1…3.
func (s *SmoothIsotonic) queueInside() {
	if !s.bracketed() || s.imin-s.fmax <= 1 {
		return
	}
	for k := 1; k <= fitInternalProbes; k++ {
		x := s.inside(float64(k) / (fitInternalProbes + 1))
		if !s.probed(x) && !slices.Contains(s.queue, x) {
			s.queue = append(s.queue, x)
		}
	}
}

// queueRefit queues probes at 1/8 and 5/8 of the gap.
func (s *SmoothIsotonic) queueRefit() {
	if !s.bracketed() || s.imin-s.fmax <= 1 {
		return
	}
	for _, frac := range [...]float64{0.125, 0.625} {
		x := s.inside(frac)
		if !s.probed(x) && !slices.Contains(s.queue, x) {
			s.queue = append(s.queue, x)
		}
	}
}

func (s *SmoothIsotonic) planFit() {
	if len(s.queue) > 0 {
		return // still probing
	}
	s.fitCount++
	cand, ok := s.fitAndSolve()
	if !ok {
		if cand, ok = s.midpoint(); !ok {
			s.finish("smooth_isotonic_pchip_fallback_bisection")
			return
		}
	}
	if s.needsMoreData() && s.fitCount < maxFitCycles {
		s.queueRefit()
		return
	}
	s.candidate = cand
	s.replicateOrStop(cand)
}

// midpoint is the bisection fallback fmax + gap/2.
func (s *SmoothIsotonic) midpoint() (int, bool) {
	if !s.bracketed() || s.imin-s.fmax <= 1 {
		return 0, false
	}
	return s.fmax + (s.imin-s.fmax)/2, true
}

func (s *SmoothIsotonic) precisionReached() bool {
	return s.bracketed() && precisionReached(s.fmax, s.imin, s.precision)
}

// replicateOrStop ends the fit step: bisection on a cliff; else stop at
// precision, or probe the candidate (once, or R times to bootstrap it).
func (s *SmoothIsotonic) replicateOrStop(cand int) {
	if s.cliff() {
		s.boundaryType = "cliff"
		s.phase = phaseCliff
		s.planCliff()
		return
	}
	s.boundaryType = "smooth"
	if s.precisionReached() {
		s.finish("smooth_isotonic_precision_reached")
		return
	}
	r := s.replicateBudget()
	if r <= 0 {
		if s.probed(cand) {
			s.finish("smooth_isotonic_precision_reached")
			return
		}
		s.queue = append(s.queue, cand)
		s.phase = phaseFit
		return
	}
	for range r {
		s.queue = append(s.queue, cand)
	}
	s.phase = phaseReplicate
}

func (s *SmoothIsotonic) planReplicate() {
	if len(s.queue) > 0 {
		return
	}
	if s.candidate == noValue || s.binding < 0 {
		s.finish("smooth_isotonic_precision_reached")
		return
	}
	ms := s.samples(s.binding, s.candidate)
	if len(ms) < 2 {
		s.finish("smooth_isotonic_precision_reached")
		return
	}
	lo, hi := bootstrapMeanCI(ms, bootstrapLevel, s.resamples, s.rng)
	s.ci = &Interval{Lo: lo, Hi: hi}
	if lo <= 0 && 0 <= hi {
		s.queueRefit() // the boundary is not settled: more of the curve
		s.phase = phaseFit
		return
	}
	s.finish("smooth_isotonic_precision_reached")
}

func (s *SmoothIsotonic) planCliff() {
	if len(s.queue) > 0 {
		return
	}
	mid, ok := s.midpoint()
	if s.precisionReached() || !ok {
		s.finish("smooth_isotonic_cliff_precision_reached")
		return
	}
	s.queue = append(s.queue, mid)
}

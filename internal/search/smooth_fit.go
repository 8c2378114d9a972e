package search

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/llmbench/llmbench/internal/sla"
	"github.com/llmbench/llmbench/internal/stats"
)

// The smooth planner's reading of its data: the margin series per
// filter, the fit and its root, the binding filter, the cliff guard and
// the replicate budget.

// bindingKey is AIPerf's constraint key "<index>:<tag>.<stat>.<op>.<threshold>",
// the threshold as Python prints a float (200.0).
func bindingKey(i int, f sla.Filter) string {
	return fmt.Sprintf("%d:%s.%s.%s.%s", i, f.Tag, f.Stat, f.Op, pyFloat(f.Threshold))
}

// pyFloat formats v as Python's repr of a float.
func pyFloat(v float64) string {
	if a := math.Abs(v); a != 0 && (a < 1e-4 || a >= 1e16) {
		return strconv.FormatFloat(v, 'e', -1, 64)
	}
	t := strconv.FormatFloat(v, 'f', -1, 64)
	if !slices.Contains([]byte(t), '.') {
		t += ".0"
	}
	return t
}

// samples are filter i's margins measured at x (missing ones left out).
func (s *SmoothIsotonic) samples(i, x int) []float64 {
	var out []float64
	for _, m := range s.margins[x] {
		if !math.IsNaN(m[i]) {
			out = append(out, m[i])
		}
	}
	return out
}

// series is filter i's mean margin at each probed value where it was
// measured, by value.
func (s *SmoothIsotonic) series(i int) (xs, ys []float64) {
	for _, x := range slices.Sorted(maps.Keys(s.margins)) {
		if ms := s.samples(i, x); len(ms) > 0 {
			xs = append(xs, float64(x))
			ys = append(ys, stats.Mean(ms))
		}
	}
	return xs, ys
}

// fitAndSolve fits every filter's margin curve, picks the binding filter
// and proposes the rounded root of its curve inside the bracket.
func (s *SmoothIsotonic) fitAndSolve() (int, bool) {
	values := slices.Sorted(maps.Keys(s.margins))
	if len(values) < 2 {
		return 0, false
	}
	last := values[len(values)-1]
	curves := make([]*pchip, len(s.filters))
	margins := make([]float64, len(s.filters))
	sigmas := make([]float64, len(s.filters))
	for i := range s.filters {
		xs, ys := s.series(i)
		if len(xs) < len(values) {
			continue // missing somewhere: no curve, margin 0 (AIPerf's rule)
		}
		curves[i], _ = smoothFit(xs, ys)
		margins[i] = ys[len(ys)-1]
		if ms := s.samples(i, last); len(ms) >= 2 {
			sigmas[i] = stats.StdDev(ms, 1)
		}
	}
	s.binding = s.selectBinding(margins, sigmas)
	curve := curves[s.binding]
	if curve == nil || !s.bracketed() {
		return 0, false
	}
	root, ok := curve.root(float64(s.fmax), float64(s.imin))
	if !ok {
		return 0, false
	}
	cand := int(math.RoundToEven(root))
	if cand <= s.fmax {
		cand = s.fmax + 1
	}
	if cand >= s.imin {
		cand = s.imin - 1
	}
	return cand, true
}

// selectBinding is the filter with the largest margin at the highest
// probed value, normalized by max(σ, 1 % of |threshold|) once some
// filter has a spread there. Ties go to the first filter.
func (s *SmoothIsotonic) selectBinding(margins, sigmas []float64) int {
	normalize := slices.ContainsFunc(sigmas, func(v float64) bool { return v > 0 })
	best, bestV := 0, math.Inf(-1)
	for i, m := range margins {
		if normalize {
			if floor := math.Max(sigmas[i], 0.01*math.Abs(s.filters[i].Threshold)); floor != 0 {
				m /= floor
			}
		}
		if m > bestV {
			best, bestV = i, m
		}
	}
	return best
}

// needsMoreData: the binding series is too short (< 4 values) or its
// PAVA fit too flat (< 3 levels) to trust a spline.
func (s *SmoothIsotonic) needsMoreData() bool {
	if s.binding < 0 {
		return false
	}
	_, ys := s.series(s.binding)
	return len(ys) < 4 || distinctLevels(pava(ys)) < fitMinDistinct
}

// cliff is the PAVA-residual guard on the binding series: at the highest
// probed value the mean margin lies more than 3 σ_local off the fitted
// curve (σ_local: population std of the three highest values' margins)
// while the bracket is still wider than precision × hi.
func (s *SmoothIsotonic) cliff() bool {
	if s.binding < 0 {
		return false
	}
	xs, ys := s.series(s.binding)
	n := len(ys)
	if n < 3 {
		return false
	}
	sigma := stats.StdDev(ys[n-3:], 0)
	if sigma == 0 {
		return false
	}
	curve, _ := smoothFit(xs, ys)
	if math.Abs(ys[n-1]-curve.at(xs[n-1])) <= 3*sigma {
		return false
	}
	gap := 0
	if s.bracketed() {
		gap = s.imin - s.fmax
	}
	return float64(gap) > s.precision*float64(s.hi)
}

// replicateBudget is sla_replicates (capped) or, unset,
// min(20, max(3, ⌈4 (σ/|threshold|)²⌉)) with σ the sample std of the
// binding margins at the highest probed value (0 with fewer than two).
func (s *SmoothIsotonic) replicateBudget() int {
	if s.replicates > 0 {
		return min(maxReplicates, s.replicates)
	}
	if s.binding < 0 || len(s.margins) == 0 {
		return 0
	}
	last := slices.Max(slices.Collect(maps.Keys(s.margins)))
	ms := s.samples(s.binding, last)
	if len(ms) < 2 {
		return 0
	}
	ratio := stats.StdDev(ms, 1) / math.Max(math.Abs(s.filters[s.binding].Threshold), 1e-9)
	return min(maxReplicates, max(3, int(math.Ceil(4*ratio*ratio))))
}

package chart

import (
	"cmp"
	"math"
	"slices"
)

// Thin picks at most limit of n per-request points to draw, as indices in
// increasing order, so that a 10,000-request report stays small and
// quick. Every point whose value is in the top tailShare of values (the
// slow requests a reader looks for) is kept, up to half of limit; the rest
// are taken at an even stride. Percentile lines are computed from all
// values, not from the kept ones, so they stay exact. values may hold
// NaNs (points without a value), which are never kept.
func Thin(values []float64, limit int) []int {
	var valid []int
	for i, v := range values {
		if !math.IsNaN(v) {
			valid = append(valid, i)
		}
	}
	if len(valid) <= limit || limit <= 0 {
		return valid
	}
	// The tail: the largest values, at most limit/2 of them.
	byValue := slices.Clone(valid)
	slices.SortStableFunc(byValue, func(a, b int) int { return cmp.Compare(values[b], values[a]) })
	tail := min(limit/2, int(math.Ceil(float64(len(valid))*tailShare)))
	keep := make(map[int]bool, limit)
	for _, i := range byValue[:tail] {
		keep[i] = true
	}
	rest := limit - tail
	for k := 0; k < rest; k++ {
		// Even positions over the valid points, first and last included.
		pos := int(math.Round(float64(k) * float64(len(valid)-1) / float64(max(rest-1, 1))))
		keep[valid[pos]] = true
	}
	out := make([]int, 0, len(keep))
	for i := range keep {
		out = append(out, i)
	}
	slices.Sort(out)
	return out
}

// tailShare is the share of the largest values Thin always keeps.
const tailShare = 0.01

// CDF is the empirical distribution of values (NaNs left out): X the
// sorted values, Y the percentage of values at or below each, at most
// maxPoints points (evenly spaced ranks, the smallest and largest value
// always among them). ok is false when there is no value.
func CDF(values []float64, maxPoints int) (x, y []float64, ok bool) {
	sorted := make([]float64, 0, len(values))
	for _, v := range values {
		if !math.IsNaN(v) {
			sorted = append(sorted, v)
		}
	}
	n := len(sorted)
	if n == 0 {
		return nil, nil, false
	}
	slices.Sort(sorted)
	step := 1
	if maxPoints > 1 && n > maxPoints {
		step = int(math.Ceil(float64(n-1) / float64(maxPoints-1)))
	}
	for i := 0; i < n; i += step {
		x, y = append(x, sorted[i]), append(y, 100*float64(i+1)/float64(n))
	}
	if last := n - 1; last%step != 0 {
		x, y = append(x, sorted[last]), append(y, 100)
	}
	return x, y, true
}

// Frontier returns the indices of the Pareto-optimal points, sorted by x,
// as AIPerf's plots find them: sorted by x (for equal x the better y
// first), scanned from the better end of x, a point is kept when its y is
// at least as good as the best y seen so far (ties all stay). lowerXBetter
// and higherYBetter give the directions. Points with a NaN coordinate are
// left out.
func Frontier(xs, ys []float64, lowerXBetter, higherYBetter bool) []int {
	var idx []int
	for i := range xs {
		if !math.IsNaN(xs[i]) && !math.IsNaN(ys[i]) {
			idx = append(idx, i)
		}
	}
	better := func(a, b float64) int { // >0 when a is a better y than b
		if higherYBetter {
			return cmp.Compare(a, b)
		}
		return cmp.Compare(b, a)
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		if c := cmp.Compare(xs[a], xs[b]); c != 0 {
			return c
		}
		return -better(ys[a], ys[b])
	})
	scan := slices.Clone(idx)
	if !lowerXBetter {
		// Scan from the largest x; for equal x still the better y first.
		slices.SortStableFunc(scan, func(a, b int) int {
			if c := cmp.Compare(xs[b], xs[a]); c != 0 {
				return c
			}
			return -better(ys[a], ys[b])
		})
	}
	var kept []int
	for k, i := range scan {
		// Every kept point is at least as good as those before it, so
		// the last kept is the best seen.
		if k == 0 || better(ys[i], ys[kept[len(kept)-1]]) >= 0 {
			kept = append(kept, i)
		}
	}
	slices.SortStableFunc(kept, func(a, b int) int { return cmp.Compare(xs[a], xs[b]) })
	return kept
}

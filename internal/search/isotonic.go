package search

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/llmbench/llmbench/internal/stats"
)

// pava is the increasing isotonic regression of ys with unit weights (the
// pool-adjacent-violators algorithm, scipy.optimize.isotonic_regression):
// the non-decreasing sequence closest to ys in least squares.
func pava(ys []float64) []float64 {
	// Blocks of pooled values: their mean and size.
	means := make([]float64, 0, len(ys))
	sizes := make([]int, 0, len(ys))
	for _, y := range ys {
		means = append(means, y)
		sizes = append(sizes, 1)
		for k := len(means) - 1; k > 0 && means[k-1] > means[k]; k-- {
			n := sizes[k-1] + sizes[k]
			means[k-1] = (means[k-1]*float64(sizes[k-1]) + means[k]*float64(sizes[k])) / float64(n)
			sizes[k-1] = n
			means, sizes = means[:k], sizes[:k]
		}
	}
	out := make([]float64, 0, len(ys))
	for i, m := range means {
		for range sizes[i] {
			out = append(out, m)
		}
	}
	return out
}

// strictify adds i·ε to the i-th value, ε = 1e-9 × (last − first) (1e-9
// when that span is not positive), so a PAVA fit with flat runs becomes
// strictly increasing and its spline has one root.
func strictify(ys []float64) []float64 {
	out := slices.Clone(ys)
	if len(out) == 0 {
		return out
	}
	eps := 1e-9
	if span := out[len(out)-1] - out[0]; span > 0 {
		eps *= span
	}
	for i := range out {
		out[i] += float64(i) * eps
	}
	return out
}

// pchip is a piecewise cubic Hermite interpolant with Fritsch–Carlson
// slopes (scipy.interpolate.PchipInterpolator): monotone wherever the
// data are.
type pchip struct {
	xs, ys, ds []float64
}

// newPCHIP builds the interpolant of strictly increasing xs (≥ 2 points).
func newPCHIP(xs, ys []float64) *pchip {
	n := len(xs)
	ds := make([]float64, n)
	h := make([]float64, n-1)
	m := make([]float64, n-1)
	for k := range n - 1 {
		h[k] = xs[k+1] - xs[k]
		m[k] = (ys[k+1] - ys[k]) / h[k]
	}
	if n == 2 { // a line
		ds[0], ds[1] = m[0], m[0]
		return &pchip{xs: xs, ys: ys, ds: ds}
	}
	for k := 1; k < n-1; k++ {
		if m[k-1] == 0 || m[k] == 0 || math.Signbit(m[k-1]) != math.Signbit(m[k]) {
			continue // a local extremum or a flat side: slope 0
		}
		w1 := 2*h[k] + h[k-1]
		w2 := h[k] + 2*h[k-1]
		ds[k] = (w1 + w2) / (w1/m[k-1] + w2/m[k])
	}
	ds[0] = pchipEdge(h[0], h[1], m[0], m[1])
	ds[n-1] = pchipEdge(h[n-2], h[n-3], m[n-2], m[n-3])
	return &pchip{xs: xs, ys: ys, ds: ds}
}

// pchipEdge is the one-sided three-point end slope, kept monotone.
func pchipEdge(h0, h1, m0, m1 float64) float64 {
	d := ((2*h0+h1)*m0 - h0*m1) / (h0 + h1)
	if sign(d) != sign(m0) {
		return 0
	}
	if sign(m0) != sign(m1) && math.Abs(d) > 3*math.Abs(m0) {
		return 3 * m0
	}
	return d
}

func sign(x float64) int {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

// at evaluates the interpolant at x, clamped to its domain.
func (p *pchip) at(x float64) float64 {
	n := len(p.xs)
	k, _ := slices.BinarySearch(p.xs, x)
	switch {
	case k == 0:
		return p.ys[0]
	case k >= n:
		return p.ys[n-1]
	}
	return p.segment(k-1, x)
}

// segment evaluates the cubic of [xs[k], xs[k+1]] at x.
func (p *pchip) segment(k int, x float64) float64 {
	h := p.xs[k+1] - p.xs[k]
	t := (x - p.xs[k]) / h
	t2, t3 := t*t, t*t*t
	return (2*t3-3*t2+1)*p.ys[k] + (t3-2*t2+t)*h*p.ds[k] + (-2*t3+3*t2)*p.ys[k+1] + (t3-t2)*h*p.ds[k+1]
}

// root is the first zero of the interpolant inside its domain and inside
// [lo, hi]; ok=false when there is none. The curves it is used on are
// monotone, so the first sign change is the only one.
func (p *pchip) root(lo, hi float64) (x float64, ok bool) {
	n := len(p.xs)
	for k := 0; k < n && !ok; k++ {
		switch {
		case p.ys[k] == 0:
			x, ok = p.xs[k], true
		case k < n-1 && sign(p.ys[k])*sign(p.ys[k+1]) < 0:
			x, ok = p.bisect(k), true
		}
	}
	if !ok || x < lo || x > hi {
		return 0, false
	}
	return x, true
}

// bisect finds the zero of segment k, whose ends have opposite signs.
func (p *pchip) bisect(k int) float64 {
	a, b := p.xs[k], p.xs[k+1]
	negA := p.ys[k] < 0
	for range 200 {
		mid := a + (b-a)/2
		if mid <= a || mid >= b {
			break
		}
		fm := p.segment(k, mid)
		if fm == 0 {
			return mid
		}
		if (fm < 0) == negA {
			a = mid
		} else {
			b = mid
		}
	}
	return a + (b-a)/2
}

// smoothFit is smooth_isotonic's curve through (xs, ys): PAVA, then
// strictify, then PCHIP. fitted is the PAVA fit before strictify.
func smoothFit(xs, ys []float64) (curve *pchip, fitted []float64) {
	fitted = pava(ys)
	return newPCHIP(xs, strictify(fitted)), fitted
}

// distinctLevels counts the distinct values of a fit rounded to 9
// decimals (Python's round(v, 9)).
func distinctLevels(ys []float64) int {
	seen := map[float64]bool{}
	for _, y := range ys {
		seen[math.RoundToEven(y*1e9)/1e9] = true
	}
	return len(seen)
}

// bootstrapMeanCI is the percentile bootstrap interval of the mean of xs
// at level (resamples draws with replacement); a single value gives the
// point interval.
func bootstrapMeanCI(xs []float64, level float64, resamples int, rng *rand.Rand) (lo, hi float64) {
	n := len(xs)
	if n == 1 {
		return xs[0], xs[0]
	}
	means := make([]float64, resamples)
	for b := range means {
		var s float64
		for range n {
			s += xs[rng.IntN(n)]
		}
		means[b] = s / float64(n)
	}
	slices.Sort(means)
	alpha := (1 - level) / 2 * 100
	return stats.PercentileSorted(means, alpha), stats.PercentileSorted(means, 100-alpha)
}

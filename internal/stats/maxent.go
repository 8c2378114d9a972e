package stats

import (
	"math"
	"sort"
)

// maxEntGrid is the number of steps a two-moment shape is tabulated on.
const maxEntGrid = 256

// newTwoMomentShape is the maximum-entropy density on [lower, upper] with
// the given mean and variance: ∝ exp(λ₁x + λ₂x²), a truncated normal when
// the variance is below the exponential shape's (a peak inside the
// bucket; a plain normal when the peak is far from both edges), a U-shape
// when above. Where the variance says nothing new (within
// varianceChange of the exponential shape's, unknown, or beyond what the
// grid resolves) it is the exponential shape.
func newTwoMomentShape(lower, upper, mean, variance float64) bucketShape {
	exp := newBucketShape(lower, upper, mean)
	if exp.infinite {
		return newTailShape(lower, mean, variance)
	}
	if exp.width <= 0 || math.IsNaN(variance) {
		return exp
	}
	l1, l2, kind := unitTwoMoment((mean-lower)/exp.width, variance/(exp.width*exp.width))
	switch kind {
	case shapeNormal:
		exp.normal, exp.mu, exp.sigma = true, mean, math.Sqrt(variance)
	case shapeGrid:
		exp.table = maxEntTable(l1, l2)
	}
	return exp
}

// The kinds of two-moment shape newTwoMomentShape builds.
const (
	shapeExponential = iota
	shapeNormal
	shapeGrid
)

// unitTwoMoment is the shape newTwoMomentShape builds on [0, 1] for mean m
// and variance v: its kind and the exponent λ₁x + λ₂x² (β, 0 for the
// exponential; m/v, −1/(2v) for the normal). The exponential where the
// variance says nothing new (within varianceChange of its own, unknown,
// or beyond what the grid resolves); the normal for a peak six standard
// deviations clear of both edges, where truncation changes nothing
// measurable; else the grid's maximum-entropy shape, its peak resolved
// over several steps.
func unitTwoMoment(m, v float64) (l1, l2 float64, kind int) {
	beta := truncExpRate(m)
	vExp := truncExpVariance(beta)
	const minSD = 8.0 / maxEntGrid
	switch {
	case math.IsNaN(v) || v <= 0 || v >= m*(1-m)*0.98 || math.Abs(v-vExp) <= varianceChange*vExp:
		return beta, 0, shapeExponential
	case m-6*math.Sqrt(v) > 0 && m+6*math.Sqrt(v) < 1:
		return m / v, -1 / (2 * v), shapeNormal
	case m <= minSD || m >= 1-minSD:
		return beta, 0, shapeExponential
	}
	l1, l2, ok := maxEntLambdas(m, math.Max(v, minSD*minSD), beta)
	if !ok {
		return beta, 0, shapeExponential
	}
	return l1, l2, shapeGrid
}

// newTailShape is the +Inf bucket's law given the mean and variance of its
// observations: the generalized Pareto law of their excess over the largest
// bound, with its shape ξ and scale σ matched to those two moments. By the
// Pickands–Balkema–de Haan theorem the excess over a high threshold tends
// to that law whatever the distribution; ξ = 0 is the exponential tail
// (which a mean alone implies, and which is kept where the variance is
// unknown or within varianceChange of it), ξ < 0 a tail that ends at a
// hard ceiling (uniform at ξ = −1: prompt lengths up to the model's
// limit), ξ > 0 a heavier one. ξ is capped at 0.45 (a finite variance
// needs ξ < ½, and the fitted variance of a heavy tail is its noisiest
// number).
func newTailShape(lower, mean, variance float64) bucketShape {
	s := bucketShape{lower: lower, theta: math.Max(mean-lower, 0), infinite: true}
	if math.IsNaN(variance) || variance < 0 || s.theta <= 0 {
		return s
	}
	ratio := variance / (s.theta * s.theta) // 1/(1 − 2ξ)
	if math.Abs(ratio-1) <= varianceChange {
		return s
	}
	xi := 0.45
	if ratio > 0 {
		xi = math.Min((1-1/ratio)/2, xi)
	} else {
		xi = -1e12 // no spread: every excess at the mean (to 1e-12)
	}
	s.xi, s.sigma = xi, s.theta*(1-xi)
	return s
}

// maxEntLambdas finds λ for the density ∝ exp(λ₁x + λ₂x²) on [0, 1] with
// mean m and variance v, by Newton's method on the convex dual
// log Z(λ) − λ₁·m − λ₂·(v + m²), whose gradient is the moment mismatch and
// whose Hessian is the covariance of (x, x²), with a backtracking line
// search; it starts from the exponential shape (λ₂ = 0).
func maxEntLambdas(m, v, beta float64) (float64, float64, bool) {
	m1, m2 := m, v+m*m
	l1, l2 := beta, 0.0
	if math.IsInf(l1, 0) || math.IsNaN(l1) {
		return 0, 0, false
	}
	buf := make([]float64, maxEntGrid+1)
	dual := func(a, b float64) (f float64, e [5]float64) {
		e = gridMoments(a, b, buf)
		return e[0] - a*m1 - b*m2, e
	}
	f, e := dual(l1, l2)
	for range 100 {
		g1, g2 := e[1]-m1, e[2]-m2
		if math.Abs(g1) < 1e-10 && math.Abs(g2) < 1e-10 {
			return l1, l2, true
		}
		h11, h12, h22 := e[2]-e[1]*e[1], e[3]-e[1]*e[2], e[4]-e[2]*e[2]
		det := h11*h22 - h12*h12
		if det <= 0 || math.IsNaN(det) {
			return 0, 0, false
		}
		d1, d2 := -(h22*g1-h12*g2)/det, -(h11*g2-h12*g1)/det
		step := 1.0
		for range 60 {
			nf, ne := dual(l1+step*d1, l2+step*d2)
			if nf <= f {
				l1, l2, f, e = l1+step*d1, l2+step*d2, nf, ne
				break
			}
			step /= 2
		}
		if step < 1e-15 {
			break
		}
	}
	return l1, l2, math.Abs(e[1]-m1) < 1e-6 && math.Abs(e[2]-m2) < 1e-6
}

// gridDensity writes exp(λ₁x + λ₂x² − peak) at x = i/maxEntGrid into out,
// where peak is the exponent's maximum on [0, 1] (so nothing overflows).
// On an even grid successive values differ by a factor that itself changes
// by a constant factor, so two multiplications per point replace exp.
func gridDensity(l1, l2 float64, out []float64) {
	expo := func(x float64) float64 { return l1*x + l2*x*x }
	peak := math.Max(expo(0), expo(1))
	if l2 < 0 {
		if v := -l1 / (2 * l2); v > 0 && v < 1 {
			peak = math.Max(peak, expo(v))
		}
	}
	const h = 1.0 / maxEntGrid
	e := math.Exp(-peak)
	ratio := math.Exp(l1*h + l2*h*h) // e(x+h)/e(x) at x = 0
	growth := math.Exp(2 * l2 * h * h)
	for i := range out {
		out[i] = e
		e *= ratio
		ratio *= growth
		if i%64 == 63 { // re-anchor, so rounding cannot accumulate
			x := float64(i+1) * h
			e, ratio = math.Exp(expo(x)-peak), math.Exp(l1*h+l2*(2*x*h+h*h))
		}
	}
}

// gridMoments integrates exp(λ₁x + λ₂x²) over [0, 1] by the trapezoid rule
// on maxEntGrid steps: e[0] = log Z, e[k] = E[x^k] for k = 1…4.
func gridMoments(l1, l2 float64, buf []float64) (e [5]float64) {
	gridDensity(l1, l2, buf)
	var z, m1, m2, m3, m4 float64
	for i, w := range buf {
		if i == 0 || i == maxEntGrid {
			w /= 2
		}
		x := float64(i) / maxEntGrid
		x2 := x * x
		z += w
		m1 += w * x
		m2 += w * x2
		m3 += w * x2 * x
		m4 += w * x2 * x2
	}
	peak := math.Max(l1*0, l1+l2)
	if l2 < 0 {
		if v := -l1 / (2 * l2); v > 0 && v < 1 {
			peak = math.Max(peak, l1*v+l2*v*v)
		}
	}
	e[0] = peak + math.Log(z/maxEntGrid)
	e[1], e[2], e[3], e[4] = m1/z, m2/z, m3/z, m4/z
	return e
}

// maxEntTable tabulates the distribution function of exp(λ₁x + λ₂x²) on
// [0, 1] at maxEntGrid+1 points (trapezoids between them).
func maxEntTable(l1, l2 float64) []float64 {
	dens := make([]float64, maxEntGrid+1)
	gridDensity(l1, l2, dens)
	table := make([]float64, maxEntGrid+1)
	for i := 1; i <= maxEntGrid; i++ {
		table[i] = table[i-1] + (dens[i-1]+dens[i])/2
	}
	total := table[maxEntGrid]
	for i := range table {
		table[i] /= total
	}
	return table
}

// tableQuantile inverts a tabulated distribution function, linearly
// between grid points; it returns a position in [0, 1].
func tableQuantile(table []float64, f float64) float64 {
	i := sort.SearchFloat64s(table, f) // first point with table[i] >= f
	switch {
	case i <= 0:
		return 0
	case i >= len(table):
		return 1
	}
	lo, hi := table[i-1], table[i]
	frac := 0.0
	if hi > lo {
		frac = (f - lo) / (hi - lo)
	}
	return (float64(i-1) + frac) / float64(len(table)-1)
}

// tableCDF is the tabulated distribution function at position x in [0, 1].
func tableCDF(table []float64, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	pos := x * float64(len(table)-1)
	i := int(pos)
	return table[i] + (pos-float64(i))*(table[i+1]-table[i])
}

// boxLS minimises ½xᵀAx − bᵀx subject to lo ≤ x ≤ hi (A symmetric
// positive definite) by projected Gauss–Seidel, which converges for such A.
func boxLS(A [][]float64, b, lo, hi []float64) []float64 {
	n := len(b)
	x := make([]float64, n)
	for i := range x {
		x[i] = math.Min(math.Max(0, lo[i]), hi[i])
	}
	for range 1000 {
		moved := 0.0
		for i := range n {
			if A[i][i] <= 0 {
				continue
			}
			r := b[i]
			for j := range n {
				if j != i {
					r -= A[i][j] * x[j]
				}
			}
			next := math.Min(math.Max(r/A[i][i], lo[i]), hi[i])
			moved = math.Max(moved, math.Abs(next-x[i])/math.Max(math.Abs(next), 1e-300))
			x[i] = next
		}
		if moved < 1e-10 {
			break
		}
	}
	return x
}

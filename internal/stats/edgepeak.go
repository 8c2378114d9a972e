package stats

import "math"

// An edge peak is what the exponential shape makes of a bucket whose mean
// leans to one edge: its density is highest at that edge. That is right
// where the density keeps rising past the edge (a lognormal's flank), and
// wrong where the observations peak inside the bucket: an ITL of 22 ± 2 ms
// piles against 25 ms in vLLM's (0.01, 0.025] bucket at four times the
// density the next bucket starts with (p50 +4 %), and a TTFT of
// 100 ± 30 ms starts its (0.1, 0.25] bucket at 0.1 s with two-thirds more
// density than (0.08, 0.1] reaches there, and so stretches its tail (p99
// +14 %). The residuals cannot tell those shapes apart (a few dozen
// intervals, or a bucket whose count is nearly the same in every
// interval), but the neighbour across the edge can.
//
// Two buckets whose shapes both lean towards the bound they share put the
// density's mode at that bound, which the server chose without looking at
// the data: the mode is really inside one of them. So where the residuals
// left a finite bucket's variance unknown, its exponential shape leans to
// a bound its neighbour does not lean away from (by more than one
// standard error of that neighbour's fitted mean), and its density there
// exceeds the neighbour's, it takes the two-moment shape with its fitted
// mean whose density at the bound is the neighbour's: narrower than the
// exponential, its peak moved inside. A monotone stretch (a lognormal's
// flanks) has every neighbour leaning away and keeps the exponential
// shapes; the rule runs once, against the neighbours' own shapes, so no
// error chains from bucket to bucket.
//
// The peak found, its curvature carries across the bound: the observations
// on the far side are the same peak's flank (a normal body's thin tail,
// which the exponential shape stretches: the 22 ± 2 ms ITL's p99 in
// (0.025, 0.05] sat 7 % high). The neighbour takes the two-moment shape
// with its own mean and the peak's λ₂ (in absolute units), where the peak
// holds at least twice its observations: a small bucket's curvature,
// scaled to a wider one, is noise magnified.

// edgePeakBody is how many times the flank's observations the peak's
// bucket must hold for its curvature to carry across.
const edgePeakBody = 2

// edgePeakVariances returns the model's variances (vars, or all unknown
// when nil) with those of the buckets the rule applies to filled in.
func (m *bucketModel) edgePeakVariances(vars []float64) []float64 {
	k := len(m.n)
	out := make([]float64, k)
	for j := range out {
		out[j] = math.NaN()
		if vars != nil {
			out[j] = vars[j]
		}
	}
	// unit is bucket j's mean as a fraction of its width; ok is false for
	// the +Inf bucket, a cluster's, or a mean at an edge.
	unit := func(j int) (mu, w float64, ok bool) {
		w = m.upper[j] - m.lower[j]
		if math.IsInf(m.upper[j], 1) || !(w > 0) || m.n[j] <= 0 || (m.cluster != nil && m.cluster[j] != nil) {
			return 0, 0, false
		}
		mu = (m.mean[j] - m.lower[j]) / w
		return mu, w, mu > 0 && mu < 1
	}
	// edgeLogDensity is bucket j's log density (observations per unit) at
	// its upper or lower edge under its own shape.
	edgeLogDensity := func(j int, upper bool) (float64, bool) {
		mu, w, ok := unit(j)
		if !ok {
			return 0, false
		}
		v := truncExpVariance(truncExpRate(mu))
		if vars != nil && !math.IsNaN(vars[j]) {
			v = vars[j] / (w * w)
		}
		l0, l1 := unitEdgeLogDensity(mu, v)
		l := l0
		if upper {
			l = l1
		}
		return l + math.Log(m.n[j]/w), !math.IsNaN(l)
	}
	type flank struct {
		j         int
		curvature float64 // λ₂ per unit², from the peak's bucket
	}
	var flanks []flank
	for j := range k {
		mu, w, ok := unit(j)
		if !ok || !math.IsNaN(out[j]) || mu == 0.5 {
			continue
		}
		upper := mu > 0.5 // the edge the exponential shape piles against
		nb, step := j-1, -1
		if upper {
			nb, step = j+1, 1
		}
		if nb < 0 || nb >= k || m.index[nb] != m.index[j]+step {
			continue // no neighbour with observations across that bound
		}
		if m.leansAway(nb, upper) {
			continue // a slope, not a mode
		}
		mine, ok := edgeLogDensity(j, upper)
		theirs, ok2 := edgeLogDensity(nb, !upper)
		if !ok || !ok2 || mine <= theirs {
			continue
		}
		v, ok := varianceForEdge(mu, theirs-math.Log(m.n[j]/w), upper)
		if !ok {
			continue
		}
		out[j] = v * w * w
		if l2 := unitCurvature(mu, v); l2 < 0 && m.n[j] >= edgePeakBody*m.n[nb] {
			flanks = append(flanks, flank{nb, l2 / (w * w)})
		}
	}
	for _, f := range flanks {
		mu, w, ok := unit(f.j)
		if !ok || !math.IsNaN(out[f.j]) {
			continue
		}
		if v, ok := varianceForCurvature(mu, f.curvature*w*w); ok && v < truncExpVariance(truncExpRate(mu)) {
			out[f.j] = v * w * w
		}
	}
	return out
}

// leansAway reports whether bucket j's fitted mean sits more than one
// standard error of it away from its middle, on the side away from the
// bound it shares with a neighbour: its lower edge when boundIsLower,
// else its upper edge.
func (m *bucketModel) leansAway(j int, boundIsLower bool) bool {
	mid := (m.lower[j] + m.upper[j]) / 2
	se := 0.0
	if m.meanSE != nil && !math.IsNaN(m.meanSE[j]) {
		se = m.meanSE[j]
	}
	if boundIsLower {
		return m.mean[j] > mid+se
	}
	return m.mean[j] < mid-se
}

// varianceForEdge is the variance of the two-moment shape on [0, 1] with
// mean mu whose log density at the lower (or upper) edge is target, below
// the exponential shape's: by bisection on the log variance, since the
// edge density falls as the shape narrows from the exponential.
func varianceForEdge(mu, target float64, upper bool) (float64, bool) {
	at := func(v float64) float64 {
		l0, l1 := unitEdgeLogDensity(mu, v)
		if upper {
			return l1
		}
		return l0
	}
	hi := truncExpVariance(truncExpRate(mu))
	lo := hi * 1e-6
	if !(at(lo) <= target && at(hi) >= target) {
		return 0, false
	}
	a, b := math.Log(lo), math.Log(hi)
	for b-a > 1e-6 {
		c := (a + b) / 2
		if at(math.Exp(c)) > target {
			b = c
		} else {
			a = c
		}
	}
	// The shapes jump where newTwoMomentShape changes kind (near the
	// exponential's variance, near an edge): a target inside a jump is
	// one no shape has.
	v := math.Exp((a + b) / 2)
	return v, math.Abs(at(v)-target) < 0.01
}

// unitEdgeLogDensity is the log density at 0 and at 1 of the two-moment
// shape on [0, 1] with mean m and variance v, as newTwoMomentShape builds
// it.
func unitEdgeLogDensity(m, v float64) (float64, float64) {
	l1, l2, kind := unitTwoMoment(m, v)
	switch kind {
	case shapeNormal:
		at := func(t float64) float64 { return -(t-m)*(t-m)/(2*v) - 0.5*math.Log(2*math.Pi*v) }
		return at(0), at(1)
	case shapeGrid:
		logZ := gridMoments(l1, l2, make([]float64, maxEntGrid+1))[0]
		return -logZ, l1 + l2 - logZ
	}
	return expEdgeLogDensity(l1)
}

// The kinds of two-moment shape newTwoMomentShape builds.
const (
	shapeExponential = iota
	shapeNormal
	shapeGrid
)

// unitTwoMoment is the shape newTwoMomentShape builds on [0, 1] for mean m
// and variance v: its kind and the exponent λ₁x + λ₂x² (β, 0 for the
// exponential; m/v, −1/(2v) for the normal).
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

// expEdgeLogDensity is the log density at 0 and 1 of ∝ e^{βx} on [0, 1].
func expEdgeLogDensity(beta float64) (float64, float64) {
	if math.Abs(beta) < 1e-9 {
		return 0, 0
	}
	if beta > 0 { // Z = (e^β − 1)/β, written so that nothing overflows
		logZ := beta + math.Log(-math.Expm1(-beta)/beta)
		return -logZ, beta - logZ
	}
	logZ := math.Log(math.Expm1(beta) / beta)
	return -logZ, beta - logZ
}

// unitCurvature is λ₂ of the two-moment shape on [0, 1] with mean m and
// variance v (0 where that is the exponential shape).
func unitCurvature(m, v float64) float64 {
	_, l2, _ := unitTwoMoment(m, v)
	return l2
}

// varianceForCurvature is the variance of the density ∝ exp(λ₁x + λ₂x²)
// on [0, 1] with mean m and the given λ₂ < 0, λ₁ found by bisection (the
// mean rises with it).
func varianceForCurvature(m, l2 float64) (float64, bool) {
	if !(l2 < 0) || math.IsInf(l2, -1) {
		return 0, false
	}
	if sd := math.Sqrt(-1 / (2 * l2)); m-6*sd > 0 && m+6*sd < 1 {
		return sd * sd, true // a normal peak, too narrow for the grid
	}
	buf := make([]float64, maxEntGrid+1)
	lo, hi := l2-1e4, 1e4-l2
	var e [5]float64
	for hi-lo > 1e-9*math.Max(1, math.Abs(lo)) {
		mid := (lo + hi) / 2
		if e = gridMoments(mid, l2, buf); e[1] < m {
			lo = mid
		} else {
			hi = mid
		}
	}
	e = gridMoments((lo+hi)/2, l2, buf)
	if math.Abs(e[1]-m) > 1e-4 {
		return 0, false
	}
	return e[2] - e[1]*e[1], true
}

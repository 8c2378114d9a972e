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

// edgePeaks applies the rule to a stationary run's buckets, lazily: only
// the buckets a percentile needs pay for their shapes (a two-moment shape
// is a numerical search).
type edgePeaks struct {
	m     *bucketModel
	peaks []edgePeak
}

// edgePeak is one bucket's own rule, once evaluated.
type edgePeak struct {
	evaluated, found bool
	variance         float64 // absolute
	flank            int     // the neighbour across the bound
	curvature        float64 // λ₂ per unit², when it carries into the flank
}

func newEdgePeaks(m *bucketModel) *edgePeaks {
	return &edgePeaks{m: m, peaks: make([]edgePeak, len(m.n))}
}

// known is bucket j's variance from the residuals (m.vars), NaN if none.
func (e *edgePeaks) known(j int) float64 {
	if e.m.vars == nil {
		return math.NaN()
	}
	return e.m.vars[j]
}

// unit is bucket j's mean as a fraction of its width; ok is false for
// the +Inf bucket, a cluster's, or a mean at an edge.
func (e *edgePeaks) unit(j int) (mu, w float64, ok bool) {
	m := e.m
	w = m.upper[j] - m.lower[j]
	if math.IsInf(m.upper[j], 1) || !(w > 0) || (m.cluster != nil && m.cluster[j] != nil) {
		return 0, 0, false
	}
	mu = (m.mean[j] - m.lower[j]) / w
	return mu, w, mu > 0 && mu < 1
}

// densityAt is bucket j's log density (observations per unit) at its
// upper or lower edge under its own shape (before the rule).
func (e *edgePeaks) densityAt(j int, upper bool) (float64, bool) {
	mu, w, ok := e.unit(j)
	if !ok {
		return 0, false
	}
	v := truncExpVariance(truncExpRate(mu))
	if known := e.known(j); !math.IsNaN(known) {
		v = known / (w * w)
	}
	l := unitEdgeLogDensity(mu, v, upper)
	return l + math.Log(e.m.n[j]/w), !math.IsNaN(l)
}

// peak evaluates bucket j's own rule (once).
func (e *edgePeaks) peak(j int) edgePeak {
	p := &e.peaks[j]
	if p.evaluated {
		return *p
	}
	p.evaluated = true
	m := e.m
	mu, w, ok := e.unit(j)
	if !ok || !math.IsNaN(e.known(j)) || mu == 0.5 {
		return *p
	}
	upper := mu > 0.5 // the edge the exponential shape piles against
	nb, step := j-1, -1
	if upper {
		nb, step = j+1, 1
	}
	if nb < 0 || nb >= len(m.n) || m.index[nb] != m.index[j]+step {
		return *p // no neighbour with observations across that bound
	}
	if m.leansAway(nb, upper) {
		return *p // a slope, not a mode
	}
	mine, ok := e.densityAt(j, upper)
	theirs, ok2 := e.densityAt(nb, !upper)
	if !ok || !ok2 || mine <= theirs {
		return *p
	}
	v, ok := varianceForEdge(mu, theirs-math.Log(m.n[j]/w), upper)
	if !ok {
		return *p
	}
	p.found, p.variance, p.flank = true, v*w*w, nb
	if l2 := unitCurvature(mu, v); l2 < 0 && m.n[j] >= edgePeakBody*m.n[nb] {
		p.curvature = l2 / (w * w)
	}
	return *p
}

// variance is bucket j's variance after the rule: the residuals' where
// they identified it, its own peak's, a neighbouring peak's flank's (the
// lower neighbour's first), or NaN (the exponential shape). quantiles
// asks once per bucket, and keeps the shape.
func (e *edgePeaks) variance(j int) float64 {
	v := e.known(j)
	if math.IsNaN(v) {
		if p := e.peak(j); p.found {
			v = p.variance
		}
	}
	for _, y := range []int{j - 1, j + 1} {
		if !math.IsNaN(v) || y < 0 || y >= len(e.m.n) {
			continue
		}
		p := e.peak(y)
		if !p.found || p.flank != j || p.curvature == 0 {
			continue
		}
		if mu, w, ok := e.unit(j); ok {
			if fv, ok := varianceForCurvature(mu, p.curvature*w*w); ok && fv < truncExpVariance(truncExpRate(mu)) {
				v = fv * w * w
			}
		}
	}
	return v
}

// leansAway reports whether bucket j's fitted mean sits more than one
// standard error of it away from its middle, on the side away from the
// bound it shares with a neighbour: its lower edge when boundIsLower,
// else its upper edge.
func (m *bucketModel) leansAway(j int, boundIsLower bool) bool {
	mid := (m.lower[j] + m.upper[j]) / 2
	se := m.wholeFit.meanSE(j)
	if boundIsLower {
		return m.mean[j] > mid+se
	}
	return m.mean[j] < mid-se
}

// varianceForEdge is the variance of the two-moment shape on [0, 1] with
// mean mu whose log density at the lower (or upper) edge is target, below
// the exponential shape's. The shapes with mean mu are a one-parameter
// family in λ₂ (λ₁ follows from the mean), whose edge density falls as λ₂
// falls below 0 (the exponential): the search is over log(−λ₂), by
// regula falsi, each λ₁ by Newton's method from the last. The shape found
// is then checked as newTwoMomentShape would build it: a target no shape
// of its has (inside the jump where it keeps the exponential shape, near
// an edge) is refused.
func varianceForEdge(mu, target float64, upper bool) (float64, bool) {
	l1 := truncExpRate(mu)
	if math.IsInf(l1, 0) || math.IsNaN(l1) {
		return 0, false
	}
	buf := make([]float64, maxEntGrid+1)
	var e [5]float64
	// at is the edge log density minus the target at λ₂ = −exp(s).
	at := func(s float64) float64 {
		l2 := -math.Exp(s)
		l1, e = lambda1ForMean(mu, l2, l1, buf)
		logZ := e[0]
		if upper {
			return l1 + l2 - logZ - target
		}
		return -logZ - target
	}
	// −λ₂ up to 2,000: a peak of 1/√4000 of the width, past the finest
	// newTwoMomentShape resolves.
	a, b := math.Log(1e-3), math.Log(2000)
	fa, fb := at(a), at(b)
	if !(fa > 0 && fb < 0) {
		return 0, false
	}
	side := 0
	for range 60 {
		c := (a*fb - b*fa) / (fb - fa)
		fc := at(c)
		if math.Abs(fc) < 1e-4 || b-a < 1e-6 {
			break
		}
		if fc > 0 {
			a, fa = c, fc
			if side == 1 {
				fb /= 2 // Illinois: keep the stale end from stalling
			}
			side = 1
		} else {
			b, fb = c, fc
			if side == -1 {
				fa /= 2
			}
			side = -1
		}
	}
	v := e[2] - e[1]*e[1]
	return v, math.Abs(unitEdgeLogDensity(mu, v, upper)-target) < 0.01
}

// lambda1ForMean is λ₁ of the density ∝ exp(λ₁x + λ₂x²) on [0, 1] with
// mean m, by Newton's method from start (the mean rises with λ₁ at the
// rate of the variance), bisecting where a step leaves the bracket; with
// the grid moments there.
func lambda1ForMean(m, l2, start float64, buf []float64) (float64, [5]float64) {
	lo, hi := -1e4+l2, 1e4-l2
	l1 := math.Min(math.Max(start, lo), hi)
	var e [5]float64
	for range 100 {
		e = gridMoments(l1, l2, buf)
		d := e[1] - m
		if math.Abs(d) < 1e-10 {
			break
		}
		if d < 0 {
			lo = l1
		} else {
			hi = l1
		}
		next := l1 - d/(e[2]-e[1]*e[1])
		if !(next > lo && next < hi) {
			next = (lo + hi) / 2
		}
		l1 = next
	}
	return l1, e
}

// unitEdgeLogDensity is the log density at 1 (upper) or 0 of the
// two-moment shape on [0, 1] with mean m and variance v, as
// newTwoMomentShape builds it.
func unitEdgeLogDensity(m, v float64, upper bool) float64 {
	l1, l2, kind := unitTwoMoment(m, v)
	at := 0.0
	if upper {
		at = 1
	}
	switch kind {
	case shapeNormal:
		return -(at-m)*(at-m)/(2*v) - 0.5*math.Log(2*math.Pi*v)
	case shapeGrid:
		logZ := gridMoments(l1, l2, make([]float64, maxEntGrid+1))[0]
		return at*(l1+l2) - logZ
	}
	l0, lu := expEdgeLogDensity(l1)
	if upper {
		return lu
	}
	return l0
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
// on [0, 1] with mean m and the given λ₂ < 0, λ₁ by lambda1ForMean from
// the normal's.
func varianceForCurvature(m, l2 float64) (float64, bool) {
	if !(l2 < 0) || math.IsInf(l2, -1) {
		return 0, false
	}
	if sd := math.Sqrt(-1 / (2 * l2)); m-6*sd > 0 && m+6*sd < 1 {
		return sd * sd, true // a normal peak, too narrow for the grid
	}
	_, e := lambda1ForMean(m, l2, -2*l2*m, make([]float64, maxEntGrid+1))
	if math.Abs(e[1]-m) > 1e-4 {
		return 0, false
	}
	return e[2] - e[1]*e[1], true
}

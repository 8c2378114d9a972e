package stats

import "math"

// batchLognormal is the batch law's lognormal kernel: an interval's
// observations are lognormal, their log N(m_t, s²), one spread s for the
// run relative to the level. Latencies spread in proportion to their size
// (a prefix-cache hit at 23 ± 2 ms, a miss at 200 ± 20 ms), which one
// spread in seconds cannot follow across a run that holds both, and
// their right tails are longer than a normal law's. Only for observations
// that cannot be negative (the lowest bucket's lower bound at least 0).
type batchLognormal struct{}

// logBound is a bucket bound's log, −∞ for 0.
func logBound(v float64) float64 {
	if v <= 0 {
		return math.Inf(-1)
	}
	return math.Log(v)
}

func (batchLognormal) mass(lower, upper, mu, s float64) float64 {
	return normalMass(logBound(lower), logBound(upper), mu, s)
}

// moments is E[X | lower < X ≤ upper] for log X ~ N(mu, s²) and its slope
// in mu. The factor e^y tilts N(mu, s²) into N(mu + s², s²), so the mean
// is e^{mu + s²/2} times the tilted law's mass on the bucket over the
// law's; its slope is Cov(X, log X)/s² over the bucket, which the same
// tilt gives as the mean times the shift of log X's truncated mean,
// s² + s·(the tilted law's (φ(α − s) − φ(β − s))/mass less the law's
// (φ(α) − φ(β))/mass), from the masses already at hand. Where the masses
// underflow, the log's asymptote (truncNormalMoments) gives a mean at the
// nearer bound, and the slope is 0 for the caller to bisect.
func (batchLognormal) moments(lower, upper, mu, s float64) (mean, slope float64) {
	a, b := logBound(lower), logBound(upper)
	z, tilted := normalMass(a, b, mu, s), normalMass(a, b, mu+s*s, s)
	if z > 1e-290 && tilted > 1e-290 {
		mean = math.Exp(mu + s*s/2 + math.Log(tilted) - math.Log(z))
		alpha, beta := (a-mu)/s, (b-mu)/s
		shift := s*s + s*((normalDensity(alpha-s)-normalDensity(beta-s))/tilted-(normalDensity(alpha)-normalDensity(beta))/z)
		slope = math.Max(mean*shift/(s*s), 0)
	} else {
		logMean, _ := truncNormalMoments(a, b, mu, s)
		mean = math.Exp(logMean)
	}
	if math.IsInf(upper, 1) {
		return math.Max(mean, lower), slope
	}
	return math.Min(math.Max(mean, lower), upper), slope
}

// shape is the lognormal law truncated to the bucket.
func (batchLognormal) shape(lower, upper, mu, s float64) bucketShape {
	sh := newTruncNormalShape(logBound(lower), logBound(upper), mu, s)
	sh.lower, sh.width, sh.logScale = lower, upper-lower, true
	return sh
}

// centre is an interval's first guess at its centre: its mean's log (a
// mean of 0, all observations at 0, starts far below any bound).
func (batchLognormal) centre(mean float64) float64 {
	return math.Log(math.Max(mean, 1e-300))
}

// spreads are the run's span on the log scale, from its lowest positive
// bound to its highest finite one (at least 10⁻³), and a millionth of it.
func (batchLognormal) spreads(m *bucketModel) (lo, hi float64) {
	bottom, top := m.batchRange()
	if bottom <= 0 {
		bottom = m.upper[0]
	}
	hi = 1e-3
	if bottom > 0 && top > bottom {
		hi = math.Max(math.Log(top/bottom), hi)
	}
	return hi * 1e-6, hi
}

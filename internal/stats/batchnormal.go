package stats

import "math"

// batchNormal is the batch law's normal kernel: an interval's observations
// are N(m_t, s²), one spread s in the observations' own unit for the run.
type batchNormal struct{}

func (batchNormal) mass(lower, upper, mu, s float64) float64 {
	return normalMass(lower, upper, mu, s)
}

func (batchNormal) moments(lower, upper, mu, s float64) (mean, slope float64) {
	return truncNormalMoments(lower, upper, mu, s)
}

func (batchNormal) shape(lower, upper, mu, s float64) bucketShape {
	return newTruncNormalShape(lower, upper, mu, s)
}

// centre is an interval's first guess at its centre: its mean.
func (batchNormal) centre(mean float64) float64 { return mean }

// spreads are the run's span (batchRange; its top's size, at least 1,
// where the range is empty) and a millionth of it.
func (batchNormal) spreads(m *bucketModel) (lo, hi float64) {
	bottom, top := m.batchRange()
	span := top - bottom
	if !(span > 0) {
		span = math.Max(math.Abs(top), 1)
	}
	return span * 1e-6, span
}

// truncNormalMoments is E[X | lower < X ≤ upper] for X ~ N(mu, s²) and
// its slope in mu, the truncated variance over s². Where the bucket lies
// so far in a tail that its mass underflows, the mean is the tail's
// asymptote, s²/distance from the nearer bound, and the slope 0 (as where
// the variance cancels to nothing), for the caller to bisect.
func truncNormalMoments(lower, upper, mu, s float64) (mean, slope float64) {
	a, b := (lower-mu)/s, (upper-mu)/s
	z := normalMass(lower, upper, mu, s)
	switch {
	case z > 1e-290:
		pa, pb := normalDensity(a), normalDensity(b)
		mean = mu + s*(pa-pb)/z
		v := 1 - ((pa-pb)/z)*((pa-pb)/z)
		if !math.IsInf(a, 0) {
			v += a * pa / z
		}
		if !math.IsInf(b, 0) {
			v -= b * pb / z
		}
		slope = math.Max(v, 0)
	case a > 0:
		mean = lower + s/a
	default:
		mean = upper + s/b // b < 0
	}
	if math.IsInf(upper, 1) {
		return math.Max(mean, lower), slope
	}
	return math.Min(math.Max(mean, lower), upper), slope
}

// newTruncNormalShape is N(mu, s²) truncated to the bucket (lower, upper].
func newTruncNormalShape(lower, upper, mu, s float64) bucketShape {
	sh := bucketShape{lower: lower, width: upper - lower, normal: true, truncated: true, mu: mu, sigma: s, infinite: math.IsInf(upper, 1)}
	a, b := (lower-mu)/s, (upper-mu)/s
	if a > 0 {
		sh.upperTail = true
		sh.massLo, sh.massHi = normalSurvival(a), normalSurvival(b)
	} else {
		sh.massLo, sh.massHi = normalCDF(a), normalCDF(b)
	}
	return sh
}

package stats

import "math"

// A bucket's law inside its bounds: one shape per span, or the mixture of
// spans' or intervals' shapes (cluster.go, batchlaw.go), which quantiles
// inverts.

// bucketMixture is a bucket's distribution over the run: its spans'
// shapes, weighted by their observation counts.
type bucketMixture struct {
	shapes  []bucketShape
	weights []float64
	total   float64
}

func (x *bucketMixture) add(s bucketShape, w float64) {
	x.shapes = append(x.shapes, s)
	x.weights = append(x.weights, w)
	x.total += w
}

// quantile inverts the mixture's CDF by bisection (one shape: directly).
func (x *bucketMixture) quantile(f float64) float64 {
	if len(x.shapes) == 1 {
		return x.shapes[0].quantile(f)
	}
	lo, hi := x.shapes[0].lower, math.Inf(-1)
	for _, s := range x.shapes {
		hi = math.Max(hi, s.quantile(1-1e-12))
	}
	for range 100 {
		mid := (lo + hi) / 2
		c := 0.0
		for i, s := range x.shapes {
			c += x.weights[i] * s.cdf(mid)
		}
		if c/x.total < f {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo <= 1e-12*math.Max(math.Abs(mid), 1e-300) {
			break
		}
	}
	return (lo + hi) / 2
}

// bucketShape is the maximum-entropy density of a bucket given its mean.
type bucketShape struct {
	lower, width float64
	// beta is the exponential rate on [0, 1] for a finite bucket; for the
	// +Inf bucket, theta is the mean excess above lower.
	beta, theta float64
	infinite    bool
	// cdf, when set, tabulates a two-moment shape's distribution function
	// on maxEntGrid equal steps of [0, 1], and replaces beta.
	table []float64
	// normal, when set, is a two-moment shape whose peak lies well inside
	// the bucket: a normal law (mu, sigma), which no grid need resolve.
	normal    bool
	mu, sigma float64
	// xi, when not 0, makes the +Inf bucket's excess a generalized Pareto
	// law with shape xi and scale sigma (newTailShape).
	xi float64
	// truncated makes the normal law one truncated to the bucket, with
	// massLo and massHi its distribution function (upperTail: survival
	// function) at the bounds (batchlaw.go).
	truncated, upperTail bool
	massLo, massHi       float64
	// logScale makes the truncated law the log's: the shape is then
	// lognormal, with mu and sigma those of the observations' log and
	// massLo, massHi taken at the bounds' logs (batchlognormal.go).
	logScale bool
}

func newBucketShape(lower, upper, mean float64) bucketShape {
	if math.IsInf(upper, 1) {
		return bucketShape{lower: lower, theta: math.Max(mean-lower, 0), infinite: true}
	}
	s := bucketShape{lower: lower, width: upper - lower}
	if s.width <= 0 {
		return s
	}
	s.beta = truncExpRate((mean - lower) / s.width)
	return s
}

// quantile is the f-quantile (0 < f < 1) of the shape.
func (s bucketShape) quantile(f float64) float64 {
	if s.truncated {
		return s.truncQuantile(f)
	}
	if s.normal {
		v := s.mu + s.sigma*normalQuantile(f)
		return math.Min(math.Max(v, s.lower), s.lower+s.width)
	}
	if s.table != nil {
		return s.lower + s.width*tableQuantile(s.table, f)
	}
	if s.infinite {
		if s.xi != 0 {
			// σ/ξ·((1−f)^(−ξ) − 1)
			return s.lower + s.sigma/s.xi*math.Expm1(-s.xi*math.Log1p(-f))
		}
		return s.lower - s.theta*math.Log1p(-f)
	}
	var x float64
	switch b := s.beta; {
	case math.IsInf(b, -1):
		x = 0
	case math.IsInf(b, 1):
		x = 1
	case math.Abs(b) < 1e-9:
		x = f
	case b > 0:
		x = 1 + math.Log(f+(1-f)*math.Exp(-b))/b
	default:
		x = math.Log1p(f*math.Expm1(b)) / b
	}
	return s.lower + s.width*math.Min(math.Max(x, 0), 1)
}

// cdf is the shape's distribution function at v.
func (s bucketShape) cdf(v float64) float64 {
	if s.truncated {
		return s.truncCDF(v)
	}
	if s.normal {
		return normalCDF((v - s.mu) / s.sigma)
	}
	if s.table != nil {
		return tableCDF(s.table, (v-s.lower)/s.width)
	}
	if s.infinite {
		if v <= s.lower {
			return 0
		}
		if s.theta <= 0 {
			return 1
		}
		if s.xi != 0 {
			// 1 − (1 + ξy/σ)^(−1/ξ), 1 past the end of a bounded tail
			z := s.xi * (v - s.lower) / s.sigma
			if z <= -1 {
				return 1
			}
			return -math.Expm1(-math.Log1p(z) / s.xi)
		}
		return -math.Expm1(-(v - s.lower) / s.theta)
	}
	if s.width <= 0 {
		if v < s.lower {
			return 0
		}
		return 1
	}
	x := (v - s.lower) / s.width
	switch b := s.beta; {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	case math.IsInf(b, -1):
		return 1 // all at the lower edge
	case math.IsInf(b, 1):
		return 0 // all at the upper edge
	case math.Abs(b) < 1e-9:
		return x
	case b > 0:
		return (math.Exp(b*(x-1)) - math.Exp(-b)) / -math.Expm1(-b)
	default:
		return math.Expm1(b*x) / math.Expm1(b)
	}
}

// variance is the shape's variance (of an exponential one).
func (s bucketShape) variance() float64 {
	if s.infinite {
		return s.theta * s.theta
	}
	return s.width * s.width * truncExpVariance(s.beta)
}

// truncExpVariance is the variance of the density ∝ e^{βx} on [0, 1]:
// 1/β² − 1/(4·sinh²(β/2)).
func truncExpVariance(beta float64) float64 {
	switch {
	case math.IsInf(beta, 0):
		return 0
	case math.Abs(beta) < 1e-4:
		return 1.0/12 - beta*beta/720
	}
	sh := math.Sinh(beta / 2)
	return 1/(beta*beta) - 1/(4*sh*sh)
}

// truncExpMean is the mean of the density ∝ e^{βx} on [0, 1].
func truncExpMean(beta float64) float64 {
	switch {
	case math.Abs(beta) < 1e-6:
		return 0.5 + beta/12 // the series at 0
	case beta < 0:
		return 1 - truncExpMean(-beta)
	}
	return -1/math.Expm1(-beta) - 1/beta
}

// truncExpRate inverts truncExpMean by bisection (it is increasing);
// ±Inf for a mean at an edge.
func truncExpRate(mean float64) float64 {
	switch {
	case mean <= 0:
		return math.Inf(-1)
	case mean >= 1:
		return math.Inf(1)
	}
	lo, hi := -1e9, 1e9
	for range 200 {
		mid := (lo + hi) / 2
		if truncExpMean(mid) < mean {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo <= 1e-12*math.Max(1, math.Abs(mid)) {
			break
		}
	}
	return (lo + hi) / 2
}

// truncCDF is a truncated normal (or lognormal) shape's distribution
// function at v.
func (s bucketShape) truncCDF(v float64) float64 {
	if v <= s.lower {
		return 0
	}
	if v >= s.lower+s.width {
		return 1
	}
	z := (s.scale(v) - s.mu) / s.sigma
	if s.upperTail {
		d := s.massLo - s.massHi
		if !(d > 0) {
			return 1 // all at the lower bound, which v is above
		}
		return math.Min(math.Max((s.massLo-normalSurvival(z))/d, 0), 1)
	}
	d := s.massHi - s.massLo
	if !(d > 0) {
		if s.mu <= s.scale(s.lower) {
			return 1
		}
		return 0
	}
	return math.Min(math.Max((normalCDF(z)-s.massLo)/d, 0), 1)
}

// truncQuantile is a truncated normal (or lognormal) shape's f-quantile.
func (s bucketShape) truncQuantile(f float64) float64 {
	upper := s.lower + s.width
	var z float64
	if s.upperTail {
		d := s.massLo - s.massHi
		if !(d > 0) {
			return s.lower
		}
		z = math.Sqrt2 * math.Erfcinv(2*(s.massLo-f*d))
	} else {
		d := s.massHi - s.massLo
		if !(d > 0) {
			if s.mu <= s.scale(s.lower) {
				return s.lower
			}
			return upper
		}
		z = -math.Sqrt2 * math.Erfcinv(2*(s.massLo+f*d))
	}
	v := s.mu + s.sigma*z
	if s.logScale {
		v = math.Exp(v)
	}
	if math.IsNaN(v) {
		return s.lower
	}
	return math.Min(math.Max(v, s.lower), upper)
}

// scale is v on the scale of a truncated shape's mu and sigma: its log
// for a lognormal one.
func (s bucketShape) scale(v float64) float64 {
	if s.logScale {
		return math.Log(v)
	}
	return v
}

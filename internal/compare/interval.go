package compare

import (
	"math"

	"github.com/llmbench/llmbench/internal/stats"
)

// welch is Welch's t interval, at level, of the difference of means
// mean(y) − mean(x) of two samples with unequal variances: the
// difference ± t(df)·se, se² = sx²/nx + sy²/ny, df by Welch–Satterthwaite.
// Each sample needs two values; when both variances are 0 the interval is
// the difference itself.
func welch(x, y []float64, level float64) (diff, low, high float64, ok bool) {
	nx, ny := float64(len(x)), float64(len(y))
	if nx < 2 || ny < 2 {
		return math.NaN(), math.NaN(), math.NaN(), false
	}
	diff = stats.Mean(y) - stats.Mean(x)
	vx := sq(stats.StdDev(x, 1)) / nx
	vy := sq(stats.StdDev(y, 1)) / ny
	se2 := vx + vy
	if se2 == 0 {
		return diff, diff, diff, true
	}
	df := se2 * se2 / (vx*vx/(nx-1) + vy*vy/(ny-1))
	half := stats.StudentTQuantile((1+level)/2, df) * math.Sqrt(se2)
	return diff, diff - half, diff + half, true
}

func sq(x float64) float64 { return x * x }

// normalQuantile is the standard normal's p-quantile.
func normalQuantile(p float64) float64 { return math.Sqrt2 * math.Erfinv(2*p-1) }

// wilson is the Wilson score interval of the proportion x/n at level.
func wilson(x, n int, level float64) (low, high float64) {
	z := normalQuantile((1 + level) / 2)
	fn := float64(n)
	p := float64(x) / fn
	z2 := z * z
	denom := 1 + z2/fn
	center := (p + z2/(2*fn)) / denom
	half := z / denom * math.Sqrt(p*(1-p)/fn+z2/(4*fn*fn))
	return max(0, center-half), min(1, center+half)
}

// newcombe is Newcombe's hybrid score interval (his method 10, from two
// Wilson intervals) of the difference of proportions x2/n2 − x1/n1 at
// level. Unlike the Wald interval it keeps its coverage at 0 errors and
// with few requests, which is where error rates live. Both n must be > 0.
func newcombe(x1, n1, x2, n2 int, level float64) (diff, low, high float64) {
	p1, p2 := float64(x1)/float64(n1), float64(x2)/float64(n2)
	l1, u1 := wilson(x1, n1, level)
	l2, u2 := wilson(x2, n2, level)
	diff = p2 - p1
	low = diff - math.Sqrt(sq(p2-l2)+sq(u1-p1))
	high = diff + math.Sqrt(sq(u2-p2)+sq(p1-l1))
	return diff, low, high
}

package search

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/llmbench/llmbench/internal/sla"
	"github.com/llmbench/llmbench/internal/stats"
)

// This file is llmbench's own, beyond AIPerf: a probe's verdict read from
// its per-request samples with a stated confidence, so a search need not
// trust a percentile of 50 requests as if it were exact.

// Decision is the confident reading of one filter on one probe.
type Decision struct {
	Verdict Verdict
	// Point is the statistic as AIPerf computes it: the linearly
	// interpolated percentile (numpy's default), the mean, the min or max.
	Point float64
	// Lo and Hi bound the population statistic at the level asked; an
	// unreachable end is ∓Inf.
	Lo, Hi float64
	// N is the count of samples the decision rests on.
	N int
}

// proportionScale tells the tags whose avg is a proportion of requests,
// which Decide reads with ProportionCI, and the value of one flagged
// request: 100 for request_error_rate (percent), 1 for
// good_request_fraction.
func proportionScale(tag string) (scale float64, ok bool) {
	switch tag {
	case "request_error_rate":
		return 100, true
	case "good_request_fraction":
		return 1, true
	}
	return 0, false
}

// Decide reads filter f on a probe's per-request samples at confidence
// level (e.g. 0.95): Pass when the whole interval of the statistic meets
// the filter, Fail when the whole interval violates it, Uncertain
// otherwise. NaN samples (unmeasured requests) are left out.
//
//   - p1…p99: QuantileCI, whose two tails each miss with probability at
//     most (1−level)/2, so a Pass or a Fail is wrong at most that often.
//   - avg: MeanCI (Student t); for request_error_rate and
//     good_request_fraction, ProportionCI (Clopper–Pearson) on the 0/1
//     flags, scaled back to the tag's unit.
//   - min, max: the sample extreme is the run's statistic itself, with no
//     population to infer: decided on the point, never Uncertain.
//
// With no sample the statistic is missing, and a missing value fails
// (AIPerf's rule, b1).
func Decide(f sla.Filter, samples []float64, level float64) Decision {
	xs := make([]float64, 0, len(samples))
	for _, v := range samples {
		if !math.IsNaN(v) {
			xs = append(xs, v)
		}
	}
	n := len(xs)
	d := Decision{N: n}
	if n == 0 {
		d.Verdict, d.Point, d.Lo, d.Hi = Fail, math.NaN(), math.NaN(), math.NaN()
		return d
	}
	slices.Sort(xs)
	scale, proportion := proportionScale(f.Tag)
	switch {
	case f.Stat == "min" || f.Stat == "max":
		d.Point = xs[0]
		if f.Stat == "max" {
			d.Point = xs[n-1]
		}
		d.Lo, d.Hi = d.Point, d.Point
	case f.Stat == "avg" && proportion:
		d.Point = stats.Mean(xs)
		k := 0
		for _, v := range xs {
			if v > scale/2 {
				k++
			}
		}
		lo, hi := ProportionCI(k, n, level)
		d.Lo, d.Hi = lo*scale, hi*scale
	case f.Stat == "avg":
		d.Point = stats.Mean(xs)
		d.Lo, d.Hi, _ = MeanCI(xs, level)
	default:
		p, err := strconv.ParseFloat(strings.TrimPrefix(f.Stat, "p"), 64)
		if err != nil || !strings.HasPrefix(f.Stat, "p") {
			d.Verdict, d.Point, d.Lo, d.Hi = Fail, math.NaN(), math.NaN(), math.NaN()
			return d
		}
		d.Point = stats.PercentileSorted(xs, p)
		d.Lo, d.Hi, _ = quantileCISorted(xs, p/100, level)
	}
	loOK, hiOK := meets(f, d.Lo), meets(f, d.Hi)
	switch {
	case loOK && hiOK:
		d.Verdict = Pass
	case !loOK && !hiOK:
		d.Verdict = Fail
	default:
		d.Verdict = Uncertain
	}
	return d
}

// meets compares v with the threshold on the extended reals, so an
// infinite interval end reads as what it bounds (sla.Filter.Holds fails
// every infinite value, rightly for a measured one).
func meets(f sla.Filter, v float64) bool {
	switch f.Op {
	case sla.LT:
		return v < f.Threshold
	case sla.LE:
		return v <= f.Threshold
	case sla.GT:
		return v > f.Threshold
	case sla.GE:
		return v >= f.Threshold
	}
	return false
}

// QuantileCI is the exact distribution-free interval [X(l), X(u)] for the
// q-quantile of the population xs was drawn from, X(i) the i-th smallest
// sample: with B ~ Binomial(n, q), the lower end misses (X(l) > ξq) with
// probability P(B ≤ l−1) and the upper end (X(u) < ξq) with P(B ≥ u).
// The ranks are equal-tailed: l the largest and u the smallest rank whose
// miss is at most (1−level)/2, so the coverage is at least level for any
// continuous distribution, each side on its own. ok is false when n is
// too small for a finite end on some side; that end is then −Inf (lo) or
// +Inf (hi), and the interval still covers at the level. xs need not be
// sorted; it is not modified.
func QuantileCI(xs []float64, q, level float64) (lo, hi float64, ok bool) {
	return quantileCISorted(slices.Sorted(slices.Values(xs)), q, level)
}

func quantileCISorted(sorted []float64, q, level float64) (lo, hi float64, ok bool) {
	n := len(sorted)
	l, u := quantileRanks(n, q, level)
	lo, hi = math.Inf(-1), math.Inf(1)
	if l >= 1 {
		lo = sorted[l-1]
	}
	if u <= n {
		hi = sorted[u-1]
	}
	return lo, hi, l >= 1 && u <= n
}

// quantileRanks are QuantileCI's 1-based ranks; l = 0 and u = n+1 stand
// for the unbounded ends.
func quantileRanks(n int, q, level float64) (l, u int) {
	if n == 0 || !(q > 0 && q < 1) || !(level > 0 && level < 1) {
		return 0, n + 1
	}
	half := (1 - level) / 2 * (1 + 1e-9) // room for rounding in the sums
	pmf := binomialPMF(make([]float64, n+1), n, q)
	var cum float64
	for k := 1; k <= n; k++ {
		if cum += pmf[k-1]; cum > half {
			break
		}
		l = k
	}
	u = n + 1
	var tail float64
	for k := n; k >= 1; k-- {
		if tail += pmf[k]; tail > half {
			break
		}
		u = k
	}
	return l, u
}

// binomialPMF fills pmf[0..n] with the Binomial(n, p) probabilities,
// anchored at the mode in log space and extended by the ratio of
// neighbours, so large n neither overflows nor loses the centre.
func binomialPMF(pmf []float64, n int, p float64) []float64 {
	clear(pmf)
	switch {
	case p <= 0:
		pmf[0] = 1
		return pmf
	case p >= 1:
		pmf[n] = 1
		return pmf
	}
	mode := min(n, int(math.Floor(float64(n+1)*p)))
	lg := func(x int) float64 { v, _ := math.Lgamma(float64(x) + 1); return v }
	pmf[mode] = math.Exp(lg(n) - lg(mode) - lg(n-mode) + float64(mode)*math.Log(p) + float64(n-mode)*math.Log1p(-p))
	odds := p / (1 - p)
	// Outward from the mode the terms only shrink: once one underflows,
	// the rest are 0 already (cleared above).
	for k := mode + 1; k <= n && pmf[k-1] != 0; k++ {
		pmf[k] = pmf[k-1] * float64(n-k+1) / float64(k) * odds
	}
	for k := mode - 1; k >= 0 && pmf[k+1] != 0; k-- {
		pmf[k] = pmf[k+1] * float64(k+1) / float64(n-k) / odds
	}
	return pmf
}

// MeanCI is the Student t interval of the mean at level:
// mean ± t((1+level)/2, n−1) · s/√n with s the sample (ddof 1) standard
// deviation. ok is false, and the interval (−Inf, +Inf), below 2 samples.
func MeanCI(xs []float64, level float64) (lo, hi float64, ok bool) {
	n := len(xs)
	if n < 2 || !(level > 0 && level < 1) {
		return math.Inf(-1), math.Inf(1), false
	}
	m := stats.Mean(xs)
	h := stats.StudentTQuantile((1+level)/2, float64(n-1)) * stats.StdDev(xs, 1) / math.Sqrt(float64(n))
	return m - h, m + h, true
}

// ProportionCI is the Clopper–Pearson (exact, equal-tailed) interval of a
// proportion from successes out of n: lo solves P(Bin(n, lo) ≥ k) =
// (1−level)/2 (0 when k = 0) and hi solves P(Bin(n, hi) ≤ k) = (1−level)/2
// (1 when k = n). It never covers less than level, unlike Wilson's
// interval, which suits a verdict meant to be safe. n ≤ 0 gives [0, 1].
func ProportionCI(successes, n int, level float64) (lo, hi float64) {
	if n <= 0 || !(level > 0 && level < 1) {
		return 0, 1
	}
	k := min(max(successes, 0), n)
	half := (1 - level) / 2
	pmf := make([]float64, n+1)
	upper := func(p float64) float64 { // P(B ≥ k)
		var s float64
		for _, v := range binomialPMF(pmf, n, p)[k:] {
			s += v
		}
		return s
	}
	lower := func(p float64) float64 { // P(B ≤ k)
		var s float64
		for _, v := range binomialPMF(pmf, n, p)[:k+1] {
			s += v
		}
		return s
	}
	lo, hi = 0, 1
	if k > 0 {
		lo = solveIncreasing(upper, half)
	}
	if k < n {
		hi = solveIncreasing(func(p float64) float64 { return -lower(p) }, -half)
	}
	return lo, hi
}

// solveIncreasing finds p in [0, 1] with f(p) = target for an increasing
// f, by bisection to float64 resolution.
func solveIncreasing(f func(float64) float64, target float64) float64 {
	a, b := 0.0, 1.0
	for range 100 {
		mid := a + (b-a)/2
		if mid <= a || mid >= b {
			break
		}
		if f(mid) < target {
			a = mid
		} else {
			b = mid
		}
	}
	return a + (b-a)/2
}

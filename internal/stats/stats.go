// Package stats holds the pure statistics llmbench reports: percentiles,
// means and standard deviations over samples. It does no I/O.
package stats

import (
	"math"
	"slices"
)

// Percentiles are the percentiles every distribution reports, in order.
var Percentiles = [...]float64{1, 5, 10, 25, 50, 75, 90, 95, 99}

// PercentileNames are the JSON/CSV keys for Percentiles, in the same order.
var PercentileNames = [...]string{"p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99"}

// Summary describes a distribution of samples.
type Summary struct {
	Count int
	// Sum is the values' total (AIPerf's "sum", export schema 1.1).
	Sum float64
	Avg float64
	Min float64
	Max float64
	// P holds the values at Percentiles, in order.
	P [len(Percentiles)]float64
	// Std is the population standard deviation (ddof=0, numpy's np.std default),
	// which is what AIPerf reports for client-side metrics.
	Std float64
}

// Summarize computes the Summary of values. It sorts values in place.
// An empty input gives a zero Summary with Count 0.
func Summarize(values []float64) Summary {
	n := len(values)
	if n == 0 {
		return Summary{}
	}
	slices.Sort(values)
	s := Summary{Count: n, Min: values[0], Max: values[n-1]}
	s.Sum = kahanSum(values)
	s.Avg = s.Sum / float64(n)
	s.Std = StdDev(values, 0)
	for i, p := range Percentiles {
		s.P[i] = PercentileSorted(values, p)
	}
	return s
}

// Mean is the arithmetic mean of values, or NaN for none. It uses a
// compensated sum so long runs of similar values stay exact.
func Mean(values []float64) float64 {
	if len(values) == 0 {
		return math.NaN()
	}
	return kahanSum(values) / float64(len(values))
}

// StdDev is the standard deviation of values with ddof degrees of freedom
// removed (0: population, numpy's default; 1: sample). It is NaN when
// len(values) <= ddof.
func StdDev(values []float64, ddof int) float64 {
	n := len(values)
	if n <= ddof {
		return math.NaN()
	}
	m := Mean(values)
	var sum, comp float64
	for _, v := range values {
		d := v - m
		y := d*d - comp
		t := sum + y
		comp = (t - sum) - y
		sum = t
	}
	return math.Sqrt(sum / float64(n-ddof))
}

// PercentileSorted returns the p-th percentile (0..100) of sorted values using
// linear interpolation between closest ranks: numpy.percentile's default
// method ("linear"): rank h = (n-1)*p/100, result x[⌊h⌋] + (h-⌊h⌋)(x[⌊h⌋+1]-x[⌊h⌋]).
func PercentileSorted(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	if n == 1 || p <= 0 {
		return sorted[0]
	}
	if p >= 100 {
		return sorted[n-1]
	}
	h := float64(n-1) * p / 100
	lo := int(math.Floor(h))
	frac := h - float64(lo)
	if lo+1 >= n {
		return sorted[n-1]
	}
	return sorted[lo] + frac*(sorted[lo+1]-sorted[lo])
}

func kahanSum(values []float64) float64 {
	var sum, comp float64
	for _, v := range values {
		y := v - comp
		t := sum + y
		comp = (t - sum) - y
		sum = t
	}
	return sum
}

package stats

import (
	"math"
	"slices"
)

// LogHistogram summarises non-negative values in constant memory, for
// samples too many to keep (the inter-chunk latencies of a long run). Its
// buckets are 1/512 of an octave wide (a float64's exponent and the top 9
// bits of its mantissa), so every percentile it reports is within a
// relative 2^-10 (under 0.1 %) of the exact one (numpy's linear
// interpolation between order statistics, as Summarize computes); count,
// min and max are exact, the mean and standard deviation exact up to
// floating-point rounding. (Values below 2^-1022, in the lowest bucket, are
// reported as 0.)
type LogHistogram struct {
	counts   map[uint64]uint64
	n        int
	min, max float64
	// sum is compensated (Kahan); mean and m2 follow Welford, for the
	// standard deviation.
	sum, comp float64
	mean, m2  float64
}

// logHistShift drops all but the top 9 bits of the mantissa.
const logHistShift = 52 - 9

// LogHistogramRelErr bounds the relative error of its percentiles.
const LogHistogramRelErr = 1.0 / 1024

// NewLogHistogram returns an empty histogram.
func NewLogHistogram() *LogHistogram {
	return &LogHistogram{counts: map[uint64]uint64{}, min: math.Inf(1), max: math.Inf(-1)}
}

// Add records v; a negative v counts as 0.
func (h *LogHistogram) Add(v float64) {
	v = math.Max(v, 0)
	h.counts[math.Float64bits(v)>>logHistShift]++
	h.n++
	h.min, h.max = math.Min(h.min, v), math.Max(h.max, v)
	y := v - h.comp
	t := h.sum + y
	h.comp = (t - h.sum) - y
	h.sum = t
	d := v - h.mean
	h.mean += d / float64(h.n)
	h.m2 += d * (v - h.mean)
}

// Summary is the histogram's Summary, as Summarize would give for the
// values added, percentiles within LogHistogramRelErr.
func (h *LogHistogram) Summary() Summary {
	if h.n == 0 {
		return Summary{}
	}
	s := Summary{Count: h.n, Sum: h.sum, Min: h.min, Max: h.max, Avg: h.sum / float64(h.n), Std: math.Sqrt(h.m2 / float64(h.n))}
	keys := make([]uint64, 0, len(h.counts))
	for k := range h.counts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	// orderStat estimates the k-th smallest value (0-based): the middle
	// of its bucket, kept within the exact min and max.
	orderStat := func(k int) float64 {
		switch k {
		case 0:
			return h.min
		case h.n - 1:
			return h.max
		}
		seen := uint64(0)
		for _, key := range keys {
			seen += h.counts[key]
			if uint64(k) < seen {
				if key == 0 {
					return math.Max(0, h.min) // zeros (and denormals)
				}
				lo, hi := math.Float64frombits(key<<logHistShift), math.Float64frombits((key+1)<<logHistShift)
				return math.Min(math.Max((lo+hi)/2, h.min), h.max)
			}
		}
		return h.max
	}
	for i, p := range Percentiles {
		rank := float64(h.n-1) * p / 100
		lo := int(math.Floor(rank))
		v := orderStat(lo)
		if frac := rank - float64(lo); frac > 0 {
			v += frac * (orderStat(lo+1) - v)
		}
		s.P[i] = v
	}
	return s
}

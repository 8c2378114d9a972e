package stats

import "math"

// BucketLinear estimates quantiles from cumulative histogram buckets the
// way Prometheus' histogram_quantile does: observations are taken as spread
// evenly inside their bucket; the first bucket starts at 0 (when its bound
// is positive); a quantile in the +Inf bucket is the highest finite bound.
type BucketLinear struct{}

// Quantiles returns the estimate for each q in qs (fractions 0..1). bounds
// are the bucket upper bounds in increasing order, ending with +Inf; counts
// the cumulative counts. With no observations every estimate is NaN.
func (BucketLinear) Quantiles(bounds, counts, qs []float64) []float64 {
	out := make([]float64, len(qs))
	n := len(bounds)
	if n == 0 || len(counts) != n || counts[n-1] <= 0 {
		for i := range out {
			out[i] = math.NaN()
		}
		return out
	}
	total := counts[n-1]
	for i, q := range qs {
		rank := q * total
		b := 0
		for b < n-1 && counts[b] < rank {
			b++
		}
		if math.IsInf(bounds[b], 1) {
			if n >= 2 {
				out[i] = bounds[n-2]
			} else {
				out[i] = math.NaN()
			}
			continue
		}
		lower, prev := 0.0, 0.0
		if b > 0 {
			lower, prev = bounds[b-1], counts[b-1]
		} else if bounds[0] <= 0 {
			out[i] = bounds[0]
			continue
		}
		inBucket := counts[b] - prev
		if inBucket <= 0 {
			out[i] = bounds[b]
			continue
		}
		out[i] = lower + (bounds[b]-lower)*(rank-prev)/inBucket
	}
	return out
}

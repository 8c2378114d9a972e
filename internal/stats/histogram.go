package stats

import (
	"math"
	"slices"
)

// HistogramSeries is one Prometheus histogram as scraped over a run, from
// the reference scrape (index 0) to the final one: what a percentile
// estimator may use. Every slice is indexed by scrape.
type HistogramSeries struct {
	// Bounds are the bucket upper bounds, increasing; the last is +Inf
	// when the exposition has one.
	Bounds []float64
	// Buckets[i] are scrape i's cumulative bucket counts, aligned with Bounds.
	Buckets [][]float64
	// Sum and Count are scrape i's _sum and _count.
	Sum, Count []float64
}

// Clone is a deep copy of the series, for keeping one whose buffers are
// reused (the store decodes every series into the same ones).
func (h *HistogramSeries) Clone() HistogramSeries {
	c := HistogramSeries{Bounds: slices.Clone(h.Bounds), Sum: slices.Clone(h.Sum), Count: slices.Clone(h.Count)}
	for _, row := range h.Buckets {
		c.Buckets = append(c.Buckets, slices.Clone(row))
	}
	return c
}

// Scrapes is the number of scrapes in the series.
func (h *HistogramSeries) Scrapes() int { return len(h.Count) }

// Totals is the change from the first scrape to the last: count, sum, and
// the cumulative bucket counts, each bucket clamped at 0.
func (h *HistogramSeries) Totals() (count, sum float64, cumulative []float64) {
	n := h.Scrapes()
	cumulative = make([]float64, len(h.Bounds))
	if n == 0 {
		return 0, 0, cumulative
	}
	first, last := h.Buckets[0], h.Buckets[n-1]
	for i := range cumulative {
		cumulative[i] = math.Max(0, last[i]-first[i])
	}
	return h.Count[n-1] - h.Count[0], h.Sum[n-1] - h.Sum[0], cumulative
}

// nanQuantiles is the answer when nothing can be estimated.
func nanQuantiles(qs []float64) []float64 {
	out := make([]float64, len(qs))
	for i := range out {
		out[i] = math.NaN()
	}
	return out
}

// BucketLinear estimates quantiles from cumulative histogram buckets the
// way Prometheus' histogram_quantile does: observations are taken as spread
// evenly inside their bucket; the first bucket starts at 0 (when its bound
// is positive); a quantile in the +Inf bucket is the highest finite bound.
// It uses only the totals of the series.
type BucketLinear struct{}

// Quantiles returns the estimate for each q in qs (fractions 0..1); with no
// observations every estimate is NaN.
func (BucketLinear) Quantiles(h HistogramSeries, qs []float64) []float64 {
	_, _, cumulative := h.Totals()
	return LinearQuantiles(h.Bounds, cumulative, qs)
}

// LinearQuantiles is BucketLinear on cumulative counts: bounds increasing,
// ending with +Inf.
func LinearQuantiles(bounds, counts, qs []float64) []float64 {
	out := make([]float64, len(qs))
	n := len(bounds)
	if n == 0 || len(counts) != n || counts[n-1] <= 0 {
		return nanQuantiles(qs)
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

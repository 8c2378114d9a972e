package stats

import "math"

// A histogram whose first bound is 0 or below (Prometheus' LinearBuckets
// from 0: a queue time's le="0" bucket, which every request that did not
// wait falls into) has a first bucket of no width: its observations are
// all at that bound (or, for a negative bound, taken to be, as
// histogram_quantile takes them). They are known exactly, so they are set
// aside as an atom before the fit, which would otherwise weigh a bucket of
// zero variance infinitely and read every mean as NaN; the fit sees the
// other buckets, their interval sums less the atom's share, and the
// percentiles rank the atom's observations first.

// atom is n observations at exactly at.
type atom struct {
	n, at float64
}

// everywhere is every quantile of a sample that is all atom.
func (a atom) everywhere(qs []float64) []float64 {
	out := make([]float64, len(qs))
	for i := range out {
		out[i] = a.at
	}
	return out
}

// splitAtom returns h without the observations of a first bucket of no
// width (first bound ≤ 0) and those observations, or h unchanged and no
// atom. Every scrape's counts, sum and bucket counts lose that bucket's
// cumulative count (at the bound's value, in the sum). A scrape where that
// count went down (a reset, a torn read) would hide the fall in the other
// buckets once each is taken less it: its sum is made NaN, so that the
// intervals either side of it are left out as they would have been.
func splitAtom(h HistogramSeries) (HistogramSeries, atom) {
	n := h.Scrapes()
	if n == 0 || len(h.Bounds) < 2 || !(h.Bounds[0] <= 0) || len(h.Buckets) != n || len(h.Sum) != n {
		return h, atom{}
	}
	a := atom{n: h.Buckets[n-1][0] - h.Buckets[0][0], at: h.Bounds[0]}
	if !(a.n > 0) || math.IsInf(a.at, -1) {
		return h, atom{}
	}
	rest := HistogramSeries{
		Bounds:  h.Bounds,
		Buckets: make([][]float64, n),
		Sum:     make([]float64, n),
		Count:   make([]float64, n),
	}
	for t, row := range h.Buckets {
		first := row[0]
		moved := make([]float64, len(row))
		for i, c := range row {
			moved[i] = c - first
		}
		rest.Buckets[t] = moved
		rest.Sum[t] = h.Sum[t] - first*a.at
		rest.Count[t] = h.Count[t] - first
		if t > 0 && !(first >= h.Buckets[t-1][0]) {
			rest.Sum[t] = math.NaN()
		}
	}
	return rest, a
}

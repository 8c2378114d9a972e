package stats

import (
	"math"
	"math/rand/v2"
	"slices"
)

// How far can an estimate from counts and sums be trusted? Where the data
// pin a percentile down (a tight cluster in intervals of its own), the
// estimator reads it within a fraction of a percent; where they do not (a
// normal body's flank in one wide bucket, whose spread the residuals of
// forty intervals barely measure), no estimator reads it closely, and a
// miss says as much about the data as about the estimator.
//
// ErrorSpread measures that for one series by a parametric bootstrap. Each
// replicate keeps the series' usable intervals and their exact bucket
// counts, and draws every observation afresh from the law interval-fit
// fitted to its bucket; the replicate's sums are those draws'. Interval-fit
// then estimates the replicate, whose own percentiles are known exactly,
// and the spread of its relative errors over the replicates is the answer.
// The bootstrap takes the fitted laws as the truth, so it measures how
// much the estimate moves with what the data leave open (which draws
// landed in which interval, whether a variance or a gate is read), not how
// far the fitted laws themselves are from the real one.

// maxErrorSpreadObservations bounds the observations a replicate draws
// one by one: the measure is meant for a test's runs, not an hour of a
// busy server.
const maxErrorSpreadObservations = 100_000

// ErrorSpread is the root mean square, over replicates, of interval-fit's
// relative error at each quantile in qs on series like h (see above),
// seeded by seed; NaN where h has no estimate, holds an atom (a first
// bucket of no width) or more than 100,000 observations in its usable
// intervals.
func (IntervalFit) ErrorSpread(h HistogramSeries, qs []float64, replicates int, seed uint64) []float64 {
	out := nanQuantiles(qs)
	if _, atom := splitAtom(h); atom.n > 0 || replicates < 1 {
		return out
	}
	count, sum, cumulative := h.Totals()
	m, ok := newBucketModel(h.Bounds, cumulative, count, sum)
	if !ok {
		return out
	}
	if sum == 0 && m.lower[0] >= 0 {
		return make([]float64, len(qs)) // all 0, and so every replicate
	}
	m.fitAll(h)
	d := m.decode(h)
	// What a replicate draws: the usable intervals' observations, which a
	// series with resets may hold far more of than its totals.
	drawn := 0.0
	for _, c := range d.cells {
		drawn += math.Round(c.n)
	}
	if drawn > maxErrorSpreadObservations {
		return out
	}
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	squares := make([]float64, len(qs))
	used := 0
	for range replicates {
		rep, sample := m.replicate(h.Bounds, d, rng)
		if len(sample) == 0 {
			break
		}
		slices.Sort(sample)
		est := IntervalFit{}.Quantiles(rep, qs)
		ok := true
		errs := make([]float64, len(qs))
		for i, q := range qs {
			exact := PercentileSorted(sample, 100*q)
			errs[i] = (est[i] - exact) / math.Abs(exact)
			if exact == 0 {
				errs[i] = 0
				if est[i] != 0 {
					errs[i] = math.Inf(1)
				}
			}
			if math.IsNaN(errs[i]) || math.IsInf(errs[i], 0) {
				ok = false
			}
		}
		if !ok {
			continue // a replicate with no estimate says nothing of the spread
		}
		for i, e := range errs {
			squares[i] += e * e
		}
		used++
	}
	if used == 0 {
		return out
	}
	for i := range out {
		out[i] = math.Sqrt(squares[i] / float64(used))
	}
	return out
}

// replicate is one bootstrap series: the usable intervals d of the
// model's series, their bucket counts kept and their observations drawn
// from the buckets' fitted laws, and those observations.
func (m *bucketModel) replicate(bounds []float64, d *decodedIntervals, rng *rand.Rand) (HistogramSeries, []float64) {
	rows := len(d.t) + 1
	h := HistogramSeries{
		Bounds:  bounds,
		Buckets: make([][]float64, 1, rows),
		Sum:     make([]float64, 1, rows),
		Count:   make([]float64, 1, rows),
	}
	h.Buckets[0] = make([]float64, len(bounds))
	cum := make([]float64, len(bounds))
	var sample []float64
	sum, count := 0.0, 0.0
	for i := range d.t {
		for _, c := range d.cells[d.off[i]:d.off[i+1]] {
			k := math.Round(c.n) // whole observations, drawn and counted alike
			for range int(k) {
				v := m.mean[c.j] // a lone observation is its bucket's mean
				if m.n[c.j] > 1 {
					v = m.law(c.j).quantile(rng.Float64())
				}
				sample = append(sample, v)
				sum += v
			}
			for b := m.index[c.j]; b < len(cum); b++ {
				cum[b] += k
			}
			count += k
		}
		h.Buckets = append(h.Buckets, slices.Clone(cum))
		h.Sum = append(h.Sum, sum)
		h.Count = append(h.Count, count)
	}
	return h, sample
}

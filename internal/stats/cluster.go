package stats

import (
	"math"
	"slices"
)

// A cluster is every observation of a run inside one finite bucket: the
// README's own run puts 200 request latencies between 0.636 and 0.688 s,
// all in vLLM's (0.5, 0.8] bucket. The bucket counts then say nothing
// about the spread, and the within-bucket variance fitted from the
// interval sums assumes the observations of one interval are independent.
// They are not: a batch of requests admitted together finishes together,
// with nearly the same latency, so an interval's mean moves with the batch
// (and with the load's drift) by far more than independent draws would
// move it, and that fit reads the batches' spread as a spread of single
// observations, several times too wide.
//
// With one bucket, though, every interval's mean m_t = Δsum/Δcount is
// exact, and it is the better witness: the run's observations are modelled
// as the mixture over intervals of their own means, each spread by the
// within-interval variance τ². τ² is read from the successive differences
// of the interval means, E[(m_t − m_{t−1})²] = τ²·(1/n_t + 1/n_{t−1})
// when the means do not jump, robustly: the median ratio over
// consecutive pairs, divided by the median of a χ²₁ variable, so the odd
// jump (a cache warming up, a load step) counts as the change it is and
// not as spread. Each interval's law is the maximum-entropy one on the
// bucket with that mean and variance.

// clusterMinIntervals is how many intervals with observations the model
// needs; a shorter run keeps the whole-run fit.
const clusterMinIntervals = 6

// chiSquare1Median is the median of a χ² variable with one degree of
// freedom: the median of d²/E[d²] for a normal difference d.
const chiSquare1Median = 0.45493642311957283

// clusterBins is the resolution the interval means are pooled at (of the
// bucket's width), so a run of any length costs a bounded mixture.
const clusterBins = 2048

// clusterMixture builds that mixture when every observation of the run
// lies in one finite bucket and every interval's mean lies in it; ok is
// false otherwise (the whole-run fit then applies).
func (m *bucketModel) clusterMixture(h HistogramSeries) (*bucketMixture, bool) {
	if len(m.n) != 1 || m.infinite {
		return nil, false
	}
	lower, upper := m.lower[0], m.upper[0]
	width := upper - lower
	if !(width > 0) {
		return nil, false
	}
	type interval struct{ n, mean float64 }
	var ivs []interval
	for t := 1; t < h.Scrapes(); t++ {
		dn, ds := h.Count[t]-h.Count[t-1], h.Sum[t]-h.Sum[t-1]
		switch {
		case dn == 0:
			continue
		case dn < 0 || math.IsNaN(ds):
			return nil, false // a reset the caller did not undo
		}
		mean := ds / dn
		if mean < lower-1e-9*width || mean > upper+1e-9*width {
			return nil, false // inconsistent with the bucket: trust neither
		}
		ivs = append(ivs, interval{dn, math.Min(math.Max(mean, lower), upper)})
	}
	if len(ivs) < clusterMinIntervals {
		return nil, false
	}
	ratios := make([]float64, 0, len(ivs)-1)
	for t := 1; t < len(ivs); t++ {
		d := ivs[t].mean - ivs[t-1].mean
		ratios = append(ratios, d*d/(1/ivs[t].n+1/ivs[t-1].n))
	}
	slices.Sort(ratios)
	tau2 := ratios[len(ratios)/2] / chiSquare1Median
	if len(ratios)%2 == 0 {
		tau2 = (ratios[len(ratios)/2-1] + ratios[len(ratios)/2]) / 2 / chiSquare1Median
	}
	// Not below a resolution the shapes can hold, not beyond what any law
	// on the bucket can have.
	tau2 = math.Max(tau2, math.Pow(width/clusterBins, 2))
	// An interval's mean also carries its own observations' noise, τ²/n_t:
	// mixed as they are, independent draws would come out too wide. So
	// each mean is drawn towards the run's mean until the means spread by
	// the between-interval variance alone (their variance less the noise):
	// nothing moves when batches or drift dominate, and independent draws
	// collapse to one law with variance τ², as they should.
	var total, mu float64
	for _, iv := range ivs {
		total += iv.n
		mu += iv.n * iv.mean
	}
	mu /= total
	var spread, noise float64
	for _, iv := range ivs {
		spread += iv.n * (iv.mean - mu) * (iv.mean - mu)
		noise += tau2 // n_t · τ²/n_t
	}
	between := math.Max(0, (spread-noise)/total)
	for i, iv := range ivs {
		if between == 0 {
			ivs[i].mean = mu
			continue
		}
		ivs[i].mean = mu + (iv.mean-mu)*math.Sqrt(between/(between+tau2/iv.n))
	}
	// Pool the means on a grid of the bucket, each bin at its weighted mean.
	type bin struct{ n, sum float64 }
	bins := map[int]*bin{}
	for _, iv := range ivs {
		k := int((iv.mean - lower) / width * clusterBins)
		b := bins[k]
		if b == nil {
			b = &bin{}
			bins[k] = b
		}
		b.n += iv.n
		b.sum += iv.n * iv.mean
	}
	keys := make([]int, 0, len(bins))
	for k := range bins {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	x := &bucketMixture{}
	for _, k := range keys {
		b := bins[k]
		mean := b.sum / b.n
		v := math.Min(tau2, 0.98*(mean-lower)*(upper-mean))
		x.add(newTwoMomentShape(lower, upper, mean, v), b.n)
	}
	return x, true
}

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
// not as spread. Where the means move beyond their draws' noise all the
// same (a queue that builds and drains), τ² is held where the bucket's
// bounds say it must be (boundedSpread). Each interval's law is the
// maximum-entropy one on the bucket with that mean and variance.

// clusterMinIntervals is how many lone intervals the model needs: their
// means' three successive differences give the spread within an interval
// (a median of three, which the bucket's bounds then cap), where the
// whole-run fit's shape for a bucket with gaps either side (a cluster of
// five batches) is nearly uniform across it. A bucket with fewer keeps
// that fit. Six, before the cap, left such a cluster's p99 11 % high.
const clusterMinIntervals = 4

// chiSquare1Median is the median of a χ² variable with one degree of
// freedom: the median of d²/E[d²] for a normal difference d.
const chiSquare1Median = 0.45493642311957283

// clusterBins is the resolution the interval means are pooled at (of the
// bucket's width), so a run of any length costs a bounded mixture.
const clusterBins = 2048

// pureMinShare is the share of a bucket's observations that must have
// come in intervals where that bucket alone received observations for
// those intervals' exact means to model it.
const pureMinShare = 0.5

// clusterMixtures builds that mixture for every finite bucket whose
// observations came mostly (pureMinShare) in intervals where it alone
// received observations: all of them when the run is one bucket, and, the
// same way, each of two clusters in two buckets that the run visits in
// turn (the README's run: prefix-cache misses, then hits), or a slow run
// whose intervals mostly hold one request, each then known exactly (32
// long outputs over two buckets: e2e p99 +16 % from the variance fit,
// 0–2 % from their exact values). The bucket's observations in intervals
// shared with other buckets join the mixture at their share of the
// interval's sum (the self-consistency test's long outputs: e2e p50 +2.8 %
// from the pure intervals alone, +0.9 % with them). Other buckets keep
// the fit.
func (m *bucketModel) clusterMixtures(h HistogramSeries) []*bucketMixture {
	last := h.Scrapes() - 1
	pure := make([][]clusterInterval, len(m.n))
	m.intervals(h, 0, last, func(ds float64, cells []cell) {
		if len(cells) == 1 {
			j := cells[0].j
			pure[j] = append(pure[j], clusterInterval{n: cells[0].n, mean: ds / cells[0].n})
		}
	})
	// The buckets the model is for; most series have none, and skip the
	// mixed intervals' pass.
	clustered := make([]bool, len(m.n))
	some := false
	for j, ivs := range pure {
		covered := 0.0
		for _, iv := range ivs {
			covered += iv.n
		}
		clustered[j] = covered >= pureMinShare*m.n[j] && len(ivs) >= clusterMinIntervals
		some = some || clustered[j]
	}
	if !some {
		return nil
	}
	mixed := make([][]clusterInterval, len(m.n))
	spread := m.bucketVariances()
	m.intervals(h, 0, last, func(ds float64, cells []cell) {
		if len(cells) == 1 {
			return
		}
		for _, c := range cells {
			if !clustered[c.j] {
				continue
			}
			share, noise := ds, 0.0
			for _, o := range cells {
				if o.j != c.j {
					share -= o.n * m.mean[o.j]
					noise += o.n * spread[o.j]
				}
			}
			// The share is read against the bucket's own law (mean μ_j,
			// variance σ_j² per observation): a normal update, so a share
			// the other buckets leave noisy stays near μ_j.
			prior := spread[c.j] / c.n
			noise /= c.n * c.n
			gain := prior / (prior + noise)
			if !(gain >= 0) {
				gain = 0
			}
			mean := m.mean[c.j] + gain*(share/c.n-m.mean[c.j])
			mixed[c.j] = append(mixed[c.j], clusterInterval{n: c.n, mean: mean, noise: gain * noise})
		}
	})
	var out []*bucketMixture
	for j, ivs := range pure {
		if !clustered[j] {
			continue
		}
		if mix, ok := intervalMeansMixture(m.lower[j], m.upper[j], ivs, mixed[j]); ok {
			if out == nil {
				out = make([]*bucketMixture, len(m.n))
			}
			out[j] = mix
		}
	}
	return out
}

// clusterInterval is one interval's observations in a bucket: how many,
// their mean, and the variance of that mean beyond their own spread (0
// where the bucket alone received observations; in a mixed interval, what
// the other buckets' observations, taken at their fitted means, leave
// unknown).
type clusterInterval struct{ n, mean, noise float64 }

// bucketVariances is each bucket's within-bucket variance: the fitted one
// where the residuals gave it, else its shape's.
func (m *bucketModel) bucketVariances() []float64 {
	out := make([]float64, len(m.n))
	for j := range out {
		if m.vars != nil && !math.IsNaN(m.vars[j]) {
			out[j] = m.vars[j]
			continue
		}
		out[j] = newBucketShape(m.lower[j], m.upper[j], m.mean[j]).variance()
	}
	return out
}

// intervalMeansMixture is the mixture of the intervals' means of one
// bucket, each spread by the within-interval variance: the exact means of
// the intervals it alone received observations in (pure, in run order),
// which also give that variance, and the shares of the mixed intervals it
// had observations in (what the interval's sum leaves once the other
// buckets' observations are taken at their fitted means: a slow run's
// request that finished beside one in another bucket is still read near
// its own value, not left out). ok is false when there are too few pure
// intervals or a pure mean outside the bucket (a broken series: trust
// neither).
func intervalMeansMixture(lower, upper float64, pure, mixed []clusterInterval) (*bucketMixture, bool) {
	width := upper - lower
	if !(width > 0) || math.IsInf(upper, 1) {
		return nil, false
	}
	ivs := make([]clusterInterval, 0, len(pure)+len(mixed))
	for _, iv := range pure {
		if iv.mean < lower-1e-9*width || iv.mean > upper+1e-9*width {
			return nil, false
		}
		iv.mean = math.Min(math.Max(iv.mean, lower), upper)
		ivs = append(ivs, iv)
	}
	if len(ivs) < clusterMinIntervals {
		return nil, false
	}
	counts := make([]float64, len(ivs))
	for i, iv := range ivs {
		counts[i] = iv.n
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
	// Observations that come in batches (every interval's count a
	// multiple of g: requests admitted together finish together) move an
	// interval's mean by their batch's own offset. The ratios then read
	// g·σ_b² + τ_w² (σ_b² the batches' offsets' variance, τ_w² the spread
	// inside a batch), which interval means cannot tell apart; over g it
	// is σ_b² + τ_w²/g, near the spread inside an interval when a batch's
	// members are alike, which is what makes them a batch, where the
	// ratios themselves are g times too wide (two clusters visited in
	// turn, batches of 8: p50 off by 20 %, 3 % with it). Independent
	// observations (g = 1) keep the ratios.
	if g := commonBatch(counts); g > 1 && float64(len(counts))*math.Log2(float64(g)) >= minBatchBits {
		tau2 /= float64(g)
	}
	tau2 = math.Min(tau2, boundedSpread(lower, upper, ivs, tau2))
	// A mixed interval's share is the bucket's (an estimate outside it is
	// the other buckets' noise, and held at its bound).
	for _, iv := range mixed {
		iv.mean = math.Min(math.Max(iv.mean, lower), upper)
		ivs = append(ivs, iv)
	}
	// Not below a resolution the shapes can hold, not beyond what any law
	// on the bucket can have.
	tau2 = math.Max(tau2, math.Pow(width/clusterBins, 2))
	// The interval means are the run's own, exact: its observations are
	// each interval's n_t values about their mean m_t, which spread about
	// it by τ²·(n_t − 1)/n_t (the variance of n draws about their own
	// mean): none for an interval of one observation, known exactly, and
	// the mixture's variance is the sample's, Var(m_t) + E[τ²(n_t−1)/n_t],
	// for independent draws as for batches.
	// Pool the intervals on a grid of the bucket: each bin at its weighted
	// mean, with the spread of its intervals' observations about it.
	type bin struct{ n, sum, sq, within float64 }
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
		b.sq += iv.n * iv.mean * iv.mean
		b.within += tau2*(iv.n-1) + iv.n*iv.noise
	}
	keys := make([]int, 0, len(bins))
	for k := range bins {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	x := &bucketMixture{}
	floor := math.Pow(width/clusterBins, 2) // the grid's resolution
	for _, k := range keys {
		b := bins[k]
		mean := b.sum / b.n
		v := (b.within + math.Max(0, b.sq-b.sum*mean)) / b.n
		v = math.Min(math.Max(v, floor), 0.98*(mean-lower)*(upper-mean))
		x.add(newTwoMomentShape(lower, upper, mean, v), b.n)
	}
	return x, true
}

// commonBatch is the greatest common divisor of the interval counts, 1
// when one is not a whole number.
func commonBatch(counts []float64) int {
	g := 0
	for _, c := range counts {
		n := int(math.Round(c))
		if float64(n) != c || n <= 0 {
			return 1
		}
		for n != 0 {
			g, n = n, g%n
		}
	}
	return max(g, 1)
}

// minBatchBits is the evidence a common batch size g must have before it
// is believed: k independent interval counts all share a factor g by
// chance about once in g^k runs, so k·log₂ g must reach 8 (once in 256):
// eight intervals for pairs, three for batches of 8.
const minBatchBits = 8

// boundSpreadLoss is how far (in log-likelihood) the spread within an
// interval may make the bucket's lone intervals' staying inside it less
// likely than a spread of nothing: the one-sided 95 % bound (χ²₁ 0.90
// quantile over 2).
const boundSpreadLoss = 1.3528

// boundedSpread is the largest within-interval variance, up to tau2, with
// which the lone intervals' observations all staying inside the bucket is
// still likely. The successive differences of the intervals' means read
// the spread within an interval only if the means do not move beyond
// their draws' noise; where they do (a queue that builds and drains, the
// requests of one interval admitted together), they read it several times
// too wide. The bucket's bounds then tell: interval means 60 ms below a
// bound with a spread of 80 ms would have put a fifth of their
// observations beyond it, and none went. An interval's n observations
// spread about their exact mean by τ²(n−1)/n, normally; the chance all
// stay inside falls as τ grows, and τ is held where its log has fallen by
// boundSpreadLoss. Means far from the bounds (a tight cluster mid-bucket)
// leave τ as read.
func boundedSpread(lower, upper float64, ivs []clusterInterval, tau2 float64) float64 {
	loss := func(tau float64) float64 {
		s := 0.0
		for _, iv := range ivs {
			if iv.n < 2 {
				continue
			}
			sd := tau * math.Sqrt((iv.n-1)/iv.n)
			in := normalCDF((upper-iv.mean)/sd) - normalCDF((lower-iv.mean)/sd)
			s -= iv.n * math.Log(math.Max(in, 1e-300))
		}
		return s
	}
	hi := math.Sqrt(tau2)
	if !(hi > 0) || loss(hi) <= boundSpreadLoss {
		return tau2
	}
	lo := 0.0
	for range 50 {
		mid := (lo + hi) / 2
		if loss(mid) > boundSpreadLoss {
			hi = mid
		} else {
			lo = mid
		}
	}
	return lo * lo
}

package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestTruncNormalMean: E[X | a < X ≤ b] for X ~ N(μ, s²), computed by hand
// as μ + s·(φ(α) − φ(β)) / (Φ(β) − Φ(α)), α = (a − μ)/s, β = (b − μ)/s; far
// in the tail, where the mass underflows, the asymptote a + s/α.
func TestTruncNormalMean(t *testing.T) {
	for _, tc := range []struct {
		lower, upper, mu, s, want, tol float64
	}{
		{0, math.Inf(1), 0, 1, 0.7978845608028654, 1e-12}, // 2φ(0)
		{-1, 1, 0, 1, 0, 1e-12},                           // symmetric
		{1, 2, 0, 1, 1.3831690466315525, 1e-12},
		{10, 11, 0, 1, 10.098068374932932, 1e-9}, // survival form, no cancellation
		{0.8, 1, 0.75, 0.03, 0.8124459545045051, 1e-12},
		{40, 41, 0, 1, 40 + 1.0/40, 1e-3}, // mass 1e-350: the asymptote
		{-41, -40, 0, 1, -40 - 1.0/40, 1e-3},
	} {
		if got, _ := truncNormalMoments(tc.lower, tc.upper, tc.mu, tc.s); math.Abs(got-tc.want) > tc.tol {
			t.Errorf("N(%g, %g²) on (%g, %g]: mean %.12g, want %.12g", tc.mu, tc.s, tc.lower, tc.upper, got, tc.want)
		}
	}
}

// TestTruncNormalShape: the truncated shape's quantiles and distribution
// function, against medians found by bisecting Φ by hand (Python's
// math.erfc), on a bucket around the centre and on one far in the upper
// tail, where Φ(3) and Φ(4) differ in the fourth decimal only.
func TestTruncNormalShape(t *testing.T) {
	for _, tc := range []struct {
		lower, upper, median float64
	}{
		{-1, 0.5, -0.1889682322057752},
		{3, 4, 3.198474131761953},
		{0, math.Inf(1), 0.6744897501960817},
	} {
		s := newTruncNormalShape(tc.lower, tc.upper, 0, 1)
		if got := s.quantile(0.5); math.Abs(got-tc.median) > 1e-9 {
			t.Errorf("(%g, %g]: median %.12g, want %.12g", tc.lower, tc.upper, got, tc.median)
		}
		for _, f := range []float64{0.01, 0.3, 0.5, 0.9, 0.999} {
			if got := s.cdf(s.quantile(f)); math.Abs(got-f) > 1e-9 {
				t.Errorf("(%g, %g]: cdf(quantile(%g)) = %.12g", tc.lower, tc.upper, f, got)
			}
		}
		if s.cdf(tc.lower) != 0 || (!math.IsInf(tc.upper, 1) && s.cdf(tc.upper) != 1) {
			t.Errorf("(%g, %g]: cdf at the bounds %g, %g, want 0, 1", tc.lower, tc.upper, s.cdf(tc.lower), s.cdf(tc.upper))
		}
	}
	if got := newTruncNormalShape(3, 4, 0, 1).cdf(3.5); math.Abs(got-0.8475544278436677) > 1e-9 {
		t.Errorf("(3, 4]: cdf(3.5) = %.12g, want 0.8475544278436677", got)
	}
}

// queuedBatches is a saturated server's request latencies: 5 batches of 4
// requests finish every second for 60 s (180 intervals of 333 ms), each
// batch behind a queue whose wait moves them by ±60 ms over 20 s and
// ±20 ms from batch to batch, each request ±30 ms about its batch: the
// intervals' observations straddle the 0.8 s bound together.
func queuedBatches(seed uint64) (HistogramSeries, []float64) {
	return seededSeries(seed, vllmE2EBounds, 180, func(r *rand.Rand, t int) []float64 {
		var out []float64
		for range poisson(r, 5.0/3) {
			at := float64(t) / 3
			base := 0.75 + 0.06*math.Sin(2*math.Pi*at/20) + 0.02*r.NormFloat64()
			for range 4 {
				out = append(out, base+0.03*r.NormFloat64())
			}
		}
		return out
	})
}

// TestBatchLawReadsQueuedBatches: least squares credits a slow batch's
// observations under 0.8 s to the bucket above it, whose mean it reads
// high: p50 / p90 / p99 were 2.11 / 3.43 / 8.91 % off over these 8 runs
// (the shape of bench/histaccuracy's queue-batches). The batch law reads
// each interval as one normal law about the centre its sum gives: within
// 0.5 / 0.5 / 1 % (measured 0.13 / 0.28 / 0.22 %).
func TestBatchLawReadsQueuedBatches(t *testing.T) {
	batchLawReads(t, queuedBatches, [3]float64{0.005, 0.005, 0.01})
}

// batchLawReads checks that the batch law reads each of 8 seeded runs of
// series, and that the p50 / p90 / p99 mean errors over them are within
// limits; it returns how many runs the lognormal kernel read.
func batchLawReads(t *testing.T, series func(seed uint64) (HistogramSeries, []float64), limits [3]float64) (lognormal int) {
	t.Helper()
	for seed := uint64(1); seed <= 8; seed++ {
		h, _ := series(seed)
		count, sum, cumulative := h.Totals()
		m, _ := newBucketModel(h.Bounds, cumulative, count, sum)
		m.fitSegments(h)
		m.cluster = m.clusterMixtures(h)
		laws := m.batchMixtures(h)
		if laws == nil {
			t.Errorf("seed %d: the batch law was not used", seed)
			continue
		}
		for _, x := range laws {
			if x != nil && x.shapes[0].logScale {
				lognormal++
				break
			}
		}
	}
	qs := []float64{0.5, 0.9, 0.99}
	errs := meanErrors(1, 8, qs, series)
	for i, limit := range limits {
		if errs[i] > limit {
			t.Errorf("p%g: mean error %.2f %%, want ≤ %.1f %%", 100*qs[i], 100*errs[i], 100*limit)
		}
	}
	t.Logf("p50 / p90 / p99 mean errors %.2f / %.2f / %.2f %%", 100*errs[0], 100*errs[1], 100*errs[2])
	return lognormal
}

// TestBatchLawLeavesIndependentDraws: independent draws, whatever their
// law, keep the bucket fit that suits them: the same layout and rate as
// the queued batches, with the batches' spread (normal), a skewed law
// (lognormal), and intervals that mix two modes (prefix-cache hits and
// misses), which a single normal law per interval would misread. Their
// bucket mix is not overdispersed, and the per-interval normal law does
// not explain their counts better than the bucket proportions (either
// gate alone keeps all 60 runs).
func TestBatchLawLeavesIndependentDraws(t *testing.T) {
	for _, tc := range []struct {
		name string
		draw func(r *rand.Rand) float64
	}{
		{"normal", func(r *rand.Rand) float64 { return 0.75 + 0.07*r.NormFloat64() }},
		{"lognormal", func(r *rand.Rand) float64 { return 0.7 * math.Exp(0.2*r.NormFloat64()) }},
		{"two modes", func(r *rand.Rand) float64 {
			if r.Float64() < 0.7 {
				return 0.25 + 0.02*r.NormFloat64()
			}
			return 0.6 + 0.03*r.NormFloat64()
		}},
	} {
		fired := 0
		for seed := uint64(1); seed <= 20; seed++ {
			h, _ := seededSeries(seed, vllmE2EBounds, 180, poissonDraws(20.0/3, tc.draw))
			count, sum, cumulative := h.Totals()
			m, _ := newBucketModel(h.Bounds, cumulative, count, sum)
			m.fitSegments(h)
			if m.batchMixtures(h) != nil {
				fired++
			}
		}
		if fired > 0 {
			t.Errorf("%s: the batch law replaced the bucket fit in %d of 20 runs of independent draws", tc.name, fired)
		}
	}
	// An hour of lognormal draws in 20 doubling buckets from 1 ms, 0–9 per
	// interval (the servermetrics benchmark's): its rarest buckets hold 1
	// in 10,000 observations, whose Pearson terms the χ² approximation's
	// variance 2(k − 1) took for overdispersion. The likelihood then kept
	// the bucket fit, but only after fitting the batch law: 78 s over the
	// benchmark's 200 series. The dispersion test alone must turn it away.
	bounds := make([]float64, 21)
	for k := range 20 {
		bounds[k] = 0.001 * float64(int(1)<<k)
	}
	bounds[20] = math.Inf(1)
	for seed := uint64(1); seed <= 3; seed++ {
		h, _ := seededSeries(seed, bounds, 10800, func(r *rand.Rand, _ int) []float64 {
			out := make([]float64, r.IntN(10))
			for i := range out {
				out[i] = 0.1 * math.Exp(r.NormFloat64())
			}
			return out
		})
		count, sum, cumulative := h.Totals()
		m, _ := newBucketModel(h.Bounds, cumulative, count, sum)
		m.fitSegments(h)
		if _, _, _, ok := m.batchCandidates(h); ok {
			t.Errorf("an hour of lognormal draws, seed %d: read as overdispersed", seed)
		}
	}
}

// TestBatchLawStaysInsideTheCounts: the queued batches with every
// interval's sum moved at random (by up to ±0.5 % or ±25 %, or one in
// eight zeroed and one in eight made a thousand times larger: sums no
// draws inside the buckets could give)
// still give estimates inside the buckets that must hold their order
// statistics, never decreasing with p, whether the batch law reads them or
// (where the moved sums fail its gate) the bucket fit does.
func TestBatchLawStaysInsideTheCounts(t *testing.T) {
	qs := []float64{0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999}
	rng := rand.New(rand.NewPCG(3, 4))
	batched := 0
	for trial := range 30 {
		h, _ := queuedBatches(uint64(trial + 1))
		if trial > 0 {
			// Rebuild the cumulative sums from moved increments.
			moved := []float64{h.Sum[0]}
			for i := 1; i < len(h.Sum); i++ {
				d := h.Sum[i] - h.Sum[i-1]
				switch wild := rng.IntN(8); {
				case trial%3 == 2 && wild == 0:
					d = 0
				case trial%3 == 2 && wild == 1:
					d *= 1000
				default:
					d *= 1 + (rng.Float64()-0.5)*[]float64{0.01, 0.5, 0}[trial%3]
				}
				moved = append(moved, moved[i-1]+d)
			}
			h.Sum = moved
		}
		got := IntervalFit{}.Quantiles(h, qs)
		cnt, sum, cumulative := h.Totals()
		if m, ok := newBucketModel(h.Bounds, cumulative, cnt, sum); ok {
			m.fitSegments(h)
			if m.batchMixtures(h) != nil {
				batched++
			}
		}
		checkInsideCounts(t, trial, h.Bounds, h.Buckets[len(h.Buckets)-1], qs, got)
	}
	if batched < 5 {
		t.Errorf("the batch law read %d of the 30 runs, want at least 5: the test no longer reaches it", batched)
	}
	t.Logf("the batch law read %d of the 30 runs", batched)
}

// TestLognormalMoments: the lognormal kernel's truncated mean, mass and
// slope in the centre against numerical integration of the lognormal
// density over the bucket (numpy's trapezoid rule on 2,000,001 points of
// log x; the slope by central differences), including the lowest bucket
// from 0, the +Inf bucket and a bucket 3.5 spreads above the centre; and
// the asymptote where the bucket's mass underflows: E[X | X > L] ≈ L·(1 +
// s²/(ln L − mu)).
func TestLognormalMoments(t *testing.T) {
	for _, tc := range []struct {
		lower, upper, mu, s    float64
		mean, mass, slope, tol float64
	}{
		{1, 2, 0.3, 0.5, 1.4309221017384184, 0.5098993546212658, 0.21400439956797965, 1e-6},
		{0, 1, 0, 1, 0.5231565837568428, 0.5, 0.14269058399851708, 1e-6},
		{3, math.Inf(1), 0, 0.5, 3.6276974047059753, 0.014002205576279843, 0.4276869449482134, 1e-6},
		{0.5, 0.8, math.Log(0.6), 0.07, 0.6019861630035093, 0.9953810313744255, 0.5820972129366719, 1e-6},
		{0.8, 1, math.Log(0.6), 0.07, 0.8125388442416394, 1.980490845503279e-05, 0.036861703156532144, 1e-6},
	} {
		k := batchLognormal{}
		mean, slope := k.moments(tc.lower, tc.upper, tc.mu, tc.s)
		if math.Abs(mean-tc.mean) > tc.tol*tc.mean {
			t.Errorf("(%g, %g] at %g, %g: mean %.12g, want %.12g", tc.lower, tc.upper, tc.mu, tc.s, mean, tc.mean)
		}
		if math.Abs(slope-tc.slope) > 1e-5 {
			t.Errorf("(%g, %g] at %g, %g: slope %.12g, want %.12g", tc.lower, tc.upper, tc.mu, tc.s, slope, tc.slope)
		}
		if got := k.mass(tc.lower, tc.upper, tc.mu, tc.s); math.Abs(got-tc.mass) > tc.tol*tc.mass {
			t.Errorf("(%g, %g] at %g, %g: mass %.12g, want %.12g", tc.lower, tc.upper, tc.mu, tc.s, got, tc.mass)
		}
	}
	lower := 1e6
	mean, slope := batchLognormal{}.moments(lower, math.Inf(1), 0, 0.1)
	if want := lower * (1 + 0.01/math.Log(lower)); math.Abs(mean-want) > 1e-5*lower || slope != 0 {
		t.Errorf("far tail: mean %.10g, slope %g; want %.10g, 0", mean, slope, want)
	}
}

// TestLognormalShape: the lognormal kernel's shape on (1, 2] at mu 0.3, s
// 0.5 has CDF (Φ((ln 1.5 − 0.3)/0.5) − Φ(−0.6)) / (Φ((ln 2 − 0.3)/0.5) −
// Φ(−0.6)) = 0.6065432653444833 at 1.5 (Python's math.erfc), and its
// quantiles invert it.
func TestLognormalShape(t *testing.T) {
	sh := batchLognormal{}.shape(1, 2, 0.3, 0.5)
	if got := sh.cdf(1.5); math.Abs(got-0.6065432653444833) > 1e-12 {
		t.Errorf("cdf(1.5) = %.15g, want 0.6065432653444833", got)
	}
	for _, f := range []float64{0.01, 0.3, 0.6065432653444833, 0.99} {
		if v := sh.quantile(f); v <= 1 || v > 2 || math.Abs(sh.cdf(v)-f) > 1e-9 {
			t.Errorf("quantile(%g) = %g, whose cdf is %g", f, v, sh.cdf(v))
		}
	}
	if v := sh.quantile(0.6065432653444833); math.Abs(v-1.5) > 1e-9 {
		t.Errorf("quantile at cdf(1.5) = %.12g, want 1.5", v)
	}
}

// warmingQueue is a saturated server whose queue builds: 4 batches of 4
// requests a scrape interval on average, each batch's level rising from
// 0.45 to 0.8 s over the first 8 s of 30 (the queue filling), then steady
// at 0.6 s, batches ±3 % about the level and requests ±7 % about their
// batch, both lognormal. The steady intervals hold one bucket, (0.5, 0.8],
// so few intervals straddle a bound; the build-up's put their slow
// requests both sides of 0.8 s. The self-consistency test's 32 clients on
// 8 slots, as the estimator saw them.
func warmingQueue(seed uint64) (HistogramSeries, []float64) {
	return seededSeries(seed, vllmE2EBounds, 90, func(r *rand.Rand, t int) []float64 {
		level := 0.6
		if t < 24 {
			level = 0.45 + 0.35*float64(t)/24
		}
		var out []float64
		for range poisson(r, 4) {
			base := level * math.Exp(0.03*r.NormFloat64())
			for range 4 {
				out = append(out, base*math.Exp(0.07*r.NormFloat64()))
			}
		}
		return out
	})
}

// TestBatchLawReadsWarmingQueue: with the straddling share at a third the
// gate turned the warming queue away, and least squares read its p90 3.5 %
// low and p99 17 % high (mean errors over these 8 runs 0.32 / 3.54 / 17.12
// %); at a fifth, the normal kernel read them within 0.19 / 0.58 / 0.94
// %, and the lognormal kernel, which the likelihood prefers in 7 of the 8,
// within 0.11 / 0.26 / 0.48 %.
func TestBatchLawReadsWarmingQueue(t *testing.T) {
	if lognormal := batchLawReads(t, warmingQueue, [3]float64{0.003, 0.004, 0.008}); lognormal < 6 {
		t.Errorf("the lognormal kernel read %d of 8 runs, want at least 6", lognormal)
	}
}

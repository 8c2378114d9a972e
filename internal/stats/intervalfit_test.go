package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// oneShot is a series of two scrapes: nothing, then the given cumulative
// counts and sum.
func oneShot(bounds, cumulative []float64, sum float64) HistogramSeries {
	return HistogramSeries{
		Bounds:  bounds,
		Buckets: [][]float64{make([]float64, len(bounds)), cumulative},
		Sum:     []float64{0, sum},
		Count:   []float64{0, cumulative[len(cumulative)-1]},
	}
}

func TestIntervalFitHandComputed(t *testing.T) {
	inf := math.Inf(1)
	qs := []float64{0.10, 0.50, 0.99}
	tests := []struct {
		name string
		h    HistogramSeries
		want []float64
	}{
		// Mean at the midpoint: uniform; 10 observations at 0.05, 0.15, …
		// p10: rank 0.9, between 0.05 and 0.15; p50: rank 4.5.
		{"single bucket, uniform", oneShot([]float64{1, inf}, []float64{10, 10}, 5), []float64{0.14, 0.5, 0.941}},
		// All four above 1 with mean 3: an exponential tail 1 + Exp(θ = 2);
		// observation i at 1 − 2·ln(1 − (i+0.5)/4).
		{"all in +Inf", oneShot([]float64{1, inf}, []float64{0, 4}, 12),
			[]float64{1.2670627852 + 0.3*(1.9400072585-1.2670627852), (1.9400072585 + 2.9616585060) / 2, 2.9616585060 + 0.97*(5.1588830834-2.9616585060)}},
		{"all zero", oneShot([]float64{0.5, 1, inf}, []float64{7, 7, 7}, 0), []float64{0, 0, 0}},
		// One observation: its bucket's mean is the sum itself.
		{"one observation", oneShot([]float64{0.25, 0.5, inf}, []float64{0, 1, 1}, 0.37), []float64{0.37, 0.37, 0.37}},
		// A trillion observations, uniform: the same as ten, without
		// materialising any.
		{"huge counts", oneShot([]float64{1, inf}, []float64{1e12, 1e12}, 0.5e12), []float64{0.1, 0.5, 0.99}},
		// A le="0" bucket (a queue time that was 0 for 6 requests): the
		// 6 zeros, then 4 uniform in (0, 1] with mean 0.5 at 0.125, 0.375,
		// 0.625, 0.875. p99: rank 8.91, 0.625 + 0.91·0.25.
		{"a le=0 bucket", oneShot([]float64{0, 1, inf}, []float64{6, 10, 10}, 2), []float64{0, 0, 0.8525}},
		// A negative first bound: 2 at −1, then 2 uniform in (−1, 0]
		// with mean −0.5, at −0.75 and −0.25. p50: rank 1.5, between −1
		// and −0.75; p99: rank 2.97.
		{"a negative first bound", oneShot([]float64{-1, 0, inf}, []float64{2, 4, 4}, -3), []float64{-1, -0.875, -0.75 + 0.97*0.5}},
		{"all at a negative first bound", oneShot([]float64{-2, 0, inf}, []float64{3, 3, 3}, -6), []float64{-2, -2, -2}},
	}
	for _, tc := range tests {
		got := IntervalFit{}.Quantiles(tc.h, qs)
		for i := range qs {
			if math.Abs(got[i]-tc.want[i]) > 1e-7*math.Max(1, math.Abs(tc.want[i])) {
				t.Errorf("%s: q%.2f = %.10g, want %.10g", tc.name, qs[i], got[i], tc.want[i])
			}
		}
	}
	for name, h := range map[string]HistogramSeries{
		"no observations":  oneShot([]float64{1, inf}, []float64{0, 0}, 0),
		"only a +Inf":      oneShot([]float64{inf}, []float64{5}, 10),
		"NaN sum":          oneShot([]float64{1, inf}, []float64{3, 3}, math.NaN()),
		"a counter reset":  {Bounds: []float64{1, inf}, Buckets: [][]float64{{5, 5}, {1, 1}}, Sum: []float64{4, 1}, Count: []float64{5, 1}},
		"no scrape at all": {Bounds: []float64{1, inf}},
	} {
		if got := (IntervalFit{}).Quantiles(h, qs); !math.IsNaN(got[1]) {
			t.Errorf("%s: %v, want no estimate", name, got)
		}
	}
}

// TestIntervalFitLearnsWithoutSingleBucketIntervals: every interval mixes
// two buckets (0.9 in (0,1], 1.1 in (1,2]) in different proportions, so
// AIPerf learns nothing and falls back to midpoints, while the fit recovers
// both means: the lower bucket piles against 1, and p25 is near 0.9.
func TestIntervalFitLearnsWithoutSingleBucketIntervals(t *testing.T) {
	inf := math.Inf(1)
	h := HistogramSeries{Bounds: []float64{1, 2, inf}, Buckets: [][]float64{{0, 0, 0}}, Sum: []float64{0}, Count: []float64{0}}
	var a, b float64
	for _, mix := range [][2]float64{{1000, 2000}, {2000, 1000}, {3000, 1000}, {1000, 3000}, {1500, 1700}} {
		a, b = a+mix[0], b+mix[1]
		h.Buckets = append(h.Buckets, []float64{a, a + b, a + b})
		h.Sum = append(h.Sum, 0.9*a+1.1*b)
		h.Count = append(h.Count, a+b)
	}
	m, _ := newBucketModel(h.Bounds, h.Buckets[len(h.Buckets)-1], a+b, 0.9*a+1.1*b)
	m.fitSegments(h)
	if math.Abs(m.mean[0]-0.9) > 1e-3 || math.Abs(m.mean[1]-1.1) > 1e-3 {
		t.Fatalf("fitted means %v, want 0.9 and 1.1", m.mean)
	}
	if learned := aiperfLearn(h); len(learned) != 0 {
		t.Fatalf("AIPerf learned %v from mixed intervals", learned)
	}
	// 8500 of 17200 observations are in (0,1], so p25 is inside it.
	if p := (IntervalFit{}).Quantiles(h, []float64{0.25})[0]; p < 0.85 || p > 1 {
		t.Fatalf("p25 %v, want near 0.9", p)
	}
}

// TestIntervalFitLeavesImpossibleSums: the sum was read 4,000 ahead of
// the buckets at one scrape, so one interval sums to more than its
// buckets' upper bounds allow and the next to less than their lower
// bounds do; or that scrape's count is NaN. Either way those two
// intervals carry nothing; the other four, exact, give the means 0.8 and
// 1.3 back. Fitted with them, the means moved.
func TestIntervalFitLeavesImpossibleSums(t *testing.T) {
	inf := math.Inf(1)
	for name, spoil := range map[string]func(h *HistogramSeries){
		// Scrape 3 closes the (2000, 2000) interval: 4,200, at most
		// 6,000; the (4000, 1000) one after it sums to 4,500, at least
		// 1,000.
		"sum read ahead": func(h *HistogramSeries) { h.Sum[3] += 4000 }, // 8,200 > 6,000, and then 500 < 1,000
		"NaN count":      func(h *HistogramSeries) { h.Count[3] = math.NaN() },
	} {
		h := HistogramSeries{Bounds: []float64{1, 2, inf}, Buckets: [][]float64{{0, 0, 0}}, Sum: []float64{0}, Count: []float64{0}}
		var a, b float64
		for _, mix := range [][2]float64{{3000, 1000}, {1000, 3000}, {2000, 2000}, {4000, 1000}, {1000, 4000}, {3000, 3000}} {
			a, b = a+mix[0], b+mix[1]
			h.Buckets = append(h.Buckets, []float64{a, a + b, a + b})
			h.Sum = append(h.Sum, 0.8*a+1.3*b)
			h.Count = append(h.Count, a+b)
		}
		spoil(&h)
		m, _ := newBucketModel(h.Bounds, h.Buckets[len(h.Buckets)-1], a+b, 0.8*a+1.3*b)
		m.fitSegments(h)
		if m.used != 4 {
			t.Errorf("%s: the fit used %d intervals, want the 4 possible ones", name, m.used)
		}
		if math.Abs(m.mean[0]-0.8) > 1e-6 || math.Abs(m.mean[1]-1.3) > 1e-6 {
			t.Errorf("%s: fitted means %v, want 0.8 and 1.3", name, m.mean)
		}
	}
}

// TestIntervalFitStaysInsideTheCounts checks on random histograms that
// every estimate lies between the bounds of the buckets holding the two
// order statistics numpy's percentile interpolates between, and that the
// estimates never decrease with p.
func TestIntervalFitStaysInsideTheCounts(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	bounds := []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, math.Inf(1)}
	qs := []float64{0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99}
	for trial := range 300 {
		h := HistogramSeries{Bounds: bounds, Buckets: [][]float64{make([]float64, len(bounds))}, Sum: []float64{0}, Count: []float64{0}}
		cum := make([]float64, len(bounds))
		sum, count := 0.0, 0.0
		scale := math.Exp(rng.NormFloat64() * 2)
		for range 1 + rng.IntN(30) {
			for range rng.IntN(20) {
				v := 0.05 * scale * math.Exp(rng.NormFloat64())
				for i, b := range bounds {
					if v <= b {
						cum[i]++
					}
				}
				sum += v
				count++
			}
			h.Buckets = append(h.Buckets, slices.Clone(cum))
			h.Sum = append(h.Sum, sum)
			h.Count = append(h.Count, count)
		}
		got := IntervalFit{}.Quantiles(h, qs)
		if count == 0 {
			continue
		}
		checkInsideCounts(t, trial, bounds, cum, qs, got)
	}
}

// checkInsideCounts fails the test unless every estimate got[i] of
// quantile qs[i] lies between the bounds of the buckets holding the two
// order statistics numpy's percentile interpolates between (cum: the
// run's cumulative bucket counts), and the estimates never decrease. The
// first bucket starts at 0, or at its bound when that is negative, as
// histogram_quantile takes it.
func checkInsideCounts(t *testing.T, trial int, bounds, cum, qs, got []float64) {
	t.Helper()
	count := cum[len(cum)-1]
	bucketOf := func(k float64) (float64, float64) { // the k-th order statistic's bucket
		lower := math.Min(0, bounds[0])
		for i, c := range cum {
			if k < c {
				return lower, bounds[i]
			}
			lower = bounds[i]
		}
		return lower, math.Inf(1)
	}
	for i, q := range qs {
		r := q * (count - 1)
		lo, _ := bucketOf(math.Floor(r))
		_, hi := bucketOf(math.Ceil(r))
		if math.IsNaN(got[i]) || got[i] < lo-1e-12 || got[i] > hi+1e-12 {
			t.Fatalf("trial %d: p%g = %v outside [%v, %v] (counts %v)", trial, q*100, got[i], lo, hi, cum)
		}
		if i > 0 && got[i] < got[i-1]-1e-12 {
			t.Fatalf("trial %d: p%g = %v below p%g = %v", trial, q*100, got[i], qs[i-1]*100, got[i-1])
		}
	}
}

func TestTruncExpRate(t *testing.T) {
	for _, m := range []float64{1e-6, 0.01, 0.2, 0.5, 0.7, 0.99, 1 - 1e-6} {
		if got := truncExpMean(truncExpRate(m)); math.Abs(got-m) > 1e-9 {
			t.Errorf("mean %v: rate %v gives mean %v", m, truncExpRate(m), got)
		}
	}
}

func TestBoxQP(t *testing.T) {
	// min ½(x²+y²) − (3x + y) with 0 ≤ x ≤ 1, 0 ≤ y ≤ 5, x + y = 2:
	// unconstrained x = 3 is capped at 1, so y = 1.
	got := boxQP([][]float64{{1, 0}, {0, 1}}, []float64{3, 1}, []float64{0, 0}, []float64{1, 5}, []float64{1, 1}, 2)
	if math.Abs(got[0]-1) > 1e-12 || math.Abs(got[1]-1) > 1e-12 {
		t.Fatalf("got %v, want [1 1]", got)
	}
	// Interior: min ½(x²+y²) − x with x + y = 2: x − 1 = y, so x = 1.5, y = 0.5.
	got = boxQP([][]float64{{1, 0}, {0, 1}}, []float64{1, 0}, []float64{0, 0}, []float64{5, 5}, []float64{1, 1}, 2)
	if math.Abs(got[0]-1.5) > 1e-12 || math.Abs(got[1]-0.5) > 1e-12 {
		t.Fatalf("got %v, want [1.5 0.5]", got)
	}
}

// TestTwoMomentShape: the maximum-entropy shape reproduces the mean and
// variance it was built for, for a peak inside the bucket (a variance
// below the exponential shape's) and a U-shape (above it); a variance
// that says nothing new leaves the exponential shape.
func TestTwoMomentShape(t *testing.T) {
	for _, tc := range []struct{ mean, variance float64 }{
		{0.5, 0.01}, {0.3, 0.004}, {0.7, 0.02}, {0.5, 0.15}, {0.2, 0.03}, {0.6, 1e-4}, {0.45, 1e-6},
	} {
		s := newTwoMomentShape(0, 1, tc.mean, tc.variance)
		if s.table == nil && !s.normal {
			t.Fatalf("mean %v variance %v: no two-moment shape", tc.mean, tc.variance)
		}
		// Moments of the implied sample of 100,000 quantiles.
		const n = 100000
		var m1, m2 float64
		for i := range n {
			x := s.quantile((float64(i) + 0.5) / n)
			m1 += x
			m2 += x * x
		}
		m1 /= n
		v := m2/n - m1*m1
		if math.Abs(m1-tc.mean) > 2e-3 || math.Abs(v-tc.variance) > 0.03*tc.variance || s.normal != (tc.variance < 1e-3) {
			t.Errorf("mean %v variance %v: shape has mean %v variance %v", tc.mean, tc.variance, m1, v)
		}
	}
	if s := newTwoMomentShape(0, 1, 0.5, 1.0/12); s.table != nil {
		t.Error("the uniform's own variance should keep the exponential (uniform) shape")
	}
	if s := newTwoMomentShape(0, 1, 0.5, math.NaN()); s.table != nil {
		t.Error("an unknown variance should keep the exponential shape")
	}
}

// poisson draws a Poisson count with mean lambda (Knuth's method; lambda
// stays small here).
func poisson(r *rand.Rand, lambda float64) int {
	limit, k, p := math.Exp(-lambda), 0, r.Float64()
	for p > limit {
		k++
		p *= r.Float64()
	}
	return k
}

// TestIntervalFitTails: where the data show the spread, the fit uses it.
//   - An open last bucket under a hard ceiling: prompt lengths uniform up
//     to a model's 8,192-token limit, in 1-2-5 buckets ending at 5,000,
//     leave 39 % of the observations in +Inf. An exponential tail with the
//     right mean put p99 at about 10,700 tokens, beyond anything observed;
//     the generalized Pareto tail matched to the fitted variance ends near
//     the ceiling.
//   - Inter-token latencies of 10 ± 0.4 ms either side of the 10 ms bound,
//     666 per interval: the two buckets' means are told apart only by the
//     mix's variation between intervals, and a prior at each bucket's
//     middle pulled them 0.1 ms apart too far, p99 6 % high, until scaled
//     by the residuals' dispersion.
func TestIntervalFitTails(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		name      string
		bounds    []float64
		intervals int
		draw      func(r *rand.Rand, t int) []float64
		tolerance float64 // relative, at p50, p90 and p99
		ceiling   float64 // no estimate above it
	}{
		{"tail under a ceiling", []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, inf}, 360,
			func(r *rand.Rand, _ int) []float64 {
				out := make([]float64, poisson(r, 3.33))
				for i := range out {
					out[i] = math.Ceil(8192 * r.Float64())
				}
				return out
			}, 0.03, 8192},
		{"tight pair at a bound", []float64{0.01, 0.025, 0.05, 0.075, 0.1, inf}, 180,
			func(r *rand.Rand, _ int) []float64 {
				out := make([]float64, 600+poisson(r, 66))
				for i := range out {
					out[i] = 0.010 + 0.0004*r.NormFloat64()
				}
				return out
			}, 0.035, inf},
	}
	qs := []float64{0.5, 0.9, 0.99}
	for _, tc := range tests {
		h, all := simulatedSeries(tc.bounds, tc.intervals, tc.draw)
		got := IntervalFit{}.Quantiles(h, qs)
		for i, q := range qs {
			exact := PercentileSorted(all, 100*q)
			if err := math.Abs(got[i]-exact) / exact; err > tc.tolerance || got[i] > tc.ceiling {
				t.Errorf("%s: p%g = %.6g, exact %.6g (%.1f %% off)", tc.name, 100*q, got[i], exact, 100*err)
			}
		}
	}
}

// TestTailShape: the +Inf bucket's law is the generalized Pareto one with
// the fitted mean and variance: uniform on [lower, lower + 2θ] for a
// variance of θ²/3 (ξ = −1), the exponential for θ², and ξ = ⅓, σ = ⅔·θ
// for 3·θ² (quantile σ/ξ·((1−f)^(−ξ) − 1)).
func TestTailShape(t *testing.T) {
	for _, tc := range []struct {
		mean, variance float64
		f, want        float64
	}{
		{11, 1.0 / 3, 0.5, 11},
		{11, 1.0 / 3, 0.99, 11.98},
		{11, 1, 0.5, 10 + math.Ln2},
		{11, math.NaN(), 0.9, 10 + math.Log(10)},
		{11, 3, 0.5, 10 + 2*(math.Cbrt(2)-1)},
		{11, 3, 0.99, 10 + 2*(math.Cbrt(100)-1)},
		{11, 0, 0.3, 11}, // no spread: all at the mean
	} {
		s := newTwoMomentShape(10, math.Inf(1), tc.mean, tc.variance)
		if got := s.quantile(tc.f); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("mean %v variance %v: q(%v) = %.12g, want %.12g", tc.mean, tc.variance, tc.f, got, tc.want)
		}
		if c := s.cdf(tc.want); tc.variance > 0 && math.Abs(c-tc.f) > 1e-9 {
			t.Errorf("mean %v variance %v: cdf(%v) = %v, want %v", tc.mean, tc.variance, tc.want, c, tc.f)
		}
	}
}

// TestIntervalFitKeepsWhatTheSumsShow: an observation alone in its
// interval is known exactly, and the estimate keeps it. Two of them on
// vLLM's TTFT layout, 0.0102353 s in (0.01, 0.02] and 0.0011882 s in
// (0.001, 0.005]: their maximum read 0.01, the bucket's bound, before the
// estimates were held within what the sums allow (FuzzAllowedRange's
// find).
func TestIntervalFitKeepsWhatTheSumsShow(t *testing.T) {
	slow, fast := 0.01+0.01*6/255.0, 0.001+0.004*12/255.0
	h := seriesOf(fuzzLayouts[0], [][]float64{{slow}, {fast}})
	got := IntervalFit{}.Quantiles(h, []float64{0, 0.5, 1})
	for i, want := range []float64{fast, (fast + slow) / 2, slow} {
		// Within the sums' rounding, which the range allows for: 1e-9 of
		// the cumulative sums.
		if math.Abs(got[i]-want) > 1e-10 {
			t.Errorf("q %d: %.10g, want %.10g", i, got[i], want)
		}
	}
}

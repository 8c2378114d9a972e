package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestErrorSpreadIsCalibrated: for a law the test knows (a TTFT of
// 50 ± 12 ms, normal, 3 requests per interval, 40 intervals, in vLLM's
// buckets), interval-fit's real root-mean-square error at each quantile
// is measured over 60 fresh runs of that law. ErrorSpread, which sees one
// run only and takes its fitted laws as the truth, must land within a
// factor of 2.5 of it on each of 4 runs, and, seeded alike, give the
// same answer twice.
func TestErrorSpreadIsCalibrated(t *testing.T) {
	qs := []float64{0.5, 0.9, 0.99}
	run := func(seed uint64) (HistogramSeries, []float64) {
		return seededSeries(seed, vllmTTFTBounds, 40, func(r *rand.Rand, _ int) []float64 {
			out := make([]float64, 3)
			for i := range out {
				out[i] = math.Max(0.05+0.012*r.NormFloat64(), 0.002)
			}
			return out
		})
	}
	actual := make([]float64, len(qs))
	const fresh = 60
	for seed := range uint64(fresh) {
		h, sample := run(1000 + seed)
		est := IntervalFit{}.Quantiles(h, qs)
		for i, q := range qs {
			exact := PercentileSorted(sample, 100*q)
			e := (est[i] - exact) / exact
			actual[i] += e * e / fresh
		}
	}
	for i := range actual {
		actual[i] = math.Sqrt(actual[i])
	}
	t.Logf("real RMS error p50 / p90 / p99: %.2f / %.2f / %.2f %%", 100*actual[0], 100*actual[1], 100*actual[2])
	for seed := range uint64(4) {
		h, _ := run(seed + 1)
		got := IntervalFit{}.ErrorSpread(h, qs, 40, seed)
		t.Logf("run %d: ErrorSpread %.2f / %.2f / %.2f %%", seed+1, 100*got[0], 100*got[1], 100*got[2])
		for i, q := range qs {
			if !(got[i] >= actual[i]/2.5 && got[i] <= actual[i]*2.5) {
				t.Errorf("run %d, p%g: ErrorSpread %.2f %%, the real RMS error %.2f %%: not within a factor of 2.5", seed+1, 100*q, 100*got[i], 100*actual[i])
			}
		}
		if again := (IntervalFit{}).ErrorSpread(h, qs, 40, seed); again[2] != got[2] {
			t.Errorf("run %d: %v, then %v with the same seed", seed+1, got, again)
		}
	}
}

// TestErrorSpreadWhereNothingIsOpen: every interval holds one request, so
// each interval's sum is its observation and the estimate is the sample
// itself; ErrorSpread is then 0 but for the laws' numerical width
// (measured 3·10⁻⁵): below 0.01 %. A series with no observations, with
// an atom at a le="0" bound, or with more observations in its intervals
// than a replicate draws, has none.
func TestErrorSpreadWhereNothingIsOpen(t *testing.T) {
	h, _ := seededSeries(3, vllmE2EBounds, 30, func(r *rand.Rand, _ int) []float64 {
		return []float64{0.6 + 0.3*r.Float64()}
	})
	for i, e := range (IntervalFit{}).ErrorSpread(h, []float64{0.5, 0.9, 0.99}, 20, 1) {
		if !(e < 1e-4) {
			t.Errorf("quantile %d: spread %g, want below 1e-4: every observation is known", i, e)
		}
	}
	empty := oneShot([]float64{1, math.Inf(1)}, []float64{0, 0}, 0)
	withAtom := oneShot([]float64{0, 1, math.Inf(1)}, []float64{6, 10, 10}, 2)
	// 5 observations from first scrape to last, but 200,000 in an
	// interval before a reset: more than a replicate draws.
	hidden := HistogramSeries{Bounds: []float64{1, math.Inf(1)},
		Buckets: [][]float64{{0, 0}, {2e5, 2e5}, {0, 0}, {5, 5}}, Sum: []float64{0, 1e5, 0, 2.5}, Count: []float64{0, 2e5, 0, 5}}
	for name, h := range map[string]HistogramSeries{"empty": empty, "an atom": withAtom, "a reset hiding 200,000": hidden} {
		if e := (IntervalFit{}).ErrorSpread(h, []float64{0.5}, 20, 1); !math.IsNaN(e[0]) {
			t.Errorf("%s: %v, want NaN", name, e)
		}
	}
}

package search

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/llmbench/llmbench/internal/sla"
)

func near(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol || (math.IsInf(a, 0) && a == b)
}

// TestQuantileRanks: hand-computed binomial tails. Bin(10, ½):
// P(B ≤ 0) = 1/1024, P(B ≤ 1) = 11/1024 ≈ 0.0107, P(B ≤ 2) = 56/1024 ≈ 0.0547,
// so at 90 % and 95 % (tails 0.05, 0.025) the ranks are 2 and 9. Bin(5, ½):
// P(B = 0) = 1/32 > 0.025, no finite end. Bin(50, 0.95): P(B = 50) =
// 0.95^50 ≈ 0.077 > 0.025, no finite upper end; P(B ≤ 43) ≈ 0.0118 and
// P(B ≤ 44) ≈ 0.0378, so the lower rank is 44.
func TestQuantileRanks(t *testing.T) {
	for _, c := range []struct {
		n           int
		q, level    float64
		wantL, wanU int
	}{
		{10, 0.5, 0.90, 2, 9},
		{10, 0.5, 0.95, 2, 9},
		{5, 0.5, 0.95, 0, 6},
		{50, 0.95, 0.95, 44, 51},
		{0, 0.5, 0.95, 0, 1},
		{10, 0, 0.95, 0, 11},
	} {
		l, u := quantileRanks(c.n, c.q, c.level)
		if l != c.wantL || u != c.wanU {
			t.Errorf("n=%d q=%g level=%g: ranks %d, %d; want %d, %d", c.n, c.q, c.level, l, u, c.wantL, c.wanU)
		}
	}
}

// TestQuantileCI reads the ranks off the samples, leaves the input
// alone, and reports ok only with two finite ends.
func TestQuantileCI(t *testing.T) {
	xs := []float64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}
	orig := slices.Clone(xs)
	lo, hi, ok := QuantileCI(xs, 0.5, 0.95)
	if lo != 2 || hi != 9 || !ok {
		t.Errorf("median of 1..10: [%g, %g] ok=%v, want [2, 9] true", lo, hi, ok)
	}
	if !slices.Equal(xs, orig) {
		t.Errorf("input modified: %v", xs)
	}
	lo, hi, ok = QuantileCI(xs[:5], 0.5, 0.95)
	if !math.IsInf(lo, -1) || !math.IsInf(hi, 1) || ok {
		t.Errorf("median of 5: [%g, %g] ok=%v, want unbounded, false", lo, hi, ok)
	}
	big := make([]float64, 50)
	for i := range big {
		big[i] = float64(i + 1)
	}
	lo, hi, ok = QuantileCI(big, 0.95, 0.95)
	if lo != 44 || !math.IsInf(hi, 1) || ok {
		t.Errorf("p95 of 50: [%g, %g] ok=%v, want [44, +Inf) false", lo, hi, ok)
	}
}

// TestMeanCI: {1..5}: mean 3, s = √2.5, t(0.975, 4) = 2.7764451,
// half-width 2.7764451·1.5811388/√5 = 1.9632432.
func TestMeanCI(t *testing.T) {
	lo, hi, ok := MeanCI([]float64{1, 2, 3, 4, 5}, 0.95)
	if !ok || !near(lo, 3-1.9632432, 1e-6) || !near(hi, 3+1.9632432, 1e-6) {
		t.Errorf("[%g, %g] ok=%v, want 3 ± 1.9632432", lo, hi, ok)
	}
	if lo, hi, ok := MeanCI([]float64{4}, 0.95); ok || !math.IsInf(lo, -1) || !math.IsInf(hi, 1) {
		t.Errorf("one sample: [%g, %g] ok=%v, want unbounded", lo, hi, ok)
	}
	if lo, hi, _ := MeanCI([]float64{7, 7, 7}, 0.95); lo != 7 || hi != 7 {
		t.Errorf("constant: [%g, %g], want [7, 7]", lo, hi)
	}
}

// TestProportionCI against closed forms and published Clopper–Pearson
// values: 0/10 → [0, 1 − 0.025^(1/10)] = [0, 0.3084971]; 10/10 →
// [0.025^(1/10), 1] = [0.6915029, 1]; 5/10 → [0.1870860, 0.8129140].
func TestProportionCI(t *testing.T) {
	for _, c := range []struct {
		k, n   int
		lo, hi float64
	}{
		{0, 10, 0, 0.3084971},
		{10, 10, 0.6915029, 1},
		{5, 10, 0.1870860, 0.8129140},
		{0, 0, 0, 1},
	} {
		lo, hi := ProportionCI(c.k, c.n, 0.95)
		if !near(lo, c.lo, 1e-6) || !near(hi, c.hi, 1e-6) {
			t.Errorf("%d/%d: [%.7f, %.7f], want [%.7f, %.7f]", c.k, c.n, lo, hi, c.lo, c.hi)
		}
	}
}

func mustFilter(t *testing.T, s string) sla.Filter {
	t.Helper()
	f, err := sla.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func flags(n, ones int, one float64) []float64 {
	xs := make([]float64, n)
	for i := range ones {
		xs[i] = one
	}
	return xs
}

// TestDecide: verdicts on 1..1000 (p95 point 950.05 by numpy's rule, the
// interval roughly [936, 963]) and on 0/1 flags.
func TestDecide(t *testing.T) {
	seq := make([]float64, 1000)
	for i := range seq {
		seq[i] = float64(1000 - i)
	}
	for _, c := range []struct {
		name    string
		filter  string
		samples []float64
		want    Verdict
		point   float64
	}{
		{"p95 well under", "time_to_first_token:p95:lt:1000", seq, Pass, 950.05},
		{"p95 well over", "time_to_first_token:p95:lt:900", seq, Fail, 950.05},
		{"p95 within the interval", "time_to_first_token:p95:lt:950", seq, Uncertain, 950.05},
		{"p95 gt", "output_token_throughput:p95:gt:900", seq, Pass, 950.05},
		{"no samples", "time_to_first_token:p95:lt:1000", nil, Fail, math.NaN()},
		{"NaN left out", "time_to_first_token:p50:lt:3", []float64{math.NaN(), 1, 2, 2}, Uncertain, 2},
		{"max decided on the point", "request_latency:max:le:1000", seq, Pass, 1000},
		{"min decided on the point", "request_latency:min:gt:1", seq, Fail, 1},
		{"avg", "request_latency:avg:lt:520", seq, Pass, 500.5},
		{"avg, too close", "request_latency:avg:lt:510", seq, Uncertain, 500.5},
		// Clopper–Pearson upper end of 0/1000 is 0.368 %.
		{"no errors", "request_error_rate:avg:lt:1", flags(1000, 0, 100), Pass, 0},
		// 20/1000: lower end ≈ 1.22 %.
		{"2 % errors", "request_error_rate:avg:lt:1", flags(1000, 20, 100), Fail, 2},
		{"1 % errors", "request_error_rate:avg:lt:1", flags(1000, 10, 100), Uncertain, 1},
		// 990/1000 good: lower end ≈ 98.17 %.
		{"good fraction", "good_request_fraction:avg:ge:0.95", flags(1000, 990, 1), Pass, 0.99},
		{"good fraction, few", "good_request_fraction:avg:ge:0.95", flags(20, 19, 1), Uncertain, 0.95},
	} {
		d := Decide(mustFilter(t, c.filter), c.samples, 0.95)
		if d.Verdict != c.want || !(near(d.Point, c.point, 1e-9) || math.IsNaN(c.point) && math.IsNaN(d.Point)) {
			t.Errorf("%s: %v point %g [%g, %g], want %v point %g", c.name, d.Verdict, d.Point, d.Lo, d.Hi, c.want, c.point)
		}
		if !math.IsNaN(d.Point) && (d.Lo > d.Point || d.Hi < d.Point) {
			t.Errorf("%s: point %g outside [%g, %g]", c.name, d.Point, d.Lo, d.Hi)
		}
	}
}

// TestQuantileCICoverage simulates 2 000 samples per case from an
// exponential and a lognormal population and counts how often the 95 %
// interval holds the true quantile: it must be at least 94 %. Cases
// where n is too small for a finite end still count (the infinite end
// covers by construction); okShare says how often both ends were finite.
func TestQuantileCICoverage(t *testing.T) {
	const reps, level = 2000, 0.95
	type dist struct {
		name     string
		draw     func(*rand.Rand) float64
		quantile func(q float64) float64
	}
	dists := []dist{
		{"exponential", func(r *rand.Rand) float64 { return r.ExpFloat64() }, func(q float64) float64 { return -math.Log1p(-q) }},
		{"lognormal", func(r *rand.Rand) float64 { return math.Exp(0.5 * r.NormFloat64()) }, func(q float64) float64 { return math.Exp(0.5 * normalQuantile(q)) }},
	}
	qs := []float64{0.5, 0.95, 0.99}
	rng := rand.New(rand.NewPCG(2026, 12))
	for _, d := range dists {
		for _, n := range []int{50, 200, 1000} {
			// One sample per repetition serves the three quantiles: each
			// quantile's count is still over 2 000 independent samples.
			xs := make([]float64, n)
			covered, finiteBoth := make([]int, len(qs)), make([]int, len(qs))
			truth := make([]float64, len(qs))
			for j, q := range qs {
				truth[j] = d.quantile(q)
			}
			for range reps {
				for i := range xs {
					xs[i] = d.draw(rng)
				}
				slices.Sort(xs)
				for j, q := range qs {
					lo, hi, ok := quantileCISorted(xs, q, level)
					if lo <= truth[j] && truth[j] <= hi {
						covered[j]++
					}
					if ok {
						finiteBoth[j]++
					}
				}
			}
			for j, q := range qs {
				share := float64(covered[j]) / reps
				t.Logf("%s n=%d q=%.2f: coverage %.4f, both ends finite %.2f", d.name, n, q, share, float64(finiteBoth[j])/reps)
				if share < 0.94 {
					t.Errorf("%s n=%d q=%.2f: coverage %.4f < 0.94", d.name, n, q, share)
				}
			}
		}
	}
}

// normalQuantile is the standard normal quantile by bisection on erf.
func normalQuantile(p float64) float64 {
	lo, hi := -10.0, 10.0
	for range 200 {
		mid := (lo + hi) / 2
		if 0.5*math.Erfc(-mid/math.Sqrt2) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// TestBinomialPMF: sums to 1 and matches C(4,k)/16 for Bin(4, ½), and
// stays finite where (1−p)^n underflows.
func TestBinomialPMF(t *testing.T) {
	pmf := binomialPMF(make([]float64, 5), 4, 0.5)
	for k, want := range []float64{1, 4, 6, 4, 1} {
		if !near(pmf[k], want/16, 1e-12) {
			t.Errorf("Bin(4, ½)[%d] = %g, want %g", k, pmf[k], want/16)
		}
	}
	big := binomialPMF(make([]float64, 200001), 200000, 0.99)
	var s float64
	for _, v := range big {
		s += v
	}
	if !near(s, 1, 1e-9) {
		t.Errorf("Bin(200000, 0.99) sums to %g", s)
	}
}

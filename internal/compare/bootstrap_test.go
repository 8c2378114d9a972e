package compare

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/llmbench/llmbench/internal/stats"
)

// lognormal draws n values around median m with log-spread sigma.
func lognormal(r *rand.Rand, n int, m, sigma float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = m * math.Exp(sigma*r.NormFloat64())
	}
	return out
}

// TestResampleMatchesSort: the counting resample's percentiles are those
// of the same resample written out and sorted.
func TestResampleMatchesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 3, 7, 100, 1001} {
		values := lognormal(r, n, 30, 0.5)
		values[0] = values[n-1] // a tie
		s := newResampler(values, bootPercentiles)
		src := rand.NewPCG(3, uint64(n))
		got := make([]float64, len(bootPercentiles))
		for range 20 {
			s.resample(src, got)
			var drawn []float64
			for i, c := range s.counts {
				for range c {
					drawn = append(drawn, s.x[i])
				}
			}
			if len(drawn) != n {
				t.Fatalf("n=%d: resample has %d values", n, len(drawn))
			}
			slices.Sort(drawn)
			for j, p := range bootPercentiles {
				if want := stats.PercentileSorted(drawn, p); got[j] != want {
					t.Fatalf("n=%d p%g: got %v, want %v", n, p, got[j], want)
				}
			}
		}
		sorted := slices.Sorted(slices.Values(values))
		s.point(got)
		for j, p := range bootPercentiles {
			if want := stats.PercentileSorted(sorted, p); got[j] != want {
				t.Errorf("n=%d p%g of the values: got %v, want %v", n, p, got[j], want)
			}
		}
	}
}

// TestResampleUniform: every value is drawn equally often (1 per
// resample on average); a biased index mapping would show here.
func TestResampleUniform(t *testing.T) {
	const n, rounds = 7, 20000
	s := newResampler([]float64{1, 2, 3, 4, 5, 6, 7}, bootPercentiles)
	src := rand.NewPCG(5, 6)
	var total [n]int
	out := make([]float64, len(bootPercentiles))
	for range rounds {
		s.resample(src, out)
		for i, c := range s.counts {
			total[i] += int(c)
		}
	}
	// Each total is Binomial(n·rounds, 1/n): mean 20000, sd ≈ 130.
	for i, c := range total {
		if math.Abs(float64(c)-rounds) > 5*130 {
			t.Errorf("value %d drawn %d times, want about %d", i, c, rounds)
		}
	}
}

// side is a single run holding per-request values of one metric.
func side(tag string, values []float64) *Side {
	return &Side{Dir: tag, Runs: []Run{{Dir: tag, HasRecords: true, Requests: len(values),
		Values: map[string][]float64{tag: values}, Units: map[string]string{tag: "ms"}}}}
}

func scaled(values []float64, f float64) []float64 {
	out := make([]float64, len(values))
	for i, v := range values {
		out[i] = v * f
	}
	return out
}

func mustCompare(t testing.TB, base, nw *Side, o Options) *Result {
	t.Helper()
	res, err := Compare(context.Background(), base, nw, o)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestBootstrapIdentical: the same requests on both sides change nothing.
func TestBootstrapIdentical(t *testing.T) {
	values := lognormal(rand.New(rand.NewPCG(7, 8)), 500, 40, 0.6)
	res := mustCompare(t, side("time_to_first_token", values), side("time_to_first_token", slices.Clone(values)), Options{Seed: 1})
	if len(res.Metrics) != len(bootStats)+1 {
		t.Fatalf("%d entries, want %d stats and the error rate", len(res.Metrics), len(bootStats))
	}
	for _, e := range res.Metrics {
		if e.ChangeAbs != 0 || e.Verdict != NoChange {
			t.Errorf("%s:%s: change %v, verdict %s; want 0, %s", e.Tag, e.Stat, e.ChangeAbs, e.Verdict, NoChange)
		}
		if e.Tag != ErrorRateTag && !(e.CIRelLow < 0 && e.CIRelHigh > 0) {
			t.Errorf("%s: interval [%v, %v] does not straddle 0", e.Stat, e.CIRelLow, e.CIRelHigh)
		}
	}
}

// TestBootstrapShift: every value 20% higher in NEW, 2000 requests a
// side: a latency regressed, a throughput improved, each with an interval
// around +20% that excludes 0.
func TestBootstrapShift(t *testing.T) {
	values := lognormal(rand.New(rand.NewPCG(9, 10)), 2000, 40, 0.5)
	for _, tc := range []struct {
		tag  string
		want string
	}{
		{"time_to_first_token", Regressed},
		{"output_token_throughput_per_user", Improved},
	} {
		res := mustCompare(t, side(tc.tag, values), side(tc.tag, scaled(values, 1.2)), Options{Seed: 2})
		for _, e := range res.Metrics[:len(bootStats)] {
			if math.Abs(float64(e.ChangeRel)-0.2) > 1e-9 {
				t.Errorf("%s:%s: change %v, want exactly +20%%", tc.tag, e.Stat, e.ChangeRel)
			}
			// The interval holds the true +20% and stays well clear of 0:
			// a mean of 2000 lognormal(σ=0.5) values varies by ~1.2% a
			// side, the p99 by a few percent.
			if !(e.CIRelLow < 0.2 && e.CIRelHigh > 0.2 && e.CIRelLow > 0.08 && e.CIRelHigh < 0.35) {
				t.Errorf("%s:%s: interval [%.3f, %.3f], want around 0.2", tc.tag, e.Stat, e.CIRelLow, e.CIRelHigh)
			}
			if e.Verdict != tc.want {
				t.Errorf("%s:%s: %s, want %s", tc.tag, e.Stat, e.Verdict, tc.want)
			}
		}
	}
}

// TestBootstrapReplays: one seed, one answer; another seed, another.
func TestBootstrapReplays(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	a, b := lognormal(r, 300, 40, 0.5), lognormal(r, 300, 42, 0.5)
	x := mustCompare(t, side("request_latency", a), side("request_latency", b), Options{Seed: 3})
	y := mustCompare(t, side("request_latency", a), side("request_latency", b), Options{Seed: 3})
	z := mustCompare(t, side("request_latency", a), side("request_latency", b), Options{Seed: 4})
	p50 := func(r *Result) Entry { return *r.entry("request_latency", "p50") }
	if p50(x) != p50(y) {
		t.Errorf("same seed, different results:\n%+v\n%+v", p50(x), p50(y))
	}
	if p50(x).CIRelLow == p50(z).CIRelLow {
		t.Errorf("another seed gave the same interval")
	}
}

// TestBootstrapConstant: constant values (an ISL) give a zero-width
// interval: no change when equal, "changed" when not.
func TestBootstrapConstant(t *testing.T) {
	hundred, twoHundred := slices.Repeat([]float64{100}, 50), slices.Repeat([]float64{200}, 50)
	res := mustCompare(t, side("input_sequence_length", hundred), side("input_sequence_length", hundred), Options{})
	if e := res.Metrics[0]; e.Verdict != NoChange || e.CIAbsLow != 0 || e.CIAbsHigh != 0 {
		t.Errorf("equal ISLs: %+v", e)
	}
	res = mustCompare(t, side("input_sequence_length", hundred), side("input_sequence_length", twoHundred), Options{})
	if e := res.Metrics[0]; e.Verdict != Changed || e.ChangeRel != 1 || e.Better != "" {
		t.Errorf("doubled ISL: %+v", e)
	}
}

// TestCompareCancelled: an ended context stops the bootstrap.
func TestCompareCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	v := lognormal(rand.New(rand.NewPCG(1, 1)), 100, 1, 1)
	if _, err := Compare(ctx, side("time_to_first_token", v), side("time_to_first_token", v), Options{}); err == nil {
		t.Error("no error from a cancelled comparison")
	}
}

// BenchmarkResample is one resample of 10,000 requests and its four
// percentiles, by counting (what the bootstrap does) …
func BenchmarkResample(b *testing.B) {
	s := newResampler(lognormal(rand.New(rand.NewPCG(1, 2)), 10000, 40, 0.5), bootPercentiles)
	src := rand.NewPCG(3, 4)
	out := make([]float64, len(bootPercentiles))
	b.ReportAllocs()
	for b.Loop() {
		s.resample(src, out)
	}
}

// BenchmarkResampleSort … and by drawing the values and sorting them,
// the obvious way, for comparison.
func BenchmarkResampleSort(b *testing.B) {
	values := lognormal(rand.New(rand.NewPCG(1, 2)), 10000, 40, 0.5)
	r := rand.New(rand.NewPCG(3, 4))
	buf := make([]float64, len(values))
	out := make([]float64, len(bootPercentiles))
	b.ReportAllocs()
	for b.Loop() {
		for i := range buf {
			buf[i] = values[r.IntN(len(values))]
		}
		slices.Sort(buf)
		for j, p := range bootPercentiles {
			out[j] = stats.PercentileSorted(buf, p)
		}
	}
}

// BenchmarkBootstrap is a whole metric's bootstrap: 10,000 requests a
// side, the default 2000 resamples.
func BenchmarkBootstrap(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	base, nw := lognormal(r, 10000, 40, 0.5), lognormal(r, 10000, 41, 0.5)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := bootstrapPercentiles(context.Background(), base, nw, bootPercentiles, DefaultResamples, DefaultLevel, 1, "time_to_first_token"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompare is a whole comparison of two single runs of 10,000
// requests with all seven record metrics, on the cores there are.
func BenchmarkCompare(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	mk := func(m float64) *Side {
		run := Run{HasRecords: true, Requests: 10000, Values: map[string][]float64{}, Units: map[string]string{}}
		for _, d := range metricDefs {
			if !d.aggregate {
				run.Values[d.tag] = lognormal(r, 10000, m, 0.5)
			}
		}
		return &Side{Runs: []Run{run}}
	}
	base, nw := mk(40), mk(41)
	b.ReportAllocs()
	for b.Loop() {
		mustCompare(b, base, nw, Options{})
	}
}

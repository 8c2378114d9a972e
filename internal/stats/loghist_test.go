package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestLogHistogramWithinItsBound: on skewed, bimodal, constant and
// zero-heavy samples, every percentile is within LogHistogramRelErr of the
// exact one, count, min and max are exact, mean and std agree to rounding.
func TestLogHistogramWithinItsBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	gen := map[string]func(i int) float64{
		"lognormal ITL": func(int) float64 { return 5 * math.Exp(0.3*rng.NormFloat64()) },
		"bimodal":       func(i int) float64 { return []float64{4.9, 250}[i%7/6] + rng.Float64() },
		"constant":      func(int) float64 { return 7.25 },
		"zeros and ns":  func(i int) float64 { return float64(i%3) * float64(rng.IntN(1e9)) / 1e6 },
	}
	for name, g := range gen {
		for _, n := range []int{1, 2, 3, 101, 20000} {
			vals := make([]float64, n)
			h := NewLogHistogram()
			for i := range vals {
				vals[i] = g(i)
				h.Add(vals[i])
			}
			got, want := h.Summary(), Summarize(append([]float64(nil), vals...))
			if got.Count != want.Count || got.Min != want.Min || got.Max != want.Max {
				t.Fatalf("%s n=%d: count/min/max %v %v %v, want %v %v %v", name, n, got.Count, got.Min, got.Max, want.Count, want.Min, want.Max)
			}
			if math.Abs(got.Avg-want.Avg) > 1e-12*math.Abs(want.Avg) || math.Abs(got.Sum-want.Sum) > 1e-12*math.Abs(want.Sum) || math.Abs(got.Std-want.Std) > 1e-9*math.Max(want.Std, 1e-300)+1e-12 {
				t.Fatalf("%s n=%d: avg %v std %v, want %v %v", name, n, got.Avg, got.Std, want.Avg, want.Std)
			}
			for i := range got.P {
				if math.Abs(got.P[i]-want.P[i]) > LogHistogramRelErr*math.Abs(want.P[i]) {
					t.Fatalf("%s n=%d: %s = %v, exact %v (relative error %.2g)", name, n, PercentileNames[i], got.P[i], want.P[i], math.Abs(got.P[i]-want.P[i])/want.P[i])
				}
			}
		}
	}
}

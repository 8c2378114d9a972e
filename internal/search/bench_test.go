package search

import (
	"math"
	"math/rand/v2"
	"testing"
)

// BenchmarkDecide: one probe's p95 verdict on 10 000 requests (sorting
// the samples dominates).
func BenchmarkDecide(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	xs := make([]float64, 10000)
	for i := range xs {
		xs[i] = math.Exp(rng.NormFloat64())
	}
	f := ttft100
	b.ReportAllocs()
	for b.Loop() {
		Decide(f, xs, 0.95)
	}
}

// BenchmarkProportionCI: Clopper–Pearson on 10 000 requests.
func BenchmarkProportionCI(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		ProportionCI(37, 10000, 0.95)
	}
}

package stats

import (
	"math"
	"slices"
	"testing"
)

// TestAtomKeepsAFallVisible: a le="0" bucket whose count falls at scrape
// 3 (a counter reset: every bucket falls). Taken less its own first
// bucket, the other buckets would seem to gain 8 observations in that
// interval (10 − 2 against 2 − 0 before); the interval ending at the fall
// and the one after it are left out instead, as they were without the
// split, and the intervals before and after the fall are kept.
func TestAtomKeepsAFallVisible(t *testing.T) {
	inf := math.Inf(1)
	h := HistogramSeries{
		Bounds:  []float64{0, 1, inf},
		Buckets: [][]float64{{0, 0, 0}, {50, 51, 51}, {100, 102, 102}, {10, 20, 20}, {12, 23, 23}, {13, 25, 25}},
		Sum:     []float64{0, 0.5, 1.0, 4.2, 5.3, 6.2},
		Count:   []float64{0, 51, 102, 20, 23, 25},
	}
	rest, a := splitAtom(h)
	if a.n != 13 || a.at != 0 {
		t.Fatalf("atom %+v, want 13 at 0", a)
	}
	if !math.IsNaN(rest.Sum[3]) || math.IsNaN(rest.Sum[2]) || math.IsNaN(rest.Sum[4]) {
		t.Fatalf("sums %v: want NaN at the fall (scrape 3) only", rest.Sum)
	}
	count, sum, cumulative := rest.Totals()
	m, ok := newBucketModel(rest.Bounds, cumulative, count, sum)
	if !ok {
		t.Fatal("no model")
	}
	if got := m.decode(rest).t; !slices.Equal(got, []int{1, 2, 5}) {
		t.Errorf("usable intervals end at scrapes %v, want [1 2 5]", got)
	}
}

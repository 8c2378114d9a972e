package chart

import (
	"math"
	"slices"
	"testing"
)

func TestThin(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name   string
		values []float64
		max    int
		want   []int
	}{
		{"under the limit keeps all but NaNs", []float64{3, nan, 1, 2}, 10, []int{0, 2, 3}},
		// 10 values, max 4: the tail is ceil(10*1%)=1 value (index 7, the
		// largest), then 3 even positions over the 10: 0, 4.5→5 (round
		// half away), 9.
		{"stride plus the tail", []float64{1, 2, 3, 4, 5, 6, 7, 100, 9, 10}, 4, []int{0, 5, 7, 9}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Thin(tt.values, tt.max); !slices.Equal(got, tt.want) {
				t.Errorf("Thin = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestThinKeepsTheSlowest(t *testing.T) {
	values := make([]float64, 10000)
	for i := range values {
		values[i] = float64(i % 97) // 0..96, many times
	}
	values[1234], values[8765] = 5000, 4000 // two stalls
	got := Thin(values, 2000)
	if len(got) > 2000 {
		t.Fatalf("kept %d points, more than 2000", len(got))
	}
	for _, i := range []int{1234, 8765, 0, 9999} {
		if _, found := slices.BinarySearch(got, i); !found {
			t.Errorf("point %d (value %g) not kept", i, values[i])
		}
	}
}

func TestCDF(t *testing.T) {
	x, y, ok := CDF([]float64{4, 1, math.NaN(), 3, 2}, 0)
	if !ok || !slices.Equal(x, []float64{1, 2, 3, 4}) || !slices.Equal(y, []float64{25, 50, 75, 100}) {
		t.Errorf("CDF = %v %v %v", x, y, ok)
	}
	// 10 values into at most 4 points: step ceil(9/3)=3 → ranks 1, 4, 7,
	// 10.
	vals := []float64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}
	x, y, _ = CDF(vals, 4)
	if !slices.Equal(x, []float64{1, 4, 7, 10}) || !slices.Equal(y, []float64{10, 40, 70, 100}) {
		t.Errorf("thinned CDF = %v %v", x, y)
	}
	// 11 values into 4: step ceil(10/3)=4 → ranks 1, 5, 9 and the last.
	x, y, _ = CDF(append(vals, 11), 4)
	if !slices.Equal(x, []float64{1, 5, 9, 11}) || y[3] != 100 {
		t.Errorf("thinned CDF keeps the largest: %v %v", x, y)
	}
	if _, _, ok := CDF([]float64{math.NaN()}, 10); ok {
		t.Error("CDF of no value is ok")
	}
}

func TestFrontier(t *testing.T) {
	// Latency (lower better) against throughput (higher better): the
	// points (1,10), (2,15), (3,15) tie, (4,12) is dominated, (5,20).
	xs := []float64{3, 1, 4, 2, 5, math.NaN()}
	ys := []float64{15, 10, 12, 15, 20, 99}
	if got, want := Frontier(xs, ys, true, true), []int{1, 3, 0, 4}; !slices.Equal(got, want) {
		t.Errorf("lower-x-better frontier = %v, want %v", got, want)
	}
	// Per-user throughput (higher better) against throughput (higher
	// better): from the right, (5,20) first; nothing left of it is as
	// high.
	if got, want := Frontier(xs, ys, false, true), []int{4}; !slices.Equal(got, want) {
		t.Errorf("higher-x-better frontier = %v, want %v", got, want)
	}
	// Equal x: the better y first, the worse one not kept.
	if got, want := Frontier([]float64{1, 1}, []float64{5, 7}, true, true), []int{1}; !slices.Equal(got, want) {
		t.Errorf("equal-x frontier = %v, want %v", got, want)
	}
}

package stats

import (
	"math"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// Expected values were computed by hand with numpy's linear method:
// rank h = (n-1)*p/100.
func TestPercentileSorted(t *testing.T) {
	tests := []struct {
		name   string
		values []float64
		p      float64
		want   float64
	}{
		{"single", []float64{7}, 50, 7},
		{"median odd", []float64{1, 2, 3, 4, 5}, 50, 3},
		{"median even", []float64{1, 2, 3, 4}, 50, 2.5},
		// h = 3*0.25 = 0.75 -> 1 + 0.75*(2-1)
		{"p25 of 1..4", []float64{1, 2, 3, 4}, 25, 1.75},
		// h = 3*0.99 = 2.97 -> 3 + 0.97*(4-3)
		{"p99 of 1..4", []float64{1, 2, 3, 4}, 99, 3.97},
		// h = 9*0.9 = 8.1 -> 90 + 0.1*(100-90)
		{"p90 of 10..100", []float64{10, 20, 30, 40, 50, 60, 70, 80, 90, 100}, 90, 91},
		// h = 9*0.01 = 0.09 -> 10 + 0.09*10
		{"p1 of 10..100", []float64{10, 20, 30, 40, 50, 60, 70, 80, 90, 100}, 1, 10.9},
		{"p0", []float64{3, 9}, 0, 3},
		{"p100", []float64{3, 9}, 100, 9},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := PercentileSorted(tc.values, tc.p); !near(got, tc.want) {
				t.Fatalf("PercentileSorted(%v, %v) = %v, want %v", tc.values, tc.p, got, tc.want)
			}
		})
	}
	if !math.IsNaN(PercentileSorted(nil, 50)) {
		t.Fatal("empty input must give NaN")
	}
}

func TestStdDev(t *testing.T) {
	// Classic example: mean 5, squared deviations sum to 32.
	v := []float64{2, 4, 4, 4, 5, 5, 7, 9}
	if got := StdDev(v, 0); !near(got, 2) {
		t.Fatalf("population std = %v, want 2", got)
	}
	if got := StdDev(v, 1); !near(got, math.Sqrt(32.0/7)) {
		t.Fatalf("sample std = %v, want %v", got, math.Sqrt(32.0/7))
	}
	if !math.IsNaN(StdDev([]float64{1}, 1)) {
		t.Fatal("sample std of one value must be NaN")
	}
}

func TestSummarize(t *testing.T) {
	s := Summarize([]float64{9, 1, 5, 3, 7}) // sorted: 1 3 5 7 9
	if s.Count != 5 || s.Sum != 25 || s.Min != 1 || s.Max != 9 || s.Avg != 5 {
		t.Fatalf("count/sum/min/max/avg = %d/%v/%v/%v/%v", s.Count, s.Sum, s.Min, s.Max, s.Avg)
	}
	// population std: deviations 16,4,0,4,16 -> 40/5 = 8
	if !near(s.Std, math.Sqrt(8)) {
		t.Fatalf("std = %v, want sqrt(8)", s.Std)
	}
	// p1: h=0.04 -> 1.08; p5: h=0.2 -> 1.4; p10: h=.4 -> 1.8; p25: h=1 -> 3;
	// p50: 5; p75: h=3 -> 7; p90: h=3.6 -> 8.2; p95: h=3.8 -> 8.6; p99: h=3.96 -> 8.92
	want := [...]float64{1.08, 1.4, 1.8, 3, 5, 7, 8.2, 8.6, 8.92}
	for i := range want {
		if !near(s.P[i], want[i]) {
			t.Errorf("%s = %v, want %v", PercentileNames[i], s.P[i], want[i])
		}
	}
	if z := Summarize(nil); z.Count != 0 {
		t.Fatal("empty summary must have count 0")
	}
}

func TestMeanCompensated(t *testing.T) {
	v := make([]float64, 1_000_001)
	v[0] = 1e16
	for i := 1; i < len(v); i++ {
		v[i] = 1
	}
	// Naive summation loses every +1; Kahan keeps them.
	if got, want := Mean(v), (1e16+1e6)/1_000_001; !near(got, want) {
		t.Fatalf("Mean = %v, want %v", got, want)
	}
}

func TestBucketLinear(t *testing.T) {
	inf := math.Inf(1)
	bounds := []float64{0.1, 0.5, 1, inf}
	counts := []float64{10, 30, 40, 40} // 10 in (0,0.1], 20 in (0.1,0.5], 10 in (0.5,1]
	got := LinearQuantiles(bounds, counts, []float64{0.1, 0.25, 0.5, 0.9, 0.99})
	// q=0.1: rank 4 in bucket 0: 0 + 0.1*4/10 = 0.04
	// q=0.25: rank 10 -> bucket 0 (10 >= 10): 0.1
	// q=0.5: rank 20 in bucket 1: 0.1 + 0.4*(20-10)/20 = 0.3
	// q=0.9: rank 36 in bucket 2: 0.5 + 0.5*(36-30)/10 = 0.8
	// q=0.99: rank 39.6: 0.5 + 0.5*9.6/10 = 0.98
	want := []float64{0.04, 0.1, 0.3, 0.8, 0.98}
	for i := range want {
		if !near(got[i], want[i]) {
			t.Errorf("q%d: %v, want %v", i, got[i], want[i])
		}
	}
	// Everything in +Inf: the highest finite bound.
	if got := LinearQuantiles(bounds, []float64{0, 0, 0, 5}, []float64{0.5}); got[0] != 1 {
		t.Errorf("+Inf bucket estimate %v, want 1", got[0])
	}
	if got := LinearQuantiles(bounds, []float64{0, 0, 0, 0}, []float64{0.5}); !math.IsNaN(got[0]) {
		t.Errorf("empty histogram estimate %v, want NaN", got[0])
	}
}

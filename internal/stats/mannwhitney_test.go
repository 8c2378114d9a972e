package stats

import (
	"math"
	"testing"
)

func TestMannWhitney(t *testing.T) {
	tests := []struct {
		name    string
		a, b    []float64
		u, z, p float64
	}{
		// Every a below every b: U = 0. n1 = n2 = 3: mean 4.5, variance
		// 3·3·7/12 = 5.25, z = −4.5/√5.25 = −1.963961, p = erfc(1.963961/√2).
		{"separated", []float64{1, 2, 3}, []float64{4, 5, 6}, 0, -1.9639610121239315, 0.04953461343562649},
		// Interleaved: ranks of a 1, 3, 5 = 9, U = 9 − 6 = 3 against a
		// mean of 4.5: z = −1.5/√5.25.
		{"interleaved", []float64{1, 3, 5}, []float64{2, 4, 6}, 3, -0.6546536707079772, 0.5126907602619234},
		// Ties: a {1, 2, 2}, b {2, 3, 3}. Ranks: 1 → 1, the three 2s → 3,
		// the two 3s → 5.5. Rank sum of a 7, U = 1. Ties term
		// (27−3)+(8−2) = 30; variance 9/12·(7 − 30/30) = 4.5;
		// z = (1 − 4.5)/√4.5 = −1.649915.
		{"ties", []float64{1, 2, 2}, []float64{2, 3, 3}, 1, -1.649915822768611, 0.0989601540194058},
		{"all equal", []float64{1, 1}, []float64{1, 1}, 2, 0, 1},
		{"empty", nil, []float64{1}, 0, 0, 1},
	}
	for _, tc := range tests {
		u, z, p := MannWhitney(tc.a, tc.b)
		if math.Abs(u-tc.u) > 1e-9 || math.Abs(z-tc.z) > 1e-9 || math.Abs(p-tc.p) > 1e-9 {
			t.Errorf("%s: U %v z %v p %v, want %v %v %v", tc.name, u, z, p, tc.u, tc.z, tc.p)
		}
	}
}

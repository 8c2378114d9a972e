package stats

import (
	"math"
	"testing"
)

// TestStudentTQuantile against t-table values (scipy.stats.t.ppf, to the
// digits printed in standard tables).
func TestStudentTQuantile(t *testing.T) {
	for _, tc := range []struct {
		p, df, want float64
	}{
		{0.975, 1, 12.706204736174698},
		{0.975, 2, 4.302652729749464},
		{0.975, 3, 3.182446305284263},
		{0.975, 4, 2.7764451051977987},
		{0.975, 9, 2.2621571628540993},
		{0.975, 29, 2.045229642132703},
		{0.95, 9, 1.8331129326536335},
		{0.995, 4, 4.604094871415897},
		{0.9, 1, 3.077683537175253},
		{0.975, 1000, 1.9623390808264078},
		{0.5, 7, 0},
		{0.025, 4, -2.7764451051977987},
	} {
		got := StudentTQuantile(tc.p, tc.df)
		if math.Abs(got-tc.want) > 1e-9*math.Max(1, math.Abs(tc.want)) {
			t.Errorf("t(%v, df=%v) = %.15g, want %.15g", tc.p, tc.df, got, tc.want)
		}
	}
	for _, bad := range [][2]float64{{0, 3}, {1, 3}, {0.9, 0}, {math.NaN(), 3}} {
		if !math.IsNaN(StudentTQuantile(bad[0], bad[1])) {
			t.Errorf("t(%v, df=%v) should be NaN", bad[0], bad[1])
		}
	}
}

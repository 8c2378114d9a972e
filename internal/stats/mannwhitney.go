package stats

import (
	"math"
	"slices"
)

// MannWhitney tests whether two samples come from one distribution
// (Mann-Whitney U, two-sided), by the normal approximation with the tie
// correction: sound from about 20 values a side. It returns U of a, the
// z score, and the p-value; p is 1 when either side is empty or every
// value is the same. It does not change a or b.
func MannWhitney(a, b []float64) (u, z, p float64) {
	n1, n2 := len(a), len(b)
	if n1 == 0 || n2 == 0 {
		return 0, 0, 1
	}
	type obs struct {
		v     float64
		fromA bool
	}
	all := make([]obs, 0, n1+n2)
	for _, v := range a {
		all = append(all, obs{v, true})
	}
	for _, v := range b {
		all = append(all, obs{v, false})
	}
	slices.SortFunc(all, func(x, y obs) int {
		switch {
		case x.v < y.v:
			return -1
		case x.v > y.v:
			return 1
		}
		return 0
	})
	// Ranks from 1, ties given their mean rank; tie groups correct the
	// variance.
	var rankA, ties float64
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		rank := float64(i+j+1) / 2
		for k := i; k < j; k++ {
			if all[k].fromA {
				rankA += rank
			}
		}
		t := float64(j - i)
		ties += t*t*t - t
		i = j
	}
	f1, f2 := float64(n1), float64(n2)
	n := f1 + f2
	u = rankA - f1*(f1+1)/2
	mean := f1 * f2 / 2
	variance := f1 * f2 / 12 * ((n + 1) - ties/(n*(n-1)))
	if variance <= 0 {
		return u, 0, 1
	}
	z = (u - mean) / math.Sqrt(variance)
	return u, z, math.Erfc(math.Abs(z) / math.Sqrt2)
}

package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// seriesOf builds the series a server exposes for observations arriving
// in the given intervals (one scrape before them all, one after each),
// its sum added up in arrival order as a server's is.
func seriesOf(bounds []float64, intervals [][]float64) HistogramSeries {
	h := HistogramSeries{Bounds: bounds}
	cum := make([]float64, len(bounds))
	sum, count := 0.0, 0.0
	snapshot := func() {
		h.Buckets = append(h.Buckets, slices.Clone(cum))
		h.Sum = append(h.Sum, sum)
		h.Count = append(h.Count, count)
	}
	snapshot()
	for _, in := range intervals {
		for _, v := range in {
			for i, b := range bounds {
				if v <= b {
					cum[i]++
				}
			}
			sum += v
			count++
		}
		snapshot()
	}
	return h
}

// TestAllowedRangeHandComputed: the ranges worked out by hand from what
// each interval's counts and sum allow.
func TestAllowedRangeHandComputed(t *testing.T) {
	inf := math.Inf(1)
	for _, c := range []struct {
		name        string
		bounds      []float64
		intervals   [][]float64
		q           float64
		least, most float64
	}{
		// 1.4 + 1.6 = 3 in (1, 2]: one of them is at least 1.5; 1.9 came
		// with 0.5 (in (0, 1]), sum 2.4, so it is at least 1.4. The
		// largest is therefore at least 1.5, and at most 2, the bound.
		{"max", []float64{1, 2, inf}, [][]float64{{1.4, 1.6}, {1.9, 0.5}}, 1, 1.5, 2},
		// The smallest is the 0.5, which came with one in (1, 2] (at
		// most 2) and summed 2.4: at least 0.4; at most 1, its bound
		// (the other then 1.4).
		{"min", []float64{1, 2, inf}, [][]float64{{1.4, 1.6}, {1.9, 0.5}}, 0, 0.4, 1},
		// The median lies between the 2nd and the 3rd smallest, both in
		// (1, 2]: the pair could be 1.0… and 2.0 and the 1.9 anything
		// from 1.4, so the 2nd can be as low as the bound 1; the 3rd as
		// high as 2 (1.0…, 2.0 and 1.9). The sums leave the counts' range.
		{"median", []float64{1, 2, inf}, [][]float64{{1.4, 1.6}, {1.9, 0.5}}, 0.5, 1, 2},
		// An observation above the last finite bound, with one in (0, 1],
		// summing 7.5: it is 6.5 to 7.5.
		{"open tail", []float64{1, inf}, [][]float64{{0.5, 7}}, 1, 6.5, 7.5},
		// Alone in its interval, each observation is known exactly.
		{"alone", []float64{1, 2, inf}, [][]float64{{1.25}, {1.75}, {0.5}}, 1, 1.75, 1.75},
		{"alone, p50", []float64{1, 2, inf}, [][]float64{{1.25}, {1.75}, {0.5}}, 0.5, 1.25, 1.25},
		// 1.2, 1.3 and 1.8 at once: sum 4.3 over three in (1, 2]. The
		// largest is at least 4.3/3; the smallest at most that and at
		// least 4.3 − 2·2 = 0.3, so the bound 1.
		{"three at once, max", []float64{1, 2, inf}, [][]float64{{1.2, 1.3, 1.8}}, 1, 4.3 / 3, 2},
		{"three at once, min", []float64{1, 2, inf}, [][]float64{{1.2, 1.3, 1.8}}, 0, 1, 4.3 / 3},
		// p75 of 5 (r = 3) is the 4th smallest: two of 2.5, 3 and 3.5
		// (sum 9 in (2, 4]) must reach 9 − 4 − 2 = 3… no: the 4th of
		// 0.5, 1, 2.5, 3, 3.5 is the middle of the three, at least
		// (9 − 4)/2 = 2.5 (the largest at 4 at most) and at most
		// (9 − 2)/2 = 3.5 (the smallest at 2 at least).
		{"middle of three", []float64{1, 2, 4, inf}, [][]float64{{0.5, 1}, {2.5, 3, 3.5}}, 0.75, 2.5, 3.5},
	} {
		h := seriesOf(c.bounds, c.intervals)
		least, most := AllowedRange(h, []float64{c.q})
		// The sums' rounding is allowed for: 1e-9 of the cumulative sums.
		if math.Abs(least[0]-c.least) > 1e-8 || math.Abs(most[0]-c.most) > 1e-8 {
			t.Errorf("%s: q %g allowed [%.12g, %.12g], want [%g, %g]", c.name, c.q, least[0], most[0], c.least, c.most)
		}
	}
}

// TestAllowedRangeWithoutIntervals: a torn interval says nothing beyond
// its counts, which leave its observations anywhere in their buckets;
// observations in the +Inf bucket outside any usable interval leave the
// range open above.
func TestAllowedRangeWithoutIntervals(t *testing.T) {
	inf := math.Inf(1)
	// 1.4 and 1.6 together; 1.9 and 0.5 in an interval torn by its count
	// (the empty interval after it, which the torn scrape also closes,
	// says nothing anyway); 3 alone, so exactly 3.
	h := seriesOf([]float64{1, 2, inf}, [][]float64{{1.4, 1.6}, {1.9, 0.5}, {}, {3}})
	h.Count[2]--
	qs := []float64{0, 0.5, 0.75, 1}
	least, most := AllowedRange(h, qs)
	for i, want := range [][2]float64{
		{0, 1}, // the 0.5: anywhere in (0, 1]
		// The 3rd smallest, in (1, 2]: the pair may be 1.0… and 2.0, the
		// torn 1.9 anything, so it is anywhere in the bucket.
		{1, 2},
		// The 4th smallest is the largest in (1, 2], no less than the
		// pair's larger, 1.5.
		{1.5, 2},
		{3, 3},
	} {
		if math.Abs(least[i]-want[0]) > 5e-8 || math.Abs(most[i]-want[1]) > 5e-8 {
			t.Errorf("q %g: allowed [%.12g, %.12g], want [%g, %g]", qs[i], least[i], most[i], want[0], want[1])
		}
	}
	// The 3 in a torn interval: the largest may be anything above 2.
	h = seriesOf([]float64{1, 2, inf}, [][]float64{{1.4, 1.6}, {3, 0.5}, {}})
	h.Count[2]--
	if least, most := AllowedRange(h, []float64{1}); least[0] != 2 || !math.IsInf(most[0], 1) {
		t.Errorf("torn +Inf observation: allowed [%g, %g], want [2, +Inf]", least[0], most[0])
	}
	if least, most := AllowedRange(HistogramSeries{Bounds: []float64{1, inf}}, []float64{0.5}); !math.IsNaN(least[0]) || !math.IsNaN(most[0]) {
		t.Errorf("no observations: [%g, %g], want NaN", least[0], most[0])
	}
}

// TestAllowedRangeHoldsTheSample: whatever the sample, its exact
// percentiles lie in the range its series allows, which lies in the
// buckets its counts allow; and interval-fit's estimates lie in it too.
func TestAllowedRangeHoldsTheSample(t *testing.T) {
	qs := []float64{0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 1}
	rng := rand.New(rand.NewPCG(31, 7))
	for trial := range 300 {
		bounds := fuzzLayouts[trial%len(fuzzLayouts)]
		if bounds[0] < 0 {
			continue // the estimators take nothing to lie below min(0, first bound)
		}
		n := 1 + rng.IntN(400)
		perInterval := 1 + rng.IntN(6)
		median := bounds[rng.IntN(len(bounds)-1)]
		var intervals [][]float64
		var all []float64
		for len(all) < n {
			in := make([]float64, 1+rng.IntN(perInterval))
			for i := range in {
				switch trial % 3 {
				case 0:
					in[i] = median * math.Exp(0.5*rng.NormFloat64())
				case 1: // on the bounds
					in[i] = bounds[rng.IntN(len(bounds)-1)]
				default: // integers
					in[i] = float64(rng.IntN(int(2*median) + 2))
				}
			}
			intervals = append(intervals, in)
			all = append(all, in...)
		}
		slices.Sort(all)
		h := seriesOf(bounds, intervals)
		checkAllowed(t, fmt.Sprintf("trial %d (%d in intervals of up to %d)", trial, n, perInterval), h, all, qs)
	}
}

// checkAllowed fails unless the exact percentiles of the sorted sample
// all, and interval-fit's estimates from its series h, lie in the range
// h allows.
func checkAllowed(t *testing.T, what string, h HistogramSeries, all, qs []float64) {
	t.Helper()
	least, most := AllowedRange(h, qs)
	est := IntervalFit{}.Quantiles(h, qs)
	for i, q := range qs {
		exact := PercentileSorted(all, 100*q)
		tol := 1e-9 * math.Max(math.Abs(exact), 1)
		if !(least[i] <= exact+tol && exact <= most[i]+tol) {
			t.Fatalf("%s: q %g exact %.15g outside the allowed [%.15g, %.15g]", what, q, exact, least[i], most[i])
		}
		if !math.IsNaN(est[i]) && !(est[i] >= least[i] && est[i] <= most[i]) {
			t.Fatalf("%s: q %g interval-fit %.15g outside the allowed [%.15g, %.15g]", what, q, est[i], least[i], most[i])
		}
	}
}

// TestAllowedRangeHoldsRoundedSums: exporters that print _sum with fewer
// digits than a float64 holds. prometheus-cpp (Triton's exporter) prints
// a fixed six decimals; a C++ stream left at its default precision, six
// significant digits. Such a sum is off its observations' total by up to
// half its last digit, which no relative allowance covers: the range
// must allow for the digits the series shows it was printed with, or it
// excludes the very sample the server saw.
func TestAllowedRangeHoldsRoundedSums(t *testing.T) {
	qs := []float64{0.01, 0.1, 0.5, 0.9, 0.99, 1}
	printers := []struct {
		name  string
		print func(float64) string
	}{
		{"six significant digits (a C++ stream's default)", func(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }},
		{"eight significant digits", func(x float64) string { return strconv.FormatFloat(x, 'g', 8, 64) }},
		{"six decimals (prometheus-cpp)", func(x float64) string { return strconv.FormatFloat(x, 'f', 6, 64) }},
		{"three decimals", func(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) }},
	}
	for _, p := range printers {
		t.Run(p.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(5, 11))
			for trial := range 60 {
				bounds := fuzzLayouts[trial%len(fuzzLayouts)]
				if bounds[0] < 0 {
					continue
				}
				median := bounds[rng.IntN(len(bounds)-1)]
				if median <= 0 {
					median = bounds[len(bounds)-2]
				}
				var intervals [][]float64
				var all []float64
				for range 50 + rng.IntN(300) {
					in := make([]float64, 1+rng.IntN(3))
					for i := range in {
						in[i] = median * math.Exp(0.3*rng.NormFloat64())
					}
					intervals = append(intervals, in)
					all = append(all, in...)
				}
				slices.Sort(all)
				h := seriesOf(bounds, intervals)
				for i, s := range h.Sum {
					r, err := strconv.ParseFloat(p.print(s), 64)
					if err != nil {
						t.Fatal(err)
					}
					h.Sum[i] = r
				}
				checkAllowed(t, fmt.Sprintf("trial %d (%d observations around %g)", trial, len(all), median), h, all, qs)
			}
		})
	}
}

package stats

import (
	"math"
	"slices"
	"strconv"
	"testing"
)

// FuzzAllowedRange builds a sample from arbitrary bytes, its observations
// arriving in intervals as a server's would, and checks that its exact
// percentiles lie in the range its series allows, and interval-fit's
// estimates too. b[0] picks the layout (those with a negative first bound
// left out: the range takes nothing below min(0, first bound)); each
// 2-byte group then either closes an interval or observes a value in a
// chosen bucket at a chosen place (its bounds included); the groups are
// played up to 8 times for longer runs. b[0]'s top two bits choose how
// the sums are printed: in full, or (2) to six significant digits, or (3)
// three decimals, as exporters in C++ print them (sumdigits.go); only
// where they are enough to read that from (sumsToReadDigits), as the
// range premises.
func FuzzAllowedRange(f *testing.F) {
	f.Add([]byte{0, 10, 128, 11, 3, 0, 0, 12, 250})
	f.Add([]byte{2, 5, 0, 5, 255, 0, 0, 6, 17, 12, 200, 12, 30})
	f.Add([]byte{5, 1, 0, 1, 200, 0, 0, 1, 100, 0, 0, 0, 90})
	f.Add([]byte{1, 7, 64, 7, 64, 7, 64, 0, 0, 8, 1, 15, 99, 0, 0})
	f.Add([]byte{0xb2, 7, 64, 7, 90, 20, 0, 7, 13, 7, 200, 20, 0, 8, 1, 20, 0, 7, 99, 20, 0})
	f.Add([]byte{0xf1, 7, 64, 7, 90, 20, 0, 7, 13, 7, 200, 20, 0, 8, 1, 20, 0, 7, 99, 20, 0})
	f.Fuzz(sampleInRange)
}

// sampleInRange is FuzzAllowedRange's check of one input.
func sampleInRange(t *testing.T, b []byte) {
	if len(b) < 3 {
		return
	}
	var layouts [][]float64
	for _, l := range fuzzLayouts {
		if l[0] >= 0 {
			layouts = append(layouts, l)
		}
	}
	bounds := layouts[int(b[0])%len(layouts)]
	repeat := 1 + int(b[0]/16)%8
	var intervals [][]float64
	var current, all []float64
	for range repeat {
		for g := b[1:]; len(g) >= 2; g = g[2:] {
			which := int(g[0]) % (len(bounds) + 1)
			if which == len(bounds) {
				intervals = append(intervals, current)
				current = nil
				continue
			}
			lower := 0.0
			if which > 0 {
				lower = bounds[which-1]
			}
			upper := bounds[which]
			if math.IsInf(upper, 1) {
				upper = 3 * math.Max(lower, 1)
			}
			// Places 0 and 255 are the bucket's bounds themselves.
			v := lower + (upper-lower)*float64(g[1])/255
			if g[1] == 0 && which > 0 {
				v = math.Nextafter(lower, math.Inf(1))
			}
			current = append(current, v)
			all = append(all, v)
		}
	}
	intervals = append(intervals, current)
	if len(all) == 0 {
		return
	}
	slices.Sort(all)
	h := seriesOf(bounds, intervals)
	if printing := b[0] >> 6; printing >= 2 {
		format, digits := byte('g'), 6
		if printing == 3 {
			format, digits = 'f', 3
		}
		printed := make([]float64, len(h.Sum))
		for i, s := range h.Sum {
			printed[i], _ = strconv.ParseFloat(strconv.FormatFloat(s, format, digits, 64), 64)
		}
		seen := 0
		eachSum(printed, func(float64) bool { seen++; return true })
		if seen >= sumsToReadDigits {
			h.Sum = printed
		}
	}
	checkAllowed(t, "sample", h, all, []float64{0, 0.01, 0.25, 0.5, 0.9, 0.99, 1})
}

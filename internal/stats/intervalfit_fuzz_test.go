package stats

import (
	"math"
	"slices"
	"testing"
)

// fuzzLayouts are the bucket layouts FuzzIntervalFit builds series on:
// vLLM's TTFT and e2e latency, a 1-2-5 token layout, one without +Inf,
// one with a negative first bound, and one finite bound.
var fuzzLayouts = [][]float64{
	{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, math.Inf(1)},
	{0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, math.Inf(1)},
	{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, math.Inf(1)},
	{0.01, 0.1, 1, 10},
	{-1, 0, 1, math.Inf(1)},
	{1, math.Inf(1)},
}

// fuzzSeries builds a histogram series from b: b[0] picks the layout,
// then each 3-byte group either closes a scrape or observes a value in
// a chosen bucket at a chosen place. The groups are played repeat
// times, each time with every place moved on by the repetition's number
// times b[0] (a drifting load), so that a short input makes a run long
// enough for the variance fit, the cuts at a change, the cluster model
// and the batch law. With hostile set, a group may instead reset the
// counters, tear a scrape (one bucket moved without its count), or write
// a sum that is negative, NaN, ±Inf or huge. It returns the series and
// whether it is well formed (no hostile group took effect).
func fuzzSeries(b []byte, hostile bool, repeat int) (HistogramSeries, bool) {
	bounds := fuzzLayouts[int(b[0])%len(fuzzLayouts)]
	drift := b[0]
	h := HistogramSeries{Bounds: bounds}
	cum := make([]float64, len(bounds))
	sum, count := 0.0, 0.0
	clean := true
	snapshot := func() {
		h.Buckets = append(h.Buckets, slices.Clone(cum))
		h.Sum = append(h.Sum, sum)
		h.Count = append(h.Count, count)
	}
	snapshot()
	groups := b[1:]
	for r := range repeat {
		for b := groups; len(b) >= 3; b = b[3:] {
			which, place, action := int(b[0])%len(bounds), float64(b[1]+byte(r)*drift)/256, b[2]
			switch {
			case action%8 == 0:
				snapshot()
				continue
			case hostile && action%16 == 7:
				clean = false
				switch action / 16 % 5 {
				case 0: // a counter reset
					clear(cum)
					sum, count = 0, 0
				case 1: // a torn read
					cum[which]++
				case 2:
					sum = -sum - 1
				case 3:
					sum = []float64{math.NaN(), math.Inf(1), math.Inf(-1), 1e308}[b[1]%4]
				default:
					count += float64(b[1]) - 128
				}
				snapshot()
				continue
			}
			lower := math.Min(0, bounds[0])
			if which > 0 {
				lower = bounds[which-1]
			}
			upper := bounds[which]
			v := lower + (upper-lower)*(place+1.0/512)
			if math.IsInf(upper, 1) {
				v = lower + math.Max(math.Abs(lower), 1)*place*8
			}
			for i := which; i < len(cum); i++ {
				cum[i]++
			}
			sum += v
			count++
		}
	}
	snapshot()
	return h, clean
}

// FuzzIntervalFit: whatever series a server exposes, the estimator
// returns one value per quantile, never ±Inf, and never panics or hangs;
// on a well-formed series with observations, every estimate lies in the
// buckets that hold its order statistics and the estimates never
// decrease in the quantile, and with no observations they are NaN. The
// other two estimators, AIPerf's and Prometheus' linear one, must not
// panic on the same series and answer every quantile.
func FuzzIntervalFit(f *testing.F) {
	f.Add([]byte{1, 3, 100, 1, 4, 10, 2, 5, 200, 3, 0, 0, 0, 6, 50, 1, 6, 250, 1, 0, 0, 8})
	f.Add([]byte{0, 2, 0, 1, 2, 255, 1, 3, 128, 1, 0, 0, 0, 3, 1, 1, 3, 2, 1, 3, 3, 1, 4, 9, 1})
	f.Add([]byte{2, 12, 10, 1, 12, 250, 1, 11, 30, 1, 0, 0, 0, 12, 99, 1, 12, 7, 23, 11, 200, 1})
	f.Add([]byte{4, 0, 10, 1, 1, 20, 1, 2, 30, 1, 3, 40, 8, 0, 0, 0, 1, 1, 7, 2, 3, 0})
	f.Add([]byte{5, 0, 1, 1, 1, 2, 1, 0, 0, 0, 1, 3, 55, 0, 4, 1, 1, 5, 1})
	f.Add([]byte{3, 1, 2, 1, 2, 3, 1, 3, 4, 1, 0, 0, 0, 0, 5, 39, 2, 200, 1})
	f.Add([]byte("a series of bytes that reads as scrapes"))
	// Played 64 and 24 times: a drifting e2e latency around 2.5 s, and a
	// TTFT whose intervals straddle 0.06 s.
	f.Add([]byte{6, 1, 5, 200, 1, 6, 30, 1, 6, 90, 1, 0, 0, 0, 7, 10, 1, 6, 250, 1, 5, 128, 1, 0, 0, 0})
	f.Add([]byte{4, 0, 5, 250, 1, 5, 240, 1, 6, 10, 1, 6, 20, 1, 0, 0, 0, 5, 200, 1, 5, 220, 1, 0, 0, 0})
	qs := []float64{0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 1}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < 2 {
			return
		}
		// Bit 0: hostile groups; bits 1–2: the groups played 1, 8, 24
		// or 64 times.
		h, clean := fuzzSeries(b[1:], b[0]&1 == 1, []int{1, 8, 24, 64}[b[0]>>1&3])
		for _, other := range []interface {
			Quantiles(HistogramSeries, []float64) []float64
		}{AIPerfPolynomial{}, BucketLinear{}} {
			if got := other.Quantiles(h, qs); len(got) != len(qs) {
				t.Fatalf("%T: %d estimates for %d quantiles", other, len(got), len(qs))
			}
		}
		got := IntervalFit{}.Quantiles(h, qs)
		if len(got) != len(qs) {
			t.Fatalf("%d estimates for %d quantiles", len(got), len(qs))
		}
		for i, v := range got {
			if math.IsInf(v, 0) {
				t.Fatalf("p%g = %v (series %+v)", 100*qs[i], v, h)
			}
		}
		if !clean {
			return
		}
		count, _, cumulative := h.Totals()
		if count == 0 {
			for i, v := range got {
				if !math.IsNaN(v) {
					t.Fatalf("no observations, but p%g = %v", 100*qs[i], v)
				}
			}
			return
		}
		checkInsideCounts(t, 0, h.Bounds, cumulative, qs, got)
	})
}

package stats

import (
	"math"
	"slices"
)

// changeCuts cuts the run where its bucket mix changed, by binary
// segmentation: the span whose best single cut gives the largest
// likelihood-ratio statistic G² between the bucket counts before and after
// is cut there, while that statistic is significant and each part keeps
// minSegmentIntervals intervals with observations, up to maxSegments
// spans. Since the best of many cut points is taken, a cut must pass the
// chi-square test at p < 0.001 divided by the number of points it was
// chosen from (Bonferroni), with batches counted once: a stationary run
// stays one span. Cuts at the
// change leave no span mixing two regimes, and no regime split into more
// spans than it needs, each fitted from fewer intervals.
func (m *bucketModel) changeCuts(h HistogramSeries) [][2]int {
	last := h.Scrapes() - 1
	active := make([]int, last+1) // intervals with observations up to t
	for t := 1; t <= last; t++ {
		active[t] = active[t-1]
		if h.Count[t] > h.Count[t-1] {
			active[t]++
		}
	}
	spans := [][2]int{{0, last}}
	if active[last] < 2*minSegmentIntervals {
		return spans
	}
	// G² counts observations as independent. Batches of g that finish
	// together (every interval's count a multiple of g) land in a bucket
	// together, and their G² reads about g times the evidence there is.
	var counts []float64
	for t := 1; t <= last; t++ {
		if d := h.Count[t] - h.Count[t-1]; d > 0 {
			counts = append(counts, d)
		}
	}
	batch := 1.0
	if g := commonBatch(counts); g > 1 && float64(len(counts))*math.Log2(float64(g)) >= minBatchBits {
		batch = float64(g)
	}
	for len(spans) < maxSegments {
		bestSpan, bestCut, bestExcess := -1, 0, 1.0
		for s, sp := range spans {
			cut, g2, df, tried := m.bestChange(h, active, sp[0], sp[1])
			if cut < 0 {
				continue
			}
			if excess := g2 / batch / chiSquareQuantile(df, 1-0.001/float64(tried)); excess > bestExcess {
				bestSpan, bestCut, bestExcess = s, cut, excess
			}
		}
		if bestSpan < 0 {
			break
		}
		sp := spans[bestSpan]
		spans = slices.Insert(spans, bestSpan+1, [2]int{bestCut, sp[1]})
		spans[bestSpan] = [2]int{sp[0], bestCut}
	}
	return spans
}

// changeGrid is how many cut points a span's first pass tries; the best
// of them is then refined to the scrape. G² moves smoothly with the cut, so
// the coarse pass finds the peak at a fraction of the cost of every scrape
// of an hour-long run.
const changeGrid = 200

// bestChange is the cut of scrapes from..to with the largest G² between
// the bucket counts before and after it, its degrees of freedom and the
// number of cuts it was chosen from; cut is −1 when the span cannot be cut.
func (m *bucketModel) bestChange(h HistogramSeries, active []int, from, to int) (cut int, g2, df float64, tried int) {
	k := len(m.n)
	total, all := m.countsBetween(h, from, to)
	// Buckets too thin for the test (fewer than 10 in the span) are pooled
	// into the last column.
	col := make([]int, k)
	cols := 1
	for j := range k {
		col[j] = -1
		if total[j] >= 10 {
			col[j] = cols - 1
			cols++
		}
	}
	for j := range k {
		if col[j] < 0 {
			col[j] = cols - 1
		}
	}
	colTotal := make([]float64, cols)
	for j, c := range col {
		colTotal[c] += total[j]
	}
	used := 0
	for _, c := range colTotal {
		if c > 0 {
			used++
		}
	}
	// Cuts leave minSegmentIntervals active intervals on either side.
	first, lastCut := -1, -1
	for t := from + 1; t < to; t++ {
		if active[t]-active[from] >= minSegmentIntervals && active[to]-active[t] >= minSegmentIntervals {
			if first < 0 {
				first = t
			}
			lastCut = t
		}
	}
	if first < 0 || used < 2 {
		return -1, 0, 0, 0
	}
	tried = lastCut - first + 1
	before := make([]float64, cols)
	interval := make([]float64, k)
	g := func() float64 {
		nb := 0.0
		for _, c := range before {
			nb += c
		}
		na := all - nb
		if nb <= 0 || na <= 0 {
			return 0
		}
		s := 0.0
		for x, ct := range colTotal {
			if ct <= 0 {
				continue
			}
			if b := before[x]; b > 0 {
				s += b * math.Log(b*all/(nb*ct))
			}
			if a := ct - before[x]; a > 0 {
				s += a * math.Log(a*all/(na*ct))
			}
		}
		return 2 * s
	}
	// scan evaluates G² at lo, lo+step, … up to hi and returns the best.
	scan := func(lo, hi, step int) (int, float64) {
		clear(before)
		m.countsInto(interval, h, from, lo)
		for j, c := range col {
			before[c] += interval[j]
		}
		best, bestG := -1, 0.0
		for t := lo; ; {
			if v := g(); best < 0 || v > bestG {
				best, bestG = t, v
			}
			next := min(t+step, hi)
			if next == t {
				return best, bestG
			}
			m.countsInto(interval, h, t, next)
			for j, c := range col {
				before[c] += interval[j]
			}
			t = next
		}
	}
	step := max(1, tried/changeGrid)
	coarse, _ := scan(first, lastCut, step)
	cut, g2 = scan(max(first, coarse-step), min(lastCut, coarse+step), 1)
	return cut, g2, float64(used - 1), tried
}

// chiSquareQuantile is the p quantile of the chi-square law with df
// degrees of freedom, by the Wilson–Hilferty approximation: within a few
// percent for moderate p, and too large in the far tail (df 1, p = 1 −
// 10⁻⁷: 33.7 where the exact is 28.4), which errs on the side of not
// cutting.
func chiSquareQuantile(df, p float64) float64 {
	if df <= 0 {
		return math.Inf(1)
	}
	z := normalQuantile(p)
	v := 2 / (9 * df)
	x := 1 - v + z*math.Sqrt(v)
	return df * x * x * x
}

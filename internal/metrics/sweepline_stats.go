package metrics

import (
	"math"
	"sort"

	"github.com/llmbench/llmbench/internal/stats"
)

// The sweep line's statistics: a curve's time-weighted avg, std, min, max
// and percentiles over a window (aiperf-0.12-features f3), from its
// segments, the percentiles by a selection weighted by duration.

// twStats are time-weighted statistics.
type twStats struct {
	avg, min, max, std, p50, p90, p95, p99 float64
}

// segment is a stretch of time at one value: k = floatKey(value), x = its
// duration in ns.
type segment = keyed

func seg(dur, v float64) segment { return segment{floatKey(v), dur} }

// statsOf computes the statistics of segments, in time order, over total
// time total: AIPerf's time-weighted avg and population std (summed in
// time order), min and max over the segments, and percentiles as the
// first value, in ascending order, whose cumulative share of the time
// reaches q. It reorders segs.
func statsOf(segs []segment, total float64) twStats {
	if len(segs) == 0 || total <= 0 {
		return twStats{}
	}
	var s twStats
	s.min, s.max = math.Inf(1), math.Inf(-1)
	weighted, run := 0.0, 0.0
	for _, g := range segs {
		v := keyFloat(g.k)
		weighted += v * g.x
		run += g.x
		s.min, s.max = min(s.min, v), max(s.max, v)
	}
	s.avg = weighted / total
	dev := 0.0
	for _, g := range segs {
		d := keyFloat(g.k) - s.avg
		dev += g.x * d * d
	}
	s.std = math.Sqrt(dev / total)
	ps := quantiles(segs, run)
	s.p50, s.p90, s.p95, s.p99 = ps[0], ps[1], ps[2], ps[3]
	return s
}

// quantiles finds, for q = 0.5, 0.9, 0.95, 0.99, the least value whose
// segments up to it in ascending order hold a share of run of at least q,
// by a three-way quickselect weighted by duration, reordering segs.
// Durations are whole ns below 2^53 (a window under 104 days), so every
// partial sum is exact and the order they are added in does not matter:
// the result is that of sorting.
func quantiles(segs []segment, run float64) [4]float64 {
	qs := [...]float64{0.50, 0.90, 0.95, 0.99}
	var ps [4]float64
	lo, before := 0, 0.0 // segs[:lo] are below every value still sought
	rng := uint64(len(segs))*0x9E3779B97F4A7C15 | 1
	for k, q := range qs {
		hi, found := len(segs), false
		for !found && lo < hi {
			p := pivot(segs[lo:hi], &rng)
			lt, gt, less, equal := partition3(segs, lo, hi, p)
			switch {
			case (before+less)/run >= q:
				hi = lt
			case (before+less+equal)/run >= q:
				ps[k], lo, before, found = keyFloat(p), lt, before+less, true
			default:
				lo, before = gt, before+less+equal
			}
		}
		if !found { // a share that rounding keeps below q: the largest
			top := segs[0].k
			for _, g := range segs {
				top = max(top, g.k)
			}
			for ; k < len(qs); k++ {
				ps[k] = keyFloat(top)
			}
			break
		}
	}
	return ps
}

// pivot is the median key of three drawn at random from a.
func pivot(a []segment, rng *uint64) uint64 {
	draw := func() uint64 {
		*rng ^= *rng << 13
		*rng ^= *rng >> 7
		*rng ^= *rng << 17
		return a[*rng%uint64(len(a))].k
	}
	x, y, z := draw(), draw(), draw()
	return max(min(x, y), min(max(x, y), z))
}

// partition3 orders a[lo:hi] as keys below p, equal to p, above p, and
// returns where the middle run starts and ends and the durations of the
// first two.
func partition3(a []segment, lo, hi int, p uint64) (lt, gt int, less, equal float64) {
	lt, gt = lo, hi
	for i := lo; i < gt; {
		switch k := a[i].k; {
		case k < p:
			less += a[i].x
			a[lt], a[i] = a[i], a[lt]
			lt++
			i++
		case k > p:
			gt--
			a[gt], a[i] = a[i], a[gt]
		default:
			equal += a[i].x
			i++
		}
	}
	return lt, gt, less, equal
}

// timeWeighted is the statistics over [w0, w1] of curve num, or num/den
// (0 where den is not positive: a per-user rate) when den is set.
// Without mask (Effective), the segments are the window cut at every
// event time of those curves, the first carrying the value in force at
// w0, weighted over the whole window. With mask (Active), the cuts
// include mask's and only the segments where mask is positive count,
// weighted over their time only.
func (x *sweepIndex) timeWeighted(num, den, mask curveID, w0, w1 int64, segs *[]segment) twStats {
	if w1 <= w0 || x.curves[num].points == 0 || den != cNone && x.curves[den].points == 0 {
		return twStats{}
	}
	var sts [3]stream // num, den, mask; c nil when unset
	for i, id := range [...]curveID{num, den, mask} {
		if id != cNone {
			sts[i].seek(x, id, w0)
		}
	}
	ns, ds, ms := &sts[0], &sts[1], &sts[2]
	if den == cNone {
		ds = nil
	}
	if mask == cNone {
		ms = nil
	} else if mask == den {
		ms, sts[2] = ds, stream{} // one stream serves both
	}
	*segs = (*segs)[:0]
	active := 0.0
	for at := w0; ; {
		t := w1
		for i := range sts {
			if sts[i].c != nil {
				t = min(t, sts[i].next)
			}
		}
		v := ns.v
		if ds != nil {
			v = 0
			if ds.v > 0 {
				v = ns.v / ds.v
			}
		}
		d := float64(t - at)
		switch {
		case ms == nil:
			*segs = append(*segs, seg(d, v))
		case ms.v > 0:
			*segs = append(*segs, seg(d, v))
			active += d
		}
		if t >= w1 {
			break
		}
		for i := range sts {
			if sts[i].c != nil && sts[i].next == t {
				sts[i].advance()
			}
		}
		at = t
	}
	if ms == nil {
		return statsOf(*segs, float64(w1-w0))
	}
	return statsOf(*segs, active)
}

// segmentsAtMost bounds the number of segments of a statistic of curves
// ids over [w0, w1], from the marks.
func (x *sweepIndex) segmentsAtMost(w0, w1 int64, ids ...curveID) int {
	n := 1
	for _, id := range ids {
		c := &x.curves[id]
		if c.lists == nil {
			t := c.c.t
			n += sort.Search(len(t), func(i int) bool { return t[i] >= w1 }) - sort.Search(len(t), func(i int) bool { return t[i] > w0 })
			continue
		}
		k0 := sort.Search(len(c.marks), func(i int) bool { return c.marks[i].t > w0 })
		k1 := sort.Search(len(c.marks), func(i int) bool { return c.marks[i].t > w1 })
		n += min(c.points, k1*markEvery) - max(0, k0-1)*markEvery
	}
	return n
}

func (s twStats) summary(scale float64) *stats.Summary {
	nan := math.NaN()
	sum := stats.Summary{Sum: nan, Avg: s.avg * scale, Min: s.min * scale, Max: s.max * scale, Std: s.std * scale}
	for i, p := range stats.Percentiles {
		switch p {
		case 50:
			sum.P[i] = s.p50 * scale
		case 90:
			sum.P[i] = s.p90 * scale
		case 95:
			sum.P[i] = s.p95 * scale
		case 99:
			sum.P[i] = s.p99 * scale
		default:
			sum.P[i] = nan
		}
	}
	return &sum
}

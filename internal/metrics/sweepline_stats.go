package metrics

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
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
// weighted over their time only. The segments are gathered in segs when
// they fit the spill's working memory (or there is no spill), else the
// statistics are computed in passes over them (statsInPasses).
func (x *sweepIndex) timeWeighted(num, den, mask curveID, w0, w1 int64, segs *[]segment) twStats {
	if w1 <= w0 || x.curves[num].points == 0 || den != cNone && x.curves[den].points == 0 {
		return twStats{}
	}
	ids := []curveID{num}
	for _, id := range []curveID{den, mask} {
		if id != cNone {
			ids = append(ids, id)
		}
	}
	if sp := x.s.sp; sp != nil && x.segmentsAtMost(w0, w1, ids...) > max(cap(*segs), workLimit(sp, 16)) {
		return statsInPasses(func(emit func(segment)) float64 {
			return x.segments(num, den, mask, w0, w1, emit)
		}, workLimit(sp, 16))
	}
	*segs = (*segs)[:0]
	total := x.segments(num, den, mask, w0, w1, func(g segment) { *segs = append(*segs, g) })
	return statsOf(*segs, total)
}

// segments calls emit with the segments of a statistic (timeWeighted), in
// time order, and returns the time they are weighted over.
func (x *sweepIndex) segments(num, den, mask curveID, w0, w1 int64, emit func(segment)) float64 {
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
			emit(seg(d, v))
		case ms.v > 0:
			emit(seg(d, v))
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
		return float64(w1 - w0)
	}
	return active
}

// statsInPasses computes statsOf's statistics without holding the
// segments: replay emits them, in time order, each time it is called.
// The first pass sums as statsOf does (in time order, so bit for bit the
// same avg, min and max), the second the deviations. The percentiles are
// statsOf's too: the least value whose segments up to it hold a share of
// at least q of the time. Durations are whole ns, so every sum of them is
// exact whatever their order: each pass narrows down, for each q, the
// range of keys it lies in by the time every range of a histogram holds
// (some ranges of 1/65536 of the current one), until the range holds a
// single value or few enough segments to be selected from in memory.
func statsInPasses(replay func(emit func(segment)) float64, limit int) twStats {
	var s twStats
	s.min, s.max = math.Inf(1), math.Inf(-1)
	weighted, run := 0.0, 0.0
	n, top := 0, uint64(0)
	const width = 16
	type bucket struct {
		w      float64
		n      int
		lo, hi uint64
	}
	type search struct {
		q          float64
		base, last uint64 // the range of keys searched, in buckets shift bits wide
		shift      uint
		below      float64 // the time of the segments below base
		hist       []bucket
		collect    bool // gather the range's segments next pass
		segs       []segment
		done, none bool
		v          float64
	}
	var ss [4]search
	for i, q := range [...]float64{0.50, 0.90, 0.95, 0.99} {
		ss[i] = search{q: q, last: math.MaxUint64, shift: 64 - width, hist: make([]bucket, 1<<width)}
	}
	in := func(q *search, k uint64) (int, bool) {
		if k < q.base || k > q.last {
			return 0, false
		}
		return int((k - q.base) >> q.shift), true
	}
	tally := func(g segment) {
		for i := range ss {
			q := &ss[i]
			if q.done {
				continue
			}
			b, ok := in(q, g.k)
			if !ok {
				continue
			}
			if q.collect {
				q.segs = append(q.segs, g)
				continue
			}
			h := &q.hist[b]
			if h.n == 0 {
				h.lo, h.hi = g.k, g.k
			}
			h.w += g.x
			h.n++
			h.lo, h.hi = min(h.lo, g.k), max(h.hi, g.k)
		}
	}
	total := replay(func(g segment) {
		v := keyFloat(g.k)
		weighted += v * g.x
		run += g.x
		s.min, s.max = min(s.min, v), max(s.max, v)
		n++
		top = max(top, g.k)
		tally(g)
	})
	if n == 0 || total <= 0 {
		return twStats{}
	}
	s.avg = weighted / total
	// narrow settles each search after a pass: the bucket where its
	// share is reached, or the value itself.
	narrow := func() {
		for i := range ss {
			q := &ss[i]
			if q.done {
				continue
			}
			if q.collect {
				slices.SortFunc(q.segs, func(a, b segment) int { return cmp.Compare(a.k, b.k) })
				cum := q.below
				q.done, q.none = true, true
				for j := 0; j < len(q.segs); {
					k := q.segs[j].k
					for ; j < len(q.segs) && q.segs[j].k == k; j++ {
						cum += q.segs[j].x
					}
					if cum/run >= q.q {
						q.v, q.none = keyFloat(k), false
						break
					}
				}
				q.segs = nil
				continue
			}
			cum := q.below
			found := -1
			for b := range q.hist {
				h := &q.hist[b]
				if h.n == 0 {
					continue
				}
				if (cum+h.w)/run >= q.q {
					found = b
					break
				}
				cum += h.w
			}
			if found < 0 {
				q.done, q.none = true, true
				continue
			}
			h := q.hist[found]
			q.below, q.base, q.last = cum, h.lo, h.hi
			switch {
			case h.lo == h.hi:
				q.done, q.v = true, keyFloat(h.lo)
			case h.n <= limit/(2*len(ss)): // all four gathered: half the working memory
				q.collect = true
			default:
				q.shift = uint(max(0, bits.Len64(h.hi-h.lo)-width))
			}
			clear(q.hist)
			if q.collect || q.done {
				q.hist = nil
			}
		}
	}
	narrow()
	dev := 0.0
	replay(func(g segment) {
		d := keyFloat(g.k) - s.avg
		dev += g.x * d * d
		tally(g)
	})
	s.std = math.Sqrt(dev / total)
	for {
		narrow()
		pending := false
		for i := range ss {
			pending = pending || !ss[i].done
		}
		if !pending {
			break
		}
		replay(tally)
	}
	// A share that rounding keeps below q: the largest value, for it and
	// every q above it (statsOf's quantiles).
	ps := [4]float64{}
	for i := range ss {
		if ss[i].none {
			for ; i < len(ss); i++ {
				ps[i] = keyFloat(top)
			}
			break
		}
		ps[i] = ss[i].v
	}
	s.p50, s.p90, s.p95, s.p99 = ps[0], ps[1], ps[2], ps[3]
	return s
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

package stats

import (
	"math"
	"slices"
)

// What do a histogram's data allow a percentile to be? Its bucket totals
// say which bucket each order statistic lies in, and no more; each scrape
// interval's bucket counts and exact sum say more. An interval whose two
// observations in (1, 2] add up to 3 holds one of at least 1.5, and one of
// at most 1.5; an interval whose one observation in (1, 2] came beside one
// in (0, 1] and added up to 2.4 holds it at 1.4 or more. Over the whole
// run, the q-th percentile of every sample that agrees with all of it lies
// in a range, and an estimate outside that range is wrong whatever the
// sample was.
//
// AllowedRange computes that range exactly (up to the sums' own float
// rounding, allowed for), under the premises every estimator here makes:
// observations lie in their buckets' (lower, upper] (as Prometheus' le
// says), none below min(0, the first bound) (latencies, sizes and counts
// are not negative), and each usable interval's counts and sum were read
// together (a torn read is left out where its counts or its sum show it;
// intervals.go).
//
// For a threshold x inside the bucket (l, u] that holds the order
// statistic, only that bucket's observations can lie either side of x:
// every other bucket lies wholly below or wholly above it. In an interval
// with n of them, the others' cells taken at their lowest (base) or their
// highest (cap), and sum s:
//
//   - at most min(n, ⌊(s − base − n·l)/(x − l)⌋) of them reach x: each one
//     that does costs x − l of the sum over its least;
//   - at least ⌈(s − cap − n·x)/(u − x)⌉ of them do (one, if u is +Inf):
//     the others cannot hold more than cap, the ones below x more than x
//     each.
//
// Observations of that bucket in no usable interval (a reset, a torn read)
// may lie anywhere in it. The k-th smallest observation is at least x when
// N − k of them reach x, so its least and most are where the least and the
// most counts reaching x fall below N − k, found by bisection; the
// percentile (PercentileSorted's: between the order statistics ⌊r⌋ and
// ⌈r⌉, r = q·(N − 1)) lies between the least of the first and the most of
// the second.

// AllowedRange returns, for each quantile q (a fraction, 0..1) in qs, the
// least and the most the q-th percentile of the observations can be, over
// every sample that agrees with h's bucket totals and its usable
// intervals' bucket counts and sums (see above). Both are NaN where h has
// no observations; the most is +Inf where the +Inf bucket's observations
// are not all in usable intervals.
func AllowedRange(h HistogramSeries, qs []float64) (least, most []float64) {
	count, sum, cumulative := h.Totals()
	m, ok := newBucketModel(h.Bounds, cumulative, count, sum)
	if !ok {
		return nanQuantiles(qs), nanQuantiles(qs)
	}
	return m.allowedRange(h, qs)
}

// allowedRange is AllowedRange on the model of h (the whole series, its
// atom included).
func (m *bucketModel) allowedRange(h HistogramSeries, qs []float64) (least, most []float64) {
	least, most = nanQuantiles(qs), nanQuantiles(qs)
	o := m.orderBounds(h)
	if o == nil {
		return least, most
	}
	for i, q := range qs {
		if math.IsNaN(q) {
			continue
		}
		r := math.Min(math.Max(q, 0), 1) * (o.n - 1)
		least[i], _ = o.of(math.Floor(r))
		_, most[i] = o.of(math.Ceil(r))
	}
	return least, most
}

// orderBounds answers the least and the most of each order statistic of
// one series' observations.
type orderBounds struct {
	m *bucketModel
	h HistogramSeries
	n float64 // observations
	// buckets are what each model bucket's order statistics need, built
	// when one is first asked about: an hour of scrapes holds 10,800
	// intervals, and a percentile needs one or two buckets.
	buckets []*bucketShares
}

// bucketShares is one bucket's observations in the usable intervals and
// what the rest allows them.
type bucketShares struct {
	shares []share
	// above is the observations in the buckets above, free those of this
	// bucket in no usable interval (anywhere in it).
	above, free float64
}

// share is one usable interval's observations in a bucket: how many, and
// what the interval's other cells and sum leave them.
type share struct {
	n float64
	// lowest and highest are the interval's sum less and plus its
	// rounding; base and cap its other cells at their bounds' lowest and
	// highest (cap +Inf beside a cell in the +Inf bucket).
	lowest, highest, base, cap float64
}

// orderBounds is nil where h has no observations.
func (m *bucketModel) orderBounds(h HistogramSeries) *orderBounds {
	n := math.Round(m.total)
	if !(n >= 1) {
		return nil
	}
	return &orderBounds{m: m, h: h, n: n, buckets: make([]*bucketShares, len(m.n))}
}

// sharesOf is bucket b's shares.
func (o *orderBounds) sharesOf(b int) *bucketShares {
	if bs := o.buckets[b]; bs != nil {
		return bs
	}
	m := o.m
	bs := &bucketShares{above: o.above(b)}
	d := m.decode(o.h)
	inIntervals := 0.0
	for i := range d.t {
		cells := d.cells[d.off[i]:d.off[i+1]]
		at := slices.IndexFunc(cells, func(c cell) bool { return c.j == b })
		if at < 0 {
			continue
		}
		inIntervals += cells[at].n
		whole, open := o.whole(d, i, cells)
		bs.shares = append(bs.shares, o.share(cells[at], whole, open))
	}
	bs.free = math.Max(m.n[b]-inIntervals, 0)
	o.buckets[b] = bs
	return bs
}

// whole is usable interval i with the given cells: its sum less and plus
// its rounding (sumDigits.sumRounding, as the decoder allows it), and its
// cells all at their lowest and highest (the finite ones; open when one
// is in the +Inf bucket).
func (o *orderBounds) whole(d *decodedIntervals, i int, cells []cell) (whole share, open bool) {
	m := o.m
	for _, c := range cells {
		whole.base += c.n * m.lower[c.j]
		if math.IsInf(m.upper[c.j], 1) {
			open = true
		} else {
			whole.cap += c.n * m.upper[c.j]
		}
	}
	slack := d.digits.sumRounding(o.h, d.t[i]) + 1e-300
	whole.lowest, whole.highest = d.ds[i]-slack, d.ds[i]+slack
	return whole, open
}

// share is cell c's share of a usable interval whose sum ranges over
// whole.lowest to whole.highest and whose cells all at their lowest and
// highest add up to whole.base and whole.cap (the finite ones; open when
// one is in the +Inf bucket).
func (o *orderBounds) share(c cell, whole share, open bool) share {
	m := o.m
	sh := share{n: c.n, lowest: whole.lowest, highest: whole.highest, base: whole.base - c.n*m.lower[c.j]}
	switch {
	case math.IsInf(m.upper[c.j], 1):
		sh.cap = whole.cap
	case open:
		sh.cap = math.Inf(1)
	default:
		sh.cap = whole.cap - c.n*m.upper[c.j]
	}
	return sh
}

// at is where the k-th smallest (from 0) observation lies: its bucket's
// position and bounds, and how many observations must reach a value for
// it to.
func (o *orderBounds) at(k float64) (b int, l, u, need float64) {
	m := o.m
	k = math.Min(math.Max(k, 0), o.n-1)
	below := 0.0
	for b < len(m.n)-1 && below+m.n[b] <= k {
		below += m.n[b]
		b++
	}
	return b, m.lower[b], m.upper[b], o.n - k
}

// above is the observations in the buckets above model bucket b.
func (o *orderBounds) above(b int) float64 {
	a := 0.0
	for _, c := range o.m.n[b+1:] {
		a += c
	}
	return a
}

// of is the least and the most the k-th smallest (from 0) observation
// can be.
func (o *orderBounds) of(k float64) (least, most float64) {
	b, l, u, need := o.at(k)
	if l == u {
		return l, u // a bucket of no width (le="0", atom.go)
	}
	bs := o.sharesOf(b)
	return bs.least(l, u, need), bs.most(l, u, need)
}

// clampAll holds each vs[i] within what the ks[i]-th smallest (from 0)
// observation can be. Where a value lies within, as it mostly does, one
// pass over the intervals for them all says so; only a value outside
// takes a bisection over its bucket's shares.
func (o *orderBounds) clampAll(ks, vs []float64) {
	m := o.m
	type query struct {
		l, u, need, v       float64
		mustReach, canReach float64
	}
	queries := make([]query, len(ks))
	byBucket := make([][]int, len(m.n))
	asked := false
	for i, k := range ks {
		b, l, u, need := o.at(k)
		q := query{l: l, u: u, need: need, v: vs[i]}
		if l == u {
			vs[i] = l
			continue
		}
		switch {
		case math.IsNaN(q.v):
			continue
		case q.v <= l: // at or below the bucket: at least its least
			vs[i] = o.sharesOf(b).least(l, u, need)
			continue
		case q.v > u:
			vs[i] = o.sharesOf(b).most(l, u, need)
			continue
		}
		queries[i] = q
		byBucket[b] = append(byBucket[b], i)
		asked = true
	}
	if !asked {
		return
	}
	inIntervals := make([]float64, len(m.n))
	d := m.decode(o.h)
	for i := range d.t {
		cells := d.cells[d.off[i]:d.off[i+1]]
		if !slices.ContainsFunc(cells, func(c cell) bool { return len(byBucket[c.j]) > 0 }) {
			continue
		}
		whole, open := o.whole(d, i, cells)
		for _, c := range cells {
			if len(byBucket[c.j]) == 0 {
				continue
			}
			inIntervals[c.j] += c.n
			sh := o.share(c, whole, open)
			for _, qi := range byBucket[c.j] {
				q := &queries[qi]
				q.mustReach += sh.mustReach(q.v, q.u)
				q.canReach += sh.canReach(q.v, q.l)
			}
		}
	}
	for b, qis := range byBucket {
		if len(qis) == 0 {
			continue
		}
		above := o.above(b)
		free := math.Max(m.n[b]-inIntervals[b], 0)
		for _, qi := range qis {
			q := queries[qi]
			switch {
			case above+q.mustReach >= q.need:
				vs[qi] = math.Max(q.v, o.sharesOf(b).least(q.l, q.u, q.need))
			case above+free+q.canReach < q.need:
				vs[qi] = math.Min(q.v, o.sharesOf(b).most(q.l, q.u, q.need))
			}
		}
	}
}

// mustReach is the least number of the share's observations at x or
// above, for x in their bucket (l, u]: the interval's other cells cannot
// hold more than their cap, the ones below x more than x each.
func (sh share) mustReach(x, u float64) float64 {
	over := sh.lowest - sh.cap - sh.n*x
	switch {
	case !(over > 0):
		return 0
	case math.IsInf(u, 1):
		return 1
	}
	return math.Min(sh.n, math.Ceil(over/(u-x)))
}

// canReach is the most of the share's observations at x or above, for x
// in their bucket (l, u]: each costs x − l of the sum over its least.
func (sh share) canReach(x, l float64) float64 {
	return math.Min(sh.n, math.Floor((sh.highest-sh.base-sh.n*l)/(x-l)))
}

// mustReach is the least number of observations at x or above, for x in
// the bucket (l, u].
func (bs *bucketShares) mustReach(x, u float64) float64 {
	c := bs.above
	for _, sh := range bs.shares {
		c += sh.mustReach(x, u)
	}
	return c
}

// canReach is the most observations at x or above, for x in the bucket
// (l, u].
func (bs *bucketShares) canReach(x, l float64) float64 {
	c := bs.above + bs.free
	for _, sh := range bs.shares {
		c += sh.canReach(x, l)
	}
	return c
}

// least is the most x such that every sample has need observations at x
// or above, x in the bucket (l, u].
func (bs *bucketShares) least(l, u, need float64) float64 {
	top := u
	if math.IsInf(u, 1) {
		top = l
		for _, sh := range bs.shares {
			if !math.IsInf(sh.cap, 1) {
				top = math.Max(top, (sh.lowest-sh.cap)/sh.n)
			}
		}
	}
	return boundary(l, top, func(x float64) bool { return bs.mustReach(x, u) >= need })
}

// most is the most x such that some sample has need observations at x or
// above, x in the bucket (l, u].
func (bs *bucketShares) most(l, u, need float64) float64 {
	if bs.above+bs.free >= need {
		return u
	}
	top := u
	if math.IsInf(u, 1) {
		// The largest any one of the bucket's observations can be.
		top = l
		for _, sh := range bs.shares {
			top = math.Max(top, l+sh.highest-sh.base-sh.n*l)
		}
	}
	return boundary(l, top, func(x float64) bool { return bs.canReach(x, l) >= need })
}

// boundary is the largest x in [lo, hi] where ok holds, for an ok that
// holds up to a point and not beyond (lo itself taken as holding): the
// bisection stops where lo and hi are neighbouring floats.
func boundary(lo, hi float64, ok func(float64) bool) float64 {
	if !(hi > lo) {
		return lo
	}
	if ok(hi) {
		return hi
	}
	for range 200 {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if ok(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

package stats

import (
	"math"
)

// IntervalFit is llmbench's histogram percentile estimator. Bucket counts
// alone only say which bucket each observation fell into; linear
// interpolation then spreads them evenly, which is far off when, as with
// LLM latencies, they crowd one side of a bucket. But a run also has the
// exact _sum, at every scrape. IntervalFit uses all of it:
//
//  1. Every scrape interval t says how many observations fell into each
//     bucket (n_tj) and what they summed to (s_t). If bucket j's
//     observations have mean μ_j, then s_t ≈ Σ_j n_tj·μ_j, with an error
//     whose variance grows with the interval's count. Across intervals that
//     is a linear least-squares problem in the μ_j, weighted by 1/count (the
//     generalised least squares weights for that variance). The mix of
//     buckets differs from interval to interval by chance alone, so the
//     means are identified even when no interval is single-bucket, unlike
//     AIPerf's learning.
//  2. The fit is constrained: each μ_j lies inside its bucket (the +Inf
//     bucket's above the largest bound), and the totals must add up
//     exactly: Σ_j N_j·μ_j = S. One pseudo-observation at the bucket's
//     midpoint keeps a bucket the data barely see near linear interpolation.
//     The problem is a small convex quadratic programme, solved exactly by
//     an active-set method on its KKT system.
//  3. Inside a finite bucket the observations follow the maximum-entropy
//     density on [lower, upper] with mean μ_j: a truncated exponential,
//     uniform when μ_j is the midpoint, piled against an edge when μ_j is
//     near it. In the +Inf bucket they follow an exponential tail above the
//     largest bound with mean μ_inf, the maximum-entropy law for a known
//     mean and lower bound.
//  4. Percentiles are numpy's linear ones on the implied sample (the i-th of
//     a bucket's n observations at its quantile (i+0.5)/n), computed only
//     at the two order statistics a percentile needs, so counts in the
//     millions cost nothing. Each estimate therefore lies in the bucket(s)
//     that must hold those order statistics, and is monotone in p.
type IntervalFit struct{}

// priorWeight is the pseudo-observation count pulling a bucket's mean to
// its midpoint: negligible beside real data, decisive without it.
const priorWeight = 1.0

// Quantiles implements the estimator; NaN where nothing can be said (no
// observations, an inconsistent series, or only a +Inf bucket).
func (IntervalFit) Quantiles(h HistogramSeries, qs []float64) []float64 {
	count, sum, cumulative := h.Totals()
	b, ok := newBucketModel(h.Bounds, cumulative, count, sum)
	if !ok {
		return nanQuantiles(qs)
	}
	if sum == 0 && b.lower[0] >= 0 {
		// Non-negative observations adding up to 0 are all 0.
		return make([]float64, len(qs))
	}
	b.fit(h)
	return b.quantiles(qs)
}

// bucketModel holds the buckets with observations and their fitted means.
type bucketModel struct {
	// Per bucket with observations, in increasing order.
	index        []int // into the series' Bounds
	lower, upper []float64
	n            []float64 // observations in the bucket
	mean         []float64 // fitted
	infinite     bool      // the last bucket is +Inf
	total, sum   float64
}

func newBucketModel(bounds, cumulative []float64, count, sum float64) (*bucketModel, bool) {
	if count <= 0 || math.IsNaN(sum) || math.IsInf(sum, 0) || len(bounds) == 0 {
		return nil, false
	}
	finite := 0
	for _, b := range bounds {
		if !math.IsInf(b, 1) {
			finite++
		}
	}
	if finite == 0 {
		return nil, false
	}
	m := &bucketModel{sum: sum}
	prevCum, lower := 0.0, math.Min(0, bounds[0])
	for i, ub := range bounds {
		n := cumulative[i] - prevCum
		prevCum = math.Max(prevCum, cumulative[i])
		if n > 0 {
			m.index = append(m.index, i)
			m.lower = append(m.lower, lower)
			m.upper = append(m.upper, ub)
			m.n = append(m.n, n)
			m.total += n
			m.infinite = math.IsInf(ub, 1)
		}
		lower = ub
	}
	if m.total <= 0 {
		return nil, false
	}
	if m.infinite && len(m.n) == 1 && m.lower[0] <= 0 {
		return nil, false // everything in +Inf with no finite bound below
	}
	m.mean = make([]float64, len(m.n))
	return m, true
}

// fit solves step 2: bounded, sum-constrained weighted least squares of
// the interval sums on the bucket counts.
func (m *bucketModel) fit(h HistogramSeries) {
	k := len(m.n)
	pos := make(map[int]int, k) // series bucket index → model position
	for j, i := range m.index {
		pos[i] = j
	}
	a := make([][]float64, k)
	for j := range a {
		a[j] = make([]float64, k)
	}
	rhs := make([]float64, k)
	lo, hi := make([]float64, k), make([]float64, k)
	for j := range k {
		lo[j], hi[j] = m.lower[j], m.upper[j]
		prior := (m.lower[j] + m.upper[j]) / 2
		if math.IsInf(hi[j], 1) {
			prior = 1.5 * m.lower[j] // AIPerf's +Inf fallback, a weak guess
		}
		a[j][j] += priorWeight
		rhs[j] += priorWeight * prior
	}

	// One interval's per-bucket counts, as (model position, count) pairs.
	type cell struct {
		j int
		n float64
	}
	cells := make([]cell, 0, k)
	nb := len(h.Bounds)
	for t := 1; t < h.Scrapes(); t++ {
		ds := h.Sum[t] - h.Sum[t-1]
		dc := h.Count[t] - h.Count[t-1]
		if dc <= 0 || ds < 0 || math.IsNaN(ds) {
			continue // nothing new, or a reset: no information
		}
		cells = cells[:0]
		prev, seen, ok := 0.0, 0.0, true
		for i := range nb {
			d := h.Buckets[t][i] - h.Buckets[t-1][i]
			n := d - prev
			prev = d
			if n < 0 {
				ok = false // a torn or reset interval
				break
			}
			if n == 0 {
				continue
			}
			j, in := pos[i]
			if !in {
				ok = false // counts where the totals have none: a reset
				break
			}
			cells = append(cells, cell{j, n})
			seen += n
		}
		if !ok || seen == 0 || math.Abs(seen-dc) > 0.5 {
			continue
		}
		w := 1 / seen
		for x, cx := range cells {
			rhs[cx.j] += w * cx.n * ds
			for _, cy := range cells[x:] {
				a[cx.j][cy.j] += w * cx.n * cy.n
			}
		}
	}
	for x := range k { // the upper triangle was filled
		for y := x + 1; y < k; y++ {
			a[y][x] = a[x][y]
		}
	}
	m.mean = boxQP(a, rhs, lo, hi, m.n, m.sum)
}

// quantiles evaluates step 4.
func (m *bucketModel) quantiles(qs []float64) []float64 {
	shapes := make([]bucketShape, len(m.n))
	for j := range m.n {
		shapes[j] = newBucketShape(m.lower[j], m.upper[j], m.mean[j])
	}
	// value is the k-th order statistic (0-based) of the implied sample.
	value := func(k float64) float64 {
		before := 0.0
		for j, n := range m.n {
			if k < before+n || j == len(m.n)-1 {
				if n <= 1 {
					return m.mean[j] // a lone observation is its bucket's mean
				}
				f := (math.Min(math.Max(k-before, 0), n-1) + 0.5) / n
				return shapes[j].quantile(f)
			}
			before += n
		}
		return math.NaN()
	}
	out := make([]float64, len(qs))
	last := m.total - 1
	for i, q := range qs {
		r := math.Min(math.Max(q, 0), 1) * last
		lo := math.Floor(r)
		v := value(lo)
		if frac := r - lo; frac > 0 {
			v += frac * (value(lo+1) - v)
		}
		out[i] = v
	}
	return out
}

// bucketShape is the maximum-entropy density of a bucket given its mean.
type bucketShape struct {
	lower, width float64
	// beta is the exponential rate on [0, 1] for a finite bucket; for the
	// +Inf bucket, theta is the mean excess above lower.
	beta, theta float64
	infinite    bool
}

func newBucketShape(lower, upper, mean float64) bucketShape {
	if math.IsInf(upper, 1) {
		return bucketShape{lower: lower, theta: math.Max(mean-lower, 0), infinite: true}
	}
	s := bucketShape{lower: lower, width: upper - lower}
	if s.width <= 0 {
		return s
	}
	s.beta = truncExpRate((mean - lower) / s.width)
	return s
}

// quantile is the f-quantile (0 < f < 1) of the shape.
func (s bucketShape) quantile(f float64) float64 {
	if s.infinite {
		return s.lower - s.theta*math.Log1p(-f)
	}
	var x float64
	switch b := s.beta; {
	case math.IsInf(b, -1):
		x = 0
	case math.IsInf(b, 1):
		x = 1
	case math.Abs(b) < 1e-9:
		x = f
	case b > 0:
		x = 1 + math.Log(f+(1-f)*math.Exp(-b))/b
	default:
		x = math.Log1p(f*math.Expm1(b)) / b
	}
	return s.lower + s.width*math.Min(math.Max(x, 0), 1)
}

// truncExpMean is the mean of the density ∝ e^{βx} on [0, 1].
func truncExpMean(beta float64) float64 {
	switch {
	case math.Abs(beta) < 1e-6:
		return 0.5 + beta/12 // the series at 0
	case beta < 0:
		return 1 - truncExpMean(-beta)
	}
	return -1/math.Expm1(-beta) - 1/beta
}

// truncExpRate inverts truncExpMean by bisection (it is increasing);
// ±Inf for a mean at an edge.
func truncExpRate(mean float64) float64 {
	switch {
	case mean <= 0:
		return math.Inf(-1)
	case mean >= 1:
		return math.Inf(1)
	}
	lo, hi := -1e9, 1e9
	for range 200 {
		mid := (lo + hi) / 2
		if truncExpMean(mid) < mean {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo <= 1e-12*math.Max(1, math.Abs(mid)) {
			break
		}
	}
	return (lo + hi) / 2
}

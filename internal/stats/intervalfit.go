package stats

import (
	"math"
	"slices"
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
//     exactly: Σ_j N_j·μ_j = S. Pseudo-observations at the mean of the
//     log-linear density the neighbours' counts suggest keep a bucket the
//     data barely see near that guess: one, or as many (up to 10) as the
//     fitted means show the guess to be good (priorweight.go).
//     The problem is a small convex quadratic programme, solved exactly by
//     an active-set method on its KKT system.
//  3. Inside a finite bucket the observations follow the maximum-entropy
//     density on [lower, upper] with mean μ_j: a truncated exponential,
//     uniform when μ_j is the midpoint, piled against an edge when μ_j is
//     near it. In the +Inf bucket they follow an exponential tail above the
//     largest bound with mean μ_inf, the maximum-entropy law for a known
//     mean and lower bound.
//     Where the residuals measure a bucket's variance, the law has that
//     variance too (maxent.go; in +Inf, a generalized Pareto tail). When a
//     finite bucket's observations came mostly in intervals it alone
//     received (every observation in one bucket: a tight cluster), each
//     such interval's mean is exact, and the law is instead the mixture of
//     the intervals' means, each spread by the within-interval variance
//     read from their successive differences (cluster.go): batches that
//     finish together make one interval's observations alike, which the
//     variance fit would misread as spread. Where the variance is unknown
//     and two neighbouring buckets' shapes both pile against the bound
//     they share, the mode is moved inside the one denser there, and its
//     curvature carried into the other (edgepeak.go). Where a saturated
//     queue moves whole intervals across a bound together (the bucket
//     mix overdispersed from interval to interval, and explained better
//     by one normal law per interval centred by its sum), every bucket's
//     law is instead the mixture of those laws truncated to it
//     (batchlaw.go): least squares would credit a slow batch's
//     observations under the bound to the bucket above.
//     A first bucket of no width (a first bound ≤ 0, as le="0") is an
//     atom known exactly, set aside before the fit (atom.go).
//  4. Percentiles are numpy's linear ones on the implied sample (the i-th of
//     a bucket's n observations at its quantile (i+0.5)/n), computed only
//     at the two order statistics a percentile needs, so counts in the
//     millions cost nothing. Each estimate therefore lies in the bucket(s)
//     that must hold those order statistics, and is monotone in p.
//  5. Each order statistic is then held within what the counts and sums
//     allow it (allowed.go): a law fitted to a bucket's many intervals
//     can put its largest observation below what one interval's sum
//     shows it reached (integers 0 to 6 in (1, +Inf]: p99 2.93 where the
//     sums show at least 3).
type IntervalFit struct{}

// priorWeight is the default pseudo-observation count pulling a bucket's
// mean to its prior guess (priorMeans): negligible beside real data,
// decisive without it.
const priorWeight = 1.0

// Quantiles implements the estimator; NaN where nothing can be said (no
// observations, an inconsistent series, or only a +Inf bucket).
func (IntervalFit) Quantiles(h HistogramSeries, qs []float64) []float64 {
	whole := h
	h, atom := splitAtom(h)
	count, sum, cumulative := h.Totals()
	if count <= 0 && atom.n > 0 {
		return atom.everywhere(qs)
	}
	b, ok := newBucketModel(h.Bounds, cumulative, count, sum)
	if !ok {
		return nanQuantiles(qs)
	}
	b.atom = atom
	if sum == 0 && b.lower[0] >= 0 {
		// Non-negative observations adding up to 0 are all 0.
		return make([]float64, len(qs))
	}
	b.fitAll(h)
	// What the data allow each order statistic: on the whole series,
	// whose model is b's unless an atom was set aside.
	allowed := b
	if atom.n > 0 {
		wholeCount, wholeSum, wholeCumulative := whole.Totals()
		if allowed, ok = newBucketModel(whole.Bounds, wholeCumulative, wholeCount, wholeSum); !ok {
			allowed = nil
		}
	}
	if allowed != nil {
		b.allowed = allowed.orderBounds(whole)
	}
	return b.quantiles(qs)
}

// fitAll fits the buckets' means (steps 1 and 2) and chooses their laws'
// families (step 3).
func (m *bucketModel) fitAll(h HistogramSeries) {
	m.fitSegments(h)
	m.cluster = m.clusterMixtures(h)
	m.batch = m.batchMixtures(h)
	if len(m.segs) == 1 && m.batch == nil {
		m.edges = newEdgePeaks(m)
	}
}

// bucketModel holds the buckets with observations and their fitted means.
type bucketModel struct {
	// Per bucket with observations, in increasing order.
	index        []int // into the series' Bounds
	lower, upper []float64
	n            []float64 // observations in the bucket
	mean         []float64 // fitted over the whole run
	// segs are the run's spans, each with its own counts and fitted means;
	// a bucket's distribution is the count-weighted mixture over them.
	segs []segment
	// vars are the fitted within-bucket variances, for a run that is one
	// span, and edges those with the edge-peak rule applied (edgepeak.go).
	vars  []float64
	edges *edgePeaks
	// cluster, where set, is a bucket's law as the mixture of the exact
	// means of the intervals it alone received observations in
	// (cluster.go).
	cluster []*bucketMixture
	// batch, where set, is every bucket's law as the mixture over
	// intervals of one normal law per interval (batchlaw.go).
	batch []*bucketMixture
	// atom is the observations set aside at the first bound (splitAtom).
	atom atom
	// decoded are the series' usable intervals (intervals.go).
	decoded *decodedIntervals
	// laws are the buckets' laws, built as needed (law).
	laws []*bucketMixture
	// allowed, where set, bounds each order statistic of the whole series
	// (the atom's included) by what its counts and sums allow.
	allowed *orderBounds
	// used is the number of intervals the last fit used.
	used int
	// wholeFit is the whole run's fit's information, for its means'
	// standard errors.
	wholeFit   fitInfo
	infinite   bool // the last bucket is +Inf
	total, sum float64
}

// maxMagnitude bounds the sums and bounds the fit takes: its weighted
// squares of larger ones overflow. No real metric comes near it; a sum
// beyond it is a broken or hostile exporter's, and has no estimate.
const maxMagnitude = 1e150

func newBucketModel(bounds, cumulative []float64, count, sum float64) (*bucketModel, bool) {
	if count <= 0 || !(math.Abs(sum) <= maxMagnitude) || len(bounds) == 0 {
		return nil, false
	}
	finite := 0
	for _, b := range bounds {
		if !math.IsInf(b, 1) {
			if !(math.Abs(b) <= maxMagnitude) {
				return nil, false
			}
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

// segment is one span of the run, scrapes from..to: its per-bucket counts
// and fitted means.
type segment struct {
	from, to int
	n, mean  []float64
}

// When the distribution moved during the run (a load that shifts, a cache
// that warms up), one mean per bucket fits neither part. The run is then
// cut where its bucket mix changed (changepoint.go), each span fitted to
// its own intervals and exact sum, with priors from its own counts (the
// whole run's fit is the wrong prior once the distribution moved), and a
// bucket is modelled as the mixture of its spans. Whether and where it
// moved is read from the exact bucket counts. A stationary run stays one
// span, since spans only add noise there, and so does a run too short to
// fit spans: a span keeps 12 intervals with observations, enough to fit
// the few buckets one regime occupies (a 15-second run whose cache warmed
// after 5 s is cut; at 30 it was not, and p90 read 15 % high: see
// TestChangeCutsShortRun). The cut's chi-square test, not the span's
// length, keeps a stationary run whole.
const (
	maxSegments         = 4
	minSegmentIntervals = 12
)

// fitSegments fits the whole run, then each span.
func (m *bucketModel) fitSegments(h HistogramSeries) {
	last := h.Scrapes() - 1
	m.mean, m.wholeFit = m.fit(h, 0, last, m.n, m.sum, m.priorMeans(m.n), priorWeight)
	wholeUsed := m.used
	if cuts := m.changeCuts(h); len(cuts) > 1 {
		for _, c := range cuts {
			n, _ := m.countsBetween(h, c[0], c[1])
			if sum := h.Sum[c[1]] - h.Sum[c[0]]; sum >= 0 {
				mean, _ := m.fit(h, c[0], c[1], n, sum, m.priorMeans(n), priorWeight)
				m.segs = append(m.segs, segment{from: c[0], to: c[1], n: n, mean: mean})
			}
		}
	}
	if len(m.segs) == 0 {
		m.segs = []segment{{from: 0, to: last, n: m.n, mean: m.mean}}
		m.used = wholeUsed // the spans' fits, if any, overwrote it
		m.vars = m.fitVariances(h)
	}
}

// countsBetween is each model bucket's observations from scrape from to
// scrape to, and their total.
func (m *bucketModel) countsBetween(h HistogramSeries, from, to int) ([]float64, float64) {
	n := make([]float64, len(m.n))
	return n, m.countsInto(n, h, from, to)
}

// countsInto is countsBetween writing into n.
func (m *bucketModel) countsInto(n []float64, h HistogramSeries, from, to int) float64 {
	total := 0.0
	for j, i := range m.index {
		// Bucket i's own count: the cumulative difference less the one
		// below it, each clamped at 0 as a torn read can make them.
		d := math.Max(h.Buckets[to][i]-h.Buckets[from][i], 0)
		below := 0.0
		if i > 0 {
			below = math.Max(h.Buckets[to][i-1]-h.Buckets[from][i-1], 0)
		}
		n[j] = math.Max(d-below, 0)
		total += n[j]
	}
	return total
}

// spread2 is each bucket's variance scale: an observation's variance
// inside a bucket of width w is about w²/12 (uniform). The +Inf bucket is
// given the largest finite bound as its width.
func (m *bucketModel) spread2() []float64 {
	out := make([]float64, len(m.n))
	for j := range out {
		w := m.upper[j] - m.lower[j]
		if math.IsInf(w, 1) {
			w = m.lower[j]
		}
		out[j] = math.Max(w*w/12, 1e-300)
	}
	return out
}

// fit solves step 2 over scrapes from..to: bounded, sum-constrained
// weighted least squares of the interval sums on the bucket counts, with n
// and sum the counts and sum of that span and weight pseudo-observations
// at prior. An interval's sum has variance about Σ n_tj·spread²_j; its
// generalised least-squares weight is the inverse.
//
// That variance is the uniform shape's, and a bucket's observations are
// often far tighter (ITLs within half a millisecond of a bound, in a bucket
// 15 ms wide): the data then carry far more information than the weights
// say, and the prior, whose pseudo-observations sit at the guess from the
// neighbours' counts, pulls a weakly identified mean (two buckets either side of a tight
// cluster) far off. So the fit is solved twice: the second time with the
// prior scaled by the dispersion the first fit's residuals show,
// φ = Σ w_t·r_t² / (T − k), when it is below 1, and once more where the
// fitted means show the prior better than its default weight says
// (priorweight.go).
func (m *bucketModel) fit(h HistogramSeries, from, to int, n []float64, sum float64, prior []float64, weight float64) ([]float64, fitInfo) {
	k := len(m.n)
	spread2 := m.spread2()
	var a [][]float64
	var perBucket []float64
	solve := func(weight float64) []float64 {
		a = newMatrix(k)
		rhs := make([]float64, k)
		for j := range k {
			// The prior: weight pseudo-observations at prior[j], with the
			// same variance scale as the bucket's real ones.
			wj := weight
			if perBucket != nil {
				wj *= perBucket[j]
			}
			a[j][j] += wj / spread2[j]
			rhs[j] += wj * prior[j] / spread2[j]
		}
		m.used = 0
		m.intervals(h, from, to, func(ds float64, cells []cell) {
			m.used++
			w := 1 / intervalVariance(cells, spread2)
			for x, cx := range cells {
				rhs[cx.j] += w * cx.n * ds
				for _, cy := range cells[x:] {
					a[cx.j][cy.j] += w * cx.n * cy.n
				}
			}
		})
		symmetrize(a)
		return boxQP(a, rhs, m.lower, m.upper, n, sum)
	}
	mean := solve(weight)
	phi := 1.0
	if m.used > k {
		chi2 := 0.0
		m.intervals(h, from, to, func(ds float64, cells []cell) {
			r := ds
			for _, c := range cells {
				r -= c.n * mean[c.j]
			}
			chi2 += r * r / intervalVariance(cells, spread2)
		})
		if phi = chi2 / float64(m.used-k); phi < 1 && phi > 0 {
			mean = solve(weight * phi)
		} else if !(phi > 0) {
			phi = 1
		}
		// The prior's weight as far as the fit shows it good
		// (priorweight.go).
		// The solves' prior: weight·min(φ, 1) pseudo-observations in the
		// normalised system, each bucket's real variance φ·spread²/that.
		priorVar := make([]float64, k)
		for j := range k {
			priorVar[j] = phi * spread2[j] / (weight * math.Min(phi, 1))
		}
		if pb := m.priorWeights(a, phi, priorVar, mean, prior, n); pb != nil {
			perBucket = pb
			mean = solve(weight * math.Min(phi, 1))
		}
	}
	return mean, fitInfo{a, phi}
}

// fitInfo is what a fit knows of its means' precision: the information
// matrix its intervals (and prior) gave, and the dispersion its residuals
// showed.
type fitInfo struct {
	a   [][]float64
	phi float64
}

// meanSE is the standard error of bucket j's fitted mean, 0 when unknown.
func (f fitInfo) meanSE(j int) float64 {
	if f.a == nil {
		return 0
	}
	se := math.Sqrt(f.phi * inverseDiagonal(f.a, j))
	if math.IsNaN(se) || math.IsInf(se, 0) {
		return 0
	}
	return se
}

// intervalVariance is an interval sum's variance under the uniform shape.
func intervalVariance(cells []cell, spread2 []float64) float64 {
	v := 0.0
	for _, c := range cells {
		v += c.n * spread2[c.j]
	}
	return v
}

// Variances from the residuals (stationary runs only).
const (
	// varianceRidge is the (negligible) pseudo-observations at the
	// exponential shape's variance that keep the fit well-posed. Where the
	// residuals say little, the gate below falls back to that shape; a
	// real prior would instead be averaged, linearly, with a measured
	// variance that may be a thousand times smaller, and swamp it.
	varianceRidge = 1e-9
	// varianceChange is how far (relatively) a fitted variance must be from
	// the exponential shape's for the shape to change.
	varianceChange = 0.1
)

// fitVariances estimates each bucket's within-bucket variance from the
// residuals of the fit: an interval's residual r_t = s_t − Σ n_tj·μ_j has
// E[r_t²] = Σ n_tj·σ_j², a linear model in the σ_j², fitted by weighted
// least squares (Var(r²) = 2·E[r²]² for a normal residual) with each σ_j²
// between 0 and the largest a distribution on the bucket with mean μ_j can
// have, (μ_j − lower)(upper − μ_j). The k fitted means use up k of the T
// intervals' degrees of freedom, so the squared residuals are scaled by
// T/(T − k), and with T ≤ 2k nothing is estimated. A variance is kept only
// where it departs from the exponential shape's by more than 1.5 standard
// errors (from the inverse information); elsewhere it is NaN and the bucket
// keeps the exponential shape. Buckets whose counts move together (two
// buckets either side of a tight cluster) share their information, so
// neither variance alone passes: the gate then rightly changes nothing.
func (m *bucketModel) fitVariances(h HistogramSeries) []float64 {
	k := len(m.n)
	used := m.used // by the whole-run fit, just before
	if used <= 2*k {
		return nil
	}
	dof := float64(used) / float64(used-k)
	fallback := make([]float64, k)
	lo, hi := make([]float64, k), make([]float64, k)
	for j := range k {
		s := newBucketShape(m.lower[j], m.upper[j], m.mean[j])
		fallback[j] = math.Max(s.variance(), 1e-300)
		hi[j] = math.Inf(1)
		if !s.infinite {
			hi[j] = math.Max((m.mean[j]-m.lower[j])*(m.upper[j]-m.mean[j]), 0)
		}
	}
	a := newMatrix(k)
	rhs := make([]float64, k)
	for j := range k {
		a[j][j] += varianceRidge / (2 * fallback[j] * fallback[j])
		rhs[j] += varianceRidge / (2 * fallback[j])
	}
	m.intervals(h, 0, h.Scrapes()-1, func(ds float64, cells []cell) {
		r, expected := ds, 0.0
		for _, c := range cells {
			r -= c.n * m.mean[c.j]
			expected += c.n * fallback[c.j]
		}
		w := 1 / (2 * expected * expected)
		for x, cx := range cells {
			rhs[cx.j] += w * cx.n * r * r * dof
			for _, cy := range cells[x:] {
				a[cx.j][cy.j] += w * cx.n * cy.n
			}
		}
	})
	symmetrize(a)
	v := boxLS(a, rhs, lo, hi)
	for j := range k {
		if se := math.Sqrt(inverseDiagonal(a, j)); !(math.Abs(v[j]-fallback[j]) > 1.5*se) {
			v[j] = math.NaN()
		}
	}
	return v
}

// inverseDiagonal is (A⁻¹)_jj, by solving A·x = e_j.
func inverseDiagonal(a [][]float64, j int) float64 {
	k := len(a)
	aug := make([][]float64, k)
	for r := range aug {
		aug[r] = make([]float64, k+1)
		copy(aug[r], a[r])
	}
	aug[j][k] = 1
	return gaussSolve(aug)[j]
}

func newMatrix(k int) [][]float64 {
	a := make([][]float64, k)
	for j := range a {
		a[j] = make([]float64, k)
	}
	return a
}

// symmetrize copies the upper triangle, which the fits fill, to the lower.
func symmetrize(a [][]float64) {
	for x := range a {
		for y := x + 1; y < len(a); y++ {
			a[y][x] = a[x][y]
		}
	}
}

// priorMeans guesses each bucket's mean before the data speak, from the
// density around it: the log-density slope through the neighbouring
// buckets (counts over widths, empty ones included) gives the bucket a
// log-linear density, whose mean is the guess. For the +Inf bucket, the
// slope of the last finite bucket continued as an exponential tail.
func (m *bucketModel) priorMeans(n []float64) []float64 {
	out := make([]float64, len(m.n))
	for j := range m.n {
		lower, upper := m.lower[j], m.upper[j]
		if math.IsInf(upper, 1) {
			out[j] = 1.5 * lower
			if g := m.logDensitySlope(n, j-1); g < 0 && j > 0 {
				out[j] = lower + math.Min(-1/g, lower)
			}
			continue
		}
		beta := math.Max(math.Min(m.logDensitySlope(n, j)*(upper-lower), 20), -20)
		out[j] = lower + (upper-lower)*truncExpMean(beta)
	}
	return out
}

// logDensitySlope is d(log density)/dx around model bucket j given the
// counts n, from the densities of the buckets on either side of it in the
// series (empty ones count, with half an observation so the log is
// finite); 0 when unknown.
func (m *bucketModel) logDensitySlope(n []float64, j int) float64 {
	if j < 0 || j >= len(n) {
		return 0
	}
	type point struct{ x, logD float64 }
	at := func(lower, upper, n float64) point {
		return point{(lower + upper) / 2, math.Log((n + 0.5) / (upper - lower))}
	}
	c := at(m.lower[j], m.upper[j], n[j])
	var left, right *point
	if j > 0 && m.upper[j-1] == m.lower[j] && !math.IsInf(m.upper[j-1], 1) {
		p := at(m.lower[j-1], m.upper[j-1], n[j-1])
		left = &p
	} else if m.lower[j] > 0 && j > 0 {
		// An empty bucket between: density about 0 just below.
		p := at(m.upper[j-1], m.lower[j], 0)
		left = &p
	}
	if j+1 < len(n) && m.lower[j+1] == m.upper[j] && !math.IsInf(m.upper[j+1], 1) {
		p := at(m.lower[j+1], m.upper[j+1], n[j+1])
		right = &p
	} else if j+1 < len(n) && !math.IsInf(m.lower[j+1], 1) && m.lower[j+1] > m.upper[j] {
		p := at(m.upper[j], m.lower[j+1], 0)
		right = &p
	}
	switch {
	case left != nil && right != nil:
		return (right.logD - left.logD) / (right.x - left.x)
	case left != nil:
		return (c.logD - left.logD) / (c.x - left.x)
	case right != nil:
		return (right.logD - c.logD) / (right.x - c.x)
	}
	return 0
}

// law is bucket j's distribution under the model (step 3), built when
// first needed and kept.
func (m *bucketModel) law(j int) *bucketMixture {
	if m.laws == nil {
		m.laws = make([]*bucketMixture, len(m.n))
	}
	if m.laws[j] != nil {
		return m.laws[j]
	}
	x := &bucketMixture{}
	switch {
	case m.batch != nil && m.batch[j] != nil:
		x = m.batch[j]
	case m.cluster != nil && m.cluster[j] != nil:
		x = m.cluster[j]
	case m.edges != nil:
		x.add(newTwoMomentShape(m.lower[j], m.upper[j], m.mean[j], m.edges.variance(j)), 1)
	default:
		for _, sg := range m.segs {
			if sg.n[j] > 0 {
				x.add(newBucketShape(m.lower[j], m.upper[j], sg.mean[j]), sg.n[j])
			}
		}
		if len(x.shapes) == 0 {
			x.add(newBucketShape(m.lower[j], m.upper[j], m.mean[j]), 1)
		}
	}
	m.laws[j] = x
	return x
}

// fittedValue is the k-th order statistic (0-based) of the sample the
// fitted laws imply, the atom's first.
func (m *bucketModel) fittedValue(k float64) float64 {
	if k < m.atom.n {
		return m.atom.at
	}
	k -= m.atom.n
	before := 0.0
	for j, n := range m.n {
		if k < before+n || j == len(m.n)-1 {
			if n <= 1 {
				return m.mean[j] // a lone observation is its bucket's mean
			}
			f := (math.Min(math.Max(k-before, 0), n-1) + 0.5) / n
			return m.law(j).quantile(f)
		}
		before += n
	}
	return math.NaN()
}

// quantiles evaluates steps 4 and 5: a bucket's law is built when a
// percentile first needs it.
func (m *bucketModel) quantiles(qs []float64) []float64 {
	// The order statistics (0-based) the percentiles need, and their
	// values, held within what the data allow them all at once.
	last := m.total + m.atom.n - 1
	rank := func(q float64) float64 { return math.Min(math.Max(q, 0), 1) * last }
	var ks []float64
	for _, q := range qs {
		lo := math.Floor(rank(q))
		ks = append(ks, lo)
		if rank(q) > lo {
			ks = append(ks, lo+1)
		}
	}
	slices.Sort(ks)
	ks = slices.Compact(ks)
	vs := make([]float64, len(ks))
	for i, k := range ks {
		vs[i] = m.fittedValue(k)
	}
	if m.allowed != nil {
		m.allowed.clampAll(ks, vs)
	}
	value := func(k float64) float64 {
		i, _ := slices.BinarySearch(ks, k)
		return vs[i]
	}
	out := make([]float64, len(qs))
	for i, q := range qs {
		r := rank(q)
		lo := math.Floor(r)
		v := value(lo)
		if frac := r - lo; frac > 0 {
			v += frac * (value(lo+1) - v)
		}
		out[i] = v
	}
	return out
}

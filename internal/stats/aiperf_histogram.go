package stats

import (
	"math"
	"slices"
)

// AIPerfPolynomial is AIPerf's "polynomial histogram" percentile estimator
// (server_metrics/histogram_percentiles.py, July 2026), reproduced step by
// step so that llmbench runs can be compared with AIPerf's. It learns a
// bucket's mean only from the scrape intervals whose new observations all
// fell into that one bucket, generates up to 100,000 synthetic observations
// bucket by bucket, and takes numpy's percentiles of them. The constants and
// the order of operations are AIPerf's; see aiperf-implementation-notes S8.
type AIPerfPolynomial struct{}

// AIPerf's constants.
const (
	aiperfMaxObservations     = 100000
	aiperfMinVarianceSamples  = 3
	aiperfDominance           = 0.95
	aiperfTwoPointSpread      = 0.01
	aiperfBlendSpread         = 0.2
	aiperfBlendOffset         = 0.3
	aiperfBlendFactor         = 0.5
	aiperfSigmaClamp          = 3.0
	aiperfInfFallbackFactor   = 1.5
	aiperfInfUpperFactor      = 2.0
	aiperfSumTolerance        = 0.001
	aiperfShiftCapOfBucketWid = 0.4
)

// Quantiles learns the per-bucket statistics from the whole series and
// estimates from its totals; NaN everywhere when AIPerf returns none.
func (AIPerfPolynomial) Quantiles(h HistogramSeries, qs []float64) []float64 {
	count, sum, cumulative := h.Totals()
	out := aiperfEstimate(h.Bounds, cumulative, aiperfLearn(h), sum, int64(count), qs)
	if out == nil {
		return nanQuantiles(qs)
	}
	return out
}

// aiperfBucketStats is what AIPerf learns about one bucket.
type aiperfBucketStats struct {
	observations    float64 // Σ dc
	weightedMeanSum float64 // Σ mean·dc
	means           []float64
}

func (b *aiperfBucketStats) record(mean, count float64) {
	b.observations += count
	b.weightedMeanSum += mean * count
	b.means = append(b.means, mean)
}

func (b *aiperfBucketStats) mean() (float64, bool) {
	if b == nil || b.observations == 0 {
		return 0, false
	}
	return b.weightedMeanSum / b.observations, true
}

// variance is the sample variance (ddof 1) of the recorded interval means,
// not of the observations, as AIPerf computes it.
func (b *aiperfBucketStats) variance() (float64, bool) {
	if b == nil || len(b.means) < aiperfMinVarianceSamples {
		return 0, false
	}
	var m float64
	for _, x := range b.means {
		m += x
	}
	m /= float64(len(b.means))
	var ss float64
	for _, x := range b.means {
		ss += (x - m) * (x - m)
	}
	return ss / float64(len(b.means)-1), true
}

// aiperfLearn is accumulate_bucket_statistics: for each pair of consecutive
// scrapes whose new observations all landed in one bucket, that bucket's
// mean is the interval's sum over its count. Keyed by bucket index.
func aiperfLearn(h HistogramSeries) map[int]*aiperfBucketStats {
	learned := map[int]*aiperfBucketStats{}
	nb := len(h.Bounds)
	perBucket := make([]float64, nb)
	for i := 1; i < h.Scrapes(); i++ {
		dc := float64(int64(h.Count[i] - h.Count[i-1]))
		ds := h.Sum[i] - h.Sum[i-1]
		prev := 0.0
		hit, hits := -1, 0
		for k := range nb {
			d := math.Max(h.Buckets[i][k]-h.Buckets[i-1][k], 0)
			perBucket[k] = math.Max(d-prev, 0)
			prev = d
			if perBucket[k] > 0 {
				hit, hits = k, hits+1
			}
		}
		if dc <= 0 || hits != 1 {
			continue
		}
		st := learned[hit]
		if st == nil {
			st = &aiperfBucketStats{}
			learned[hit] = st
		}
		st.record(ds/dc, dc)
	}
	return learned
}

// aiperfEstimate is compute_estimated_percentiles on cumulative bucket
// deltas (bounds increasing, +Inf last if present), the learned statistics,
// and the exact sum and count deltas. nil means AIPerf returns none.
func aiperfEstimate(bounds, cumulative []float64, learned map[int]*aiperfBucketStats, sum float64, count int64, qs []float64) []float64 {
	// Phase 0: guards.
	if count <= 0 || len(bounds) == 0 || math.IsNaN(sum) || math.IsInf(sum, 0) || sum < 0 {
		return nil
	}
	if sum == 0 {
		return make([]float64, len(qs))
	}
	var finite []int
	inf := -1
	for i, b := range bounds {
		if math.IsInf(b, 1) {
			inf = i
		} else {
			finite = append(finite, i)
		}
	}
	if len(finite) == 0 {
		return nil
	}
	maxBound := bounds[finite[len(finite)-1]]
	c := make([]float64, len(bounds))
	prev := 0.0
	for _, i := range finite {
		c[i] = cumulative[i] - prev
		prev = cumulative[i]
	}
	cInf := 0.0
	if inf >= 0 {
		cInf = cumulative[inf] - prev
	}
	aiperfDownsample(cInf+finiteTotal(c, finite), c, finite, &cInf, &sum)
	lowerOf := func(j int) float64 { // j indexes finite
		if j == 0 {
			return 0
		}
		return bounds[finite[j-1]]
	}
	learnedMean := func(i int, lower, upper float64) (float64, bool) {
		m, ok := learned[i].mean()
		return m, ok && lower < m && m < upper
	}

	// Phase 2: the finite buckets' estimated sums.
	finiteSum := 0.0
	for j, i := range finite {
		if c[i] <= 0 {
			continue
		}
		lower, upper := lowerOf(j), bounds[i]
		mean, ok := learnedMean(i, lower, upper)
		if !ok {
			mean = (lower + upper) / 2
		}
		finiteSum += c[i] * mean
	}

	// Phase 3: the +Inf observations, back-calculated from the sum.
	var infObs []float64
	if cInf > 0 {
		k := int(math.Ceil(cInf))
		infAvg := aiperfInfFallbackFactor * maxBound
		if infSum := sum - finiteSum; infSum > 0 {
			if infAvg = infSum / float64(k); infAvg <= maxBound {
				infAvg = aiperfInfFallbackFactor * maxBound
			}
		}
		hi := 2*infAvg - maxBound
		if hi <= maxBound {
			hi = aiperfInfUpperFactor * maxBound
		}
		if k == 1 {
			infObs = []float64{infAvg}
		} else {
			infObs = linspace(maxBound, hi, k)
		}
	}
	finiteTarget := sum
	for _, x := range infObs {
		finiteTarget -= x
	}

	// Phase 4: the finite observations under the sum constraint.
	obs := aiperfFiniteObservations(bounds, finite, c, learned, finiteTarget)
	all := append(obs, infObs...)
	if len(all) == 0 {
		return nil
	}
	slices.Sort(all)
	out := make([]float64, len(qs))
	for i, q := range qs {
		out[i] = PercentileSorted(all, q*100)
	}
	return out
}

// aiperfFiniteObservations is _generate_observations_with_sum_constraint.
func aiperfFiniteObservations(bounds []float64, finite []int, c []float64, learned map[int]*aiperfBucketStats, target float64) []float64 {
	// AIPerf caps the finite counts a second time (redundant after the first).
	aiperfDownsample(finiteTotal(c, finite), c, finite, &target)
	total := finiteTotal(c, finite)
	avg := 0.0
	if total != 0 {
		avg = target / total
	}
	dominant := -1
	if total > 0 {
		maxC := math.Inf(-1)
		for _, i := range finite {
			maxC = math.Max(maxC, c[i])
		}
		if maxC/total >= aiperfDominance {
			for _, i := range finite {
				if c[i] == maxC {
					dominant = i
					break
				}
			}
		}
	}
	n := make([]int, len(bounds))
	nSum := 0
	for _, i := range finite {
		n[i] = int(c[i])
		nSum += n[i]
	}
	if nSum <= 0 {
		return nil
	}

	type bucketObs struct {
		lower, upper float64
		values       []float64
	}
	var perBucket []bucketObs
	for j, i := range finite {
		if n[i] <= 0 {
			continue
		}
		lower := 0.0
		if j > 0 {
			lower = bounds[finite[j-1]]
		}
		upper := bounds[i]
		w, mid := upper-lower, (lower+upper)/2
		mu, hasMu := learned[i].mean()
		hasMu = hasMu && lower < mu && mu < upper
		v, hasV := learned[i].variance()
		values := make([]float64, n[i])
		frac := func(k int) float64 { return (float64(k) + 0.5) / float64(n[i]) }
		clip := func(x float64) float64 { return math.Min(math.Max(x, lower), upper) }
		varianceAware := func(f, sigma float64) float64 {
			sL := math.Min((mu-lower)/sigma, aiperfSigmaClamp)
			sU := math.Min((upper-mu)/sigma, aiperfSigmaClamp)
			if f < 0.5 {
				return clip(mu - sL*sigma*(1-2*f))
			}
			return clip(mu + sU*sigma*(2*f-1))
		}
		switch {
		case hasMu && hasV && v > 0:
			sigma := math.Sqrt(v)
			spread := 4 * sigma / w // in this order: see S15b's float note
			offset := math.Abs(mu-mid) / w
			switch {
			case spread < aiperfTwoPointSpread:
				x := lower
				a := upper
				if mu-x > 0 {
					a = mu + v/(mu-x)
				}
				a = clip(a)
				p := 0.5
				if d := v + (mu-x)*(mu-x); d != 0 {
					p = v / d
				}
				p = math.Min(math.Max(p, 0), 1)
				atX := int(float64(n[i]) * p)
				for k := range values {
					if k < atX {
						values[k] = x
					} else {
						values[k] = a
					}
				}
			case spread < aiperfBlendSpread && offset < aiperfBlendOffset:
				for k := range values {
					f := frac(k)
					u := clip(lower + w*f + (mu - mid))
					values[k] = clip(aiperfBlendFactor*u + aiperfBlendFactor*varianceAware(f, sigma))
				}
			default:
				for k := range values {
					values[k] = varianceAware(frac(k), sigma)
				}
			}
		default:
			centre := mid
			if hasMu {
				centre = mu
			}
			if i == dominant && lower < avg && avg < upper {
				centre = avg
			}
			for k := range values {
				values[k] = clip(lower + w*frac(k) + (centre - mid))
			}
		}
		perBucket = append(perBucket, bucketObs{lower, upper, values})
	}

	// Phase 4.5: one pass of sum adjustment.
	generated := 0.0
	for _, b := range perBucket {
		for _, x := range b.values {
			generated += x
		}
	}
	if generated > 0 && target > 0 {
		if diff := target - generated; math.Abs(diff)/target >= aiperfSumTolerance {
			for _, b := range perBucket {
				bucketSum := 0.0
				for _, x := range b.values {
					bucketSum += x
				}
				w := b.upper - b.lower
				shift := diff * (bucketSum / generated) / float64(len(b.values))
				shift = math.Min(math.Max(shift, -aiperfShiftCapOfBucketWid*w), aiperfShiftCapOfBucketWid*w)
				for k := range b.values {
					b.values[k] = math.Min(math.Max(b.values[k]+shift, b.lower), b.upper)
				}
			}
		}
	}
	var out []float64
	for _, b := range perBucket {
		out = append(out, b.values...)
	}
	return out
}

// finiteTotal is the sum of the finite buckets' counts.
func finiteTotal(c []float64, finite []int) float64 {
	total := 0.0
	for _, i := range finite {
		total += c[i]
	}
	return total
}

// aiperfDownsample is AIPerf's cap on generated observations: when total
// exceeds 100,000, the finite counts and each of scaled are multiplied by
// 100,000/total, so the counts become fractional.
func aiperfDownsample(total float64, c []float64, finite []int, scaled ...*float64) {
	if total <= aiperfMaxObservations {
		return
	}
	scale := aiperfMaxObservations / total
	for _, i := range finite {
		c[i] *= scale
	}
	for _, x := range scaled {
		*x *= scale
	}
}

// linspace is numpy.linspace(start, stop, num) with its endpoint: i·step +
// start, and the last value exactly stop.
func linspace(start, stop float64, num int) []float64 {
	out := make([]float64, num)
	step := (stop - start) / float64(num-1)
	for i := range out {
		out[i] = float64(i)*step + start
	}
	out[num-1] = stop
	return out
}

package compare

import (
	"context"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/llmbench/llmbench/internal/stats"
)

// resampler draws bootstrap resamples of one side's values and computes
// their percentiles without sorting them: the values are sorted once, a
// resample is the multiplicity of each sorted value (how often it was
// drawn), and one sweep over those counts finds the order statistics the
// percentiles interpolate between. A resample then costs O(n) instead of
// a sort's O(n log n).
type resampler struct {
	x      []float64 // sorted
	counts []uint32
	// ranks are the 0-based order statistics the percentiles need,
	// ascending and distinct, and at their values in the last resample;
	// percentile i interpolates, by frac[i], from at[lo[i]] to at[hi[i]].
	ranks  []uint32
	at     []float64
	lo, hi []int
	frac   []float64
}

// newResampler sorts a copy of values (0 < n < 2³²) and prepares the
// percentiles ps (0..100), by numpy's "linear" method as
// stats.PercentileSorted computes them.
func newResampler(values []float64, ps []float64) *resampler {
	x := slices.Clone(values)
	slices.Sort(x)
	n := len(x)
	s := &resampler{x: x, counts: make([]uint32, n), frac: make([]float64, len(ps))}
	var lo, hi []uint32
	for i, p := range ps {
		h := float64(n-1) * p / 100
		l := int(math.Floor(h))
		s.frac[i] = h - float64(l)
		lo = append(lo, uint32(l))
		hi = append(hi, uint32(min(l+1, n-1)))
	}
	s.ranks = slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(lo), hi...))))
	s.at = make([]float64, len(s.ranks))
	for i := range ps {
		a, _ := slices.BinarySearch(s.ranks, lo[i])
		b, _ := slices.BinarySearch(s.ranks, hi[i])
		s.lo, s.hi = append(s.lo, a), append(s.hi, b)
	}
	return s
}

// point computes the percentiles of the values themselves into out.
func (s *resampler) point(out []float64) {
	for i, f := range s.frac {
		lo, hi := s.x[s.ranks[s.lo[i]]], s.x[s.ranks[s.hi[i]]]
		out[i] = lo + f*(hi-lo)
	}
}

// resample draws one bootstrap resample from src and computes its
// percentiles into out.
func (s *resampler) resample(src *rand.PCG, out []float64) {
	s.draw(src)
	s.orderStats()
	for i, f := range s.frac {
		lo, hi := s.at[s.lo[i]], s.at[s.hi[i]]
		out[i] = lo + f*(hi-lo)
	}
}

// The two loops below are marked go:norace. They touch only the
// resampler's own slices, which one goroutine owns from newResampler on
// (bootstrapPercentiles makes one per side and call). The race
// detector's per-access instrumentation makes them about ten times
// slower, which under go test -race the false-alarm simulation's
// thousands of bootstraps would pay. Everything around them stays
// checked.

// draw sets counts to the multiplicities of n draws with replacement.
//
//go:norace
func (s *resampler) draw(src *rand.PCG) {
	clear(s.counts)
	n := uint32(len(s.counts))
	// Two 32-bit draws per 64-bit output, each mapped to [0, n) by
	// Lemire's multiply-shift with its rejection step, so unbiased.
	thresh := -n % n
	for left := n; left > 0; {
		v := src.Uint64()
		m := uint64(uint32(v)) * uint64(n)
		if uint32(m) >= thresh {
			s.counts[m>>32]++
			left--
		}
		if left == 0 {
			break
		}
		m = (v >> 32) * uint64(n)
		if uint32(m) >= thresh {
			s.counts[m>>32]++
			left--
		}
	}
}

// orderStats finds the resample's values at ranks: where the running
// count first passes each rank. There is no test of a count being 0 to
// skip it: a third are, at random, and the branch would mispredict more
// than it saves.
//
//go:norace
func (s *resampler) orderStats() {
	c, x, ranks, at := s.counts, s.x[:len(s.counts)], s.ranks, s.at
	var cum uint32
	k, next := 0, ranks[0]
	for i, ci := range c {
		cum += ci
		for next < cum {
			at[k] = x[i]
			k++
			if k == len(ranks) {
				return
			}
			next = ranks[k]
		}
	}
}

// streamOf names the random stream of a metric, so that each metric's
// resamples depend on the seed and its tag only: adding a metric or
// comparing them in another order changes no other result.
func streamOf(tag string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(tag))
	return h.Sum64()
}

// bootInterval is the bootstrap of one percentile's change new−base.
type bootInterval struct {
	base, new       float64
	absLow, absHigh float64
	// relLow and relHigh are NaN when a resample's base percentile is 0.
	relLow, relHigh float64
}

// bootstrapPercentiles resamples each side's per-request values
// independently with replacement, b times, and returns for each
// percentile of ps the percentile interval (at level) of its absolute and
// relative change new−base: the middle level of the resampled changes.
func bootstrapPercentiles(ctx context.Context, base, nw []float64, ps []float64, b int, level float64, seed uint64, tag string) ([]bootInterval, error) {
	sb, sn := newResampler(base, ps), newResampler(nw, ps)
	k := len(ps)
	pb, pn := make([]float64, k), make([]float64, k)
	sb.point(pb)
	sn.point(pn)
	src := rand.NewPCG(seed, streamOf(tag))
	abs, rel := make([][]float64, k), make([][]float64, k)
	for j := range k {
		abs[j], rel[j] = make([]float64, b), make([]float64, b)
	}
	ob, on := make([]float64, k), make([]float64, k)
	for i := range b {
		if i%64 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		sb.resample(src, ob)
		sn.resample(src, on)
		for j := range k {
			abs[j][i] = on[j] - ob[j]
			rel[j][i] = (on[j] - ob[j]) / ob[j]
		}
	}
	lo, hi := 100*(1-level)/2, 100*(1+level)/2
	out := make([]bootInterval, k)
	for j := range k {
		out[j] = bootInterval{base: pb[j], new: pn[j]}
		out[j].absLow, out[j].absHigh = percentileInterval(abs[j], lo, hi)
		out[j].relLow, out[j].relHigh = percentileInterval(rel[j], lo, hi)
	}
	return out, nil
}

// percentileInterval sorts v and returns its lo-th and hi-th percentiles,
// NaN when a value is not finite (a relative change over a zero base).
func percentileInterval(v []float64, lo, hi float64) (float64, float64) {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return math.NaN(), math.NaN()
		}
	}
	slices.Sort(v)
	return stats.PercentileSorted(v, lo), stats.PercentileSorted(v, hi)
}

package stats

import (
	"math"
	"sort"
)

// A run's scrape intervals, as the fits read them: each usable interval's
// sum and per-bucket counts. Every fit, the variance fit, the cluster
// model and the batch law pass over them, several times each; decoding
// them from the cumulative rows once per model, not once per pass, is
// what keeps an hour of scrapes (10,800 intervals of 20 buckets) cheap.

// cell is one bucket's count in one scrape interval (model position j).
type cell struct {
	j int
	n float64
}

// decodedIntervals are a series' usable intervals, in scrape order: the
// i-th closes at scrape t[i], sums to ds[i] and has the cells
// cells[off[i]:off[i+1]].
type decodedIntervals struct {
	t     []int
	ds    []float64
	off   []int
	cells []cell
	// of identifies the series decoded (its first sum's address and its
	// length), so that a model asked about another series decodes again.
	of     *float64
	length int
	// digits is what the series' sums show of their printing
	// (sumdigits.go), which an interval's sum may be off by.
	digits sumDigits
}

// intervals calls fn for every usable scrape interval in from..to with its
// sum and its per-bucket counts (decoded once for the model: fn must not
// change them, and may keep them as long as the model).
// Intervals with nothing new, a reset, a torn read (bucket counts that
// disagree with the count, or a sum that their buckets' bounds cannot add
// up to) or counts in a bucket the totals have none in are skipped: they
// carry no information, and an impossible sum (a scrape that read the sum
// before the buckets, a hostile 1e308) would only pull the means outside
// their buckets or overflow the fit.
func (m *bucketModel) intervals(h HistogramSeries, from, to int, fn func(ds float64, cells []cell)) {
	d := m.decode(h)
	for i := sort.SearchInts(d.t, from+1); i < len(d.t) && d.t[i] <= to; i++ {
		fn(d.ds[i], d.cells[d.off[i]:d.off[i+1]])
	}
}

// decode returns h's usable intervals, decoded on the model's first pass
// over h. A model is made for one series and fitted to it once: the
// intervals are kept for as long as that series is the one asked about
// (its sums' storage and length), and must not be edited in between.
func (m *bucketModel) decode(h HistogramSeries) *decodedIntervals {
	n := h.Scrapes()
	var of *float64
	if len(h.Sum) > 0 {
		of = &h.Sum[0]
	}
	if d := m.decoded; d != nil && d.of == of && d.length == n {
		return d
	}
	pos := make([]int, len(h.Bounds)) // series bucket index → model position, or -1
	for i := range pos {
		pos[i] = -1
	}
	for j, i := range m.index {
		pos[i] = j
	}
	// Sized for every interval usable, with two buckets each: growing
	// the cells from nothing cost twice their size again in copies.
	d := &decodedIntervals{
		t:     make([]int, 0, n),
		ds:    make([]float64, 0, n),
		off:   append(make([]int, 0, n), 0),
		cells: make([]cell, 0, 2*n),
		of:    of, length: n,
		digits: readSumDigits(h.Sum),
	}
	for t := 1; t < n; t++ {
		ds := h.Sum[t] - h.Sum[t-1]
		dc := h.Count[t] - h.Count[t-1]
		if !(dc > 0) || !(math.Abs(ds) <= maxMagnitude) {
			continue
		}
		start := len(d.cells)
		prev, seen, ok := 0.0, 0.0, true
		least, most := 0.0, 0.0 // what the cells' bounds allow the sum
		for i := range h.Bounds {
			c := h.Buckets[t][i] - h.Buckets[t-1][i]
			k := c - prev
			prev = c
			if k == 0 {
				continue
			}
			if k < 0 || pos[i] < 0 {
				ok = false
				break
			}
			d.cells = append(d.cells, cell{pos[i], k})
			seen += k
			least += k * m.lower[pos[i]]
			most += k * m.upper[pos[i]]
		}
		slack := d.digits.sumRounding(h, t)
		if !ok || !(seen > 0) || !(math.Abs(seen-dc) <= 0.5) || !(ds >= least-slack && ds <= most+slack) {
			d.cells = d.cells[:start]
			continue
		}
		d.t = append(d.t, t)
		d.ds = append(d.ds, ds)
		d.off = append(d.off, len(d.cells))
	}
	m.decoded = d
	return d
}

package servermetrics

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/llmbench/llmbench/internal/scrape"
	"github.com/llmbench/llmbench/internal/stats"
)

// Estimator estimates quantiles (fractions 0..1) of the observations a
// histogram series recorded between its first scrape (the reference) and
// its last; NaN where it cannot.
type Estimator interface {
	Quantiles(h stats.HistogramSeries, qs []float64) []float64
}

// Window is the period aggregated: the profiling phase, warm-up excluded.
type Window struct {
	StartNs, EndNs int64
	// SliceNs is the time-slice length; 0 for no slices.
	SliceNs int64
	// UpdateIntervalNs is each endpoint's median update interval: when
	// SliceNs is shorter, that endpoint falls back to one slice per
	// scrape interval.
	UpdateIntervalNs map[string]int64
	// ClampResets is AIPerf's counter-reset rule, for reproducing its
	// numbers: a counter's total is max(last − reference, 0), a histogram
	// whose buckets went down gets no estimates; nothing is counted across
	// a reset. The default counts increases across resets, as Prometheus'
	// increase() does.
	ClampResets bool
}

// DurationSeconds is the window's length.
func (w Window) DurationSeconds() float64 { return float64(w.EndNs-w.StartNs) / 1e9 }

// Metric is one metric name's aggregated series.
type Metric struct {
	Name        string
	Type        scrape.Type
	Description string
	Unit        string
	// Info marks "_info" gauges, whose labels are their content.
	Info   bool
	Series []SeriesStats
}

// SeriesStats are one endpoint + label set's statistics.
type SeriesStats struct {
	Endpoint string
	Labels   []scrape.Label
	// Resets are the times (wall ns) a counter or histogram dropped between
	// the reference and the final scrape (a server restart); its increase
	// is counted across them.
	Resets []int64
	// ObservedSeconds is the part of the window the series was seen in:
	// from the window start to its last sample or the window end, whichever
	// came first. Counter and histogram rates divide by it, so an endpoint
	// that stopped answering has rates over the time it answered.
	ObservedSeconds float64
	Gauge           *GaugeStats
	Counter         *CounterStats
	Hist            *HistStats
	Slices          []Slice
}

// GaugeStats summarise a gauge's (or unknown metric's) samples.
type GaugeStats struct {
	Avg, Min, Max float64
	// Std is the sample standard deviation (ddof=1); 0 for one sample.
	Std     float64
	P       [len(stats.Percentiles)]float64
	Samples int
	Last    float64
}

// CounterStats summarise a counter over the window.
type CounterStats struct {
	Total, Rate float64
	// SliceRates summarise the complete slices' rates; nil without slices.
	SliceRates *RateStats
}

// RateStats are statistics of per-slice rates.
type RateStats struct{ Avg, Min, Max, Std float64 }

// HistStats summarise a histogram over the window.
type HistStats struct {
	Count, Sum float64
	Bounds     []float64
	// BoundText are the bounds as the exposition wrote them.
	BoundText []string
	// Buckets are the cumulative bucket deltas aligned with Bounds.
	Buckets []float64
	// Estimates are the percentile estimates at stats.Percentiles.
	Estimates [len(stats.Percentiles)]float64
	// EstimateFailure, when set, says why the estimator gave no answer for
	// this series (it panicked, or answered the wrong number of
	// quantiles): its estimates are NaN, and the run goes on.
	EstimateFailure string
}

// Slice is one time window's statistics; which fields apply depends on the
// metric type.
type Slice struct {
	StartNs, EndNs int64
	Complete       bool
	Avg, Min, Max  float64 // gauges
	Total, Rate    float64 // counters
	Count, Sum     float64 // histograms (Avg too)
	Buckets        []float64
}

// Aggregate computes every series' statistics over w.
//
// Counter and histogram totals run from the reference (the last sample
// before the window; zero for a series born during the run; else the
// window's first sample) to the last sample taken, the final scrape after
// the flush period, so late server-side updates are counted; rates divide
// by the window's duration. Gauges use the samples inside the window.
func (st *Store) Aggregate(w Window, est Estimator) []Metric {
	st.mu.Lock()
	defer st.mu.Unlock()
	qs := make([]float64, len(stats.Percentiles))
	for i, p := range stats.Percentiles {
		qs[i] = p / 100
	}
	byName := map[string]*Metric{}
	var names []string
	var buf decodeBuffers // one series expanded at a time, in reused arrays
	for _, ss := range st.series {
		s := ss.decode(&buf, st.scrapes[ss.meta.Endpoint])
		agg, ok := st.aggregateSeries(s, w, est, qs)
		if !ok {
			continue
		}
		m := byName[s.Name]
		if m == nil {
			f := st.families[s.Name]
			m = &Metric{Name: s.Name, Type: f.Type, Description: f.Help, Unit: InferUnit(s.Name, f.Help),
				Info: f.Type == scrape.Gauge && strings.HasSuffix(s.Name, "_info")}
			byName[s.Name] = m
			names = append(names, s.Name)
		}
		m.Series = append(m.Series, agg)
	}
	sort.Strings(names)
	out := make([]Metric, len(names))
	for i, n := range names {
		m := byName[n]
		sort.Slice(m.Series, func(a, b int) bool {
			x, y := m.Series[a], m.Series[b]
			if x.Endpoint != y.Endpoint {
				return x.Endpoint < y.Endpoint
			}
			return scrape.LabelKey(x.Labels) < scrape.LabelKey(y.Labels)
		})
		out[i] = *m
	}
	return out
}

// reference finds the sample deltas are measured from: its index, or -1
// for an implicit zero (a series born after the endpoint's first scrape).
// ok is false when the series has no sample at or after the window start.
func (st *Store) reference(s *Series, w Window) (ref int, first int, ok bool) {
	first = sort.Search(len(s.T), func(i int) bool { return s.T[i] >= w.StartNs })
	if first == len(s.T) {
		return 0, 0, false
	}
	switch {
	case first > 0:
		return first - 1, first, true
	case st.firstScrape(s.Endpoint) < s.T[0]:
		return -1, first, true
	default:
		return first, first, true
	}
}

func (st *Store) aggregateSeries(s *Series, w Window, est Estimator, qs []float64) (SeriesStats, bool) {
	out := SeriesStats{Endpoint: s.Endpoint, Labels: s.Labels}
	ref, first, ok := st.reference(s, w)
	if !ok {
		return out, false
	}
	last := len(s.T) - 1
	out.ObservedSeconds = float64(min(w.EndNs, s.T[last])-w.StartNs) / 1e9
	var resets []int64
	if w.ClampResets {
		_, resets = resetCorrected(s) // found, to be warned about, not undone
	} else {
		s, resets = resetCorrected(s)
	}
	for _, t := range resets {
		if (ref < 0 || t > s.T[ref]) && t <= s.T[last] {
			out.Resets = append(out.Resets, t)
		}
	}
	switch s.Type {
	case scrape.Gauge, scrape.Unknown:
		lo, hi := gaugeRange(s, w, first)
		out.Gauge = gaugeStats(s.V[lo:hi])
		out.Slices = gaugeSlices(s, w)
	case scrape.Counter:
		at := func(i int) float64 {
			if i < 0 {
				return 0
			}
			return s.V[i]
		}
		// Monotone after resetCorrected, where the clamp only guards
		// rounding; AIPerf's rule itself with ClampResets.
		total := math.Max(0, at(last)-at(ref))
		c := &CounterStats{Total: total}
		if d := out.ObservedSeconds; d > 0 {
			c.Rate = total / d
		}
		out.Counter = c
		if w.SliceNs > 0 {
			out.Slices = counterSlices(s, w, ref)
			c.SliceRates = rateStats(out.Slices)
		}
	case scrape.Histogram:
		h := histStats(s, ref, last, est, qs, w.ClampResets)
		out.Hist = h
		if w.SliceNs > 0 && h.Count > 0 {
			out.Slices = histSlices(s, w, ref)
		}
	}
	return out, true
}

func gaugeStats(v []float64) *GaugeStats {
	cp := append([]float64(nil), v...)
	sum := stats.Summarize(cp)
	g := &GaugeStats{Avg: sum.Avg, Min: sum.Min, Max: sum.Max, P: sum.P, Samples: len(v), Last: v[len(v)-1]}
	if len(v) > 1 {
		g.Std = stats.StdDev(v, 1)
	}
	if sum.Min == sum.Max { // constant: exactly the value, whatever rounding did
		g.Avg, g.Std = sum.Min, 0
		for i := range g.P {
			g.P[i] = sum.Min
		}
	}
	return g
}

// resetCorrected returns s with its counter values, or its histogram count,
// sum and buckets, made cumulative across resets as Prometheus' increase()
// does: where a value drops (a server restart), the new value is the
// increase since the reset. This goes beyond the seed's "clamp to 0", which
// only keeps totals from going negative and loses everything counted before
// the drop; and totals, rates, time slices, Parquet deltas and histogram
// estimates all read the same corrected series, so they agree. A histogram
// resets when its count or any bucket drops (its sum may fall on its own
// with negative observations). s itself is returned when nothing dropped;
// resets are the times of the drops.
func resetCorrected(s *Series) (*Series, []int64) {
	switch s.Type {
	case scrape.Counter:
		var resets []int64
		var out []float64
		for k := 1; k < len(s.V); k++ {
			if s.V[k] >= s.V[k-1] {
				if out != nil {
					out[k] = out[k-1] + s.V[k] - s.V[k-1]
				}
				continue
			}
			if out == nil {
				out = make([]float64, len(s.V))
				copy(out, s.V[:k])
			}
			out[k] = out[k-1] + s.V[k]
			resets = append(resets, s.T[k])
		}
		if out == nil {
			return s, nil
		}
		c := *s
		c.V = out
		return &c, resets
	case scrape.Histogram:
		var resets []int64
		var c *Series
		for k := 1; k < len(s.Count); k++ {
			dropped := s.Count[k] < s.Count[k-1]
			for i := 0; !dropped && i < len(s.Bounds); i++ {
				dropped = s.B[k][i] < s.B[k-1][i]
			}
			if dropped && c == nil {
				c = &Series{}
				*c = *s
				c.Count = append([]float64(nil), s.Count...)
				c.Sum = append([]float64(nil), s.Sum...)
				c.B = make([][]float64, len(s.B))
				for i := range s.B {
					c.B[i] = append([]float64(nil), s.B[i]...)
				}
			}
			if c == nil {
				continue
			}
			if dropped {
				resets = append(resets, s.T[k])
				c.Count[k] = c.Count[k-1] + s.Count[k]
				c.Sum[k] = c.Sum[k-1] + s.Sum[k]
				for i := range s.Bounds {
					c.B[k][i] = c.B[k-1][i] + s.B[k][i]
				}
				continue
			}
			c.Count[k] = c.Count[k-1] + s.Count[k] - s.Count[k-1]
			c.Sum[k] = c.Sum[k-1] + s.Sum[k] - s.Sum[k-1]
			for i := range s.Bounds {
				c.B[k][i] = c.B[k-1][i] + s.B[k][i] - s.B[k-1][i]
			}
		}
		if c == nil {
			return s, nil
		}
		return c, resets
	}
	return s, nil
}

// histDelta is a histogram's change from sample `from` (-1: zero) to sample
// `to`: count and sum (unclamped, so a reset shows as a negative count)
// and per-bucket cumulative deltas clamped at 0.
func histDelta(s *Series, from, to int) (count, sum float64, buckets []float64) {
	buckets = make([]float64, len(s.Bounds))
	if to < 0 {
		return 0, 0, buckets
	}
	var b0 []float64
	if from >= 0 {
		count, sum, b0 = -s.Count[from], -s.Sum[from], s.B[from]
	}
	count += s.Count[to]
	sum += s.Sum[to]
	for i := range buckets {
		prev := 0.0
		if b0 != nil {
			prev = b0[i]
		}
		buckets[i] = math.Max(0, s.B[to][i]-prev)
	}
	return count, sum, buckets
}

// histStats summarises a histogram from sample ref to last; with clamp
// (AIPerf's rule on raw values) a bucket that went down means no
// estimates, as AIPerf makes none then.
func histStats(s *Series, ref, last int, est Estimator, qs []float64, clamp bool) *HistStats {
	h := &HistStats{Bounds: s.Bounds, BoundText: s.BoundText}
	count, sum, buckets := histDelta(s, ref, last)
	h.Count, h.Sum, h.Buckets = count, sum, buckets
	if clamp && ref >= 0 {
		for i := range s.Bounds {
			if s.B[last][i] < s.B[ref][i] {
				return h
			}
		}
	}
	if count > 0 {
		e, err := estimateSafely(est, histSeries(s, ref, last), qs)
		if err != nil {
			h.EstimateFailure = err.Error()
			e = make([]float64, len(qs))
			for i := range e {
				e[i] = math.NaN()
			}
		}
		copy(h.Estimates[:], e)
	}
	return h
}

// estimateSafely runs the estimator on one series and turns its panic, or
// an answer of the wrong length, into an error: one series a server
// exposed oddly must not take the run's exports down with it.
func estimateSafely(est Estimator, h stats.HistogramSeries, qs []float64) (e []float64, err error) {
	defer func() {
		if r := recover(); r != nil {
			e, err = nil, fmt.Errorf("the %T estimator panicked: %v", est, r)
		}
	}()
	e = est.Quantiles(h, qs)
	if len(e) != len(qs) {
		return nil, fmt.Errorf("the %T estimator answered %d of %d quantiles", est, len(e), len(qs))
	}
	return e, nil
}

// histSeries is the part of s an estimator sees: from the reference sample
// (-1: a zero sample, for a series born inside the window) to last.
func histSeries(s *Series, ref, last int) stats.HistogramSeries {
	h := stats.HistogramSeries{Bounds: s.Bounds}
	if ref >= 0 {
		h.Buckets, h.Sum, h.Count = s.B[ref:last+1], s.Sum[ref:last+1], s.Count[ref:last+1]
		return h
	}
	h.Buckets = append([][]float64{make([]float64, len(s.Bounds))}, s.B[:last+1]...)
	h.Sum = append([]float64{0}, s.Sum[:last+1]...)
	h.Count = append([]float64{0}, s.Count[:last+1]...)
	return h
}

// sliceBounds returns the slice windows of a series: fixed SliceNs windows
// from the window start (the last one partial), or, when SliceNs is shorter
// than the endpoint's update interval, one window per scrape interval.
func sliceBounds(s *Series, w Window, ref int) [][2]int64 {
	var out [][2]int64
	if iv := w.UpdateIntervalNs[s.Endpoint]; iv > 0 && w.SliceNs < iv {
		prev := w.StartNs
		if ref >= 0 && s.T[ref] < w.StartNs {
			prev = s.T[ref]
		}
		for _, t := range s.T {
			if t <= prev || t > w.EndNs {
				continue
			}
			out = append(out, [2]int64{prev, t})
			prev = t
		}
		return out
	}
	for start := w.StartNs; start < w.EndNs; start += w.SliceNs {
		out = append(out, [2]int64{start, min(start+w.SliceNs, w.EndNs)})
	}
	return out
}

// indexAt is the last sample at or before t, or ref when there is none.
func indexAt(s *Series, t int64, ref int) int {
	i := sort.Search(len(s.T), func(i int) bool { return s.T[i] > t }) - 1
	if i < 0 || (ref >= 0 && i < ref) {
		return ref
	}
	return i
}

func gaugeSlices(s *Series, w Window) []Slice {
	if w.SliceNs <= 0 {
		return nil
	}
	interval := perInterval(s, w)
	bounds := sliceBounds(s, w, previousSample(s, w))
	var out []Slice
	for k, b := range bounds {
		sl := Slice{StartNs: b[0], EndNs: b[1], Complete: interval || b[1]-b[0] >= w.SliceNs}
		n := 0
		for i, t := range s.T {
			// Fixed slices are [start, end), the last one closed; interval
			// slices (prev scrape, this scrape].
			inside := t >= b[0] && (t < b[1] || (k == len(bounds)-1 && t == b[1]))
			if interval {
				inside = t > b[0] && t <= b[1]
			}
			if !inside {
				continue
			}
			v := s.V[i]
			if n == 0 {
				sl.Min, sl.Max = v, v
			}
			sl.Avg += v
			sl.Min, sl.Max = math.Min(sl.Min, v), math.Max(sl.Max, v)
			n++
		}
		if n == 0 {
			continue
		}
		sl.Avg /= float64(n)
		out = append(out, sl)
	}
	return out
}

func perInterval(s *Series, w Window) bool {
	iv := w.UpdateIntervalNs[s.Endpoint]
	return iv > 0 && w.SliceNs < iv
}

// previousSample is the index of the last sample before the window, or -1.
func previousSample(s *Series, w Window) int {
	return sort.Search(len(s.T), func(i int) bool { return s.T[i] >= w.StartNs }) - 1
}

func counterSlices(s *Series, w Window, ref int) []Slice {
	val := func(i int) float64 {
		if i < 0 {
			return 0
		}
		return s.V[i]
	}
	var out []Slice
	for _, b := range sliceBounds(s, w, ref) {
		total := math.Max(0, val(indexAt(s, b[1], ref))-val(indexAt(s, b[0], ref)))
		sl := Slice{StartNs: b[0], EndNs: b[1], Complete: perInterval(s, w) || b[1]-b[0] >= w.SliceNs, Total: total}
		if d := float64(b[1]-b[0]) / 1e9; d > 0 {
			sl.Rate = total / d
		}
		out = append(out, sl)
	}
	return out
}

func histSlices(s *Series, w Window, ref int) []Slice {
	var out []Slice
	for _, b := range sliceBounds(s, w, ref) {
		i0, i1 := indexAt(s, b[0], ref), indexAt(s, b[1], ref)
		sl := Slice{StartNs: b[0], EndNs: b[1], Complete: perInterval(s, w) || b[1]-b[0] >= w.SliceNs}
		count, sum, buckets := histDelta(s, i0, i1)
		sl.Count, sl.Sum, sl.Buckets = math.Max(0, count), math.Max(0, sum), buckets
		if sl.Count > 0 {
			sl.Avg = sl.Sum / sl.Count
		}
		out = append(out, sl)
	}
	return out
}

// rateStats summarise the rates of the complete slices (partial ones would
// skew them); std is the sample standard deviation (ddof=1), 0 for one slice.
func rateStats(sl []Slice) *RateStats {
	var rates []float64
	for _, s := range sl {
		if s.Complete {
			rates = append(rates, s.Rate)
		}
	}
	if len(rates) == 0 {
		return nil
	}
	r := &RateStats{Avg: stats.Mean(rates), Min: rates[0], Max: rates[0]}
	for _, x := range rates {
		r.Min, r.Max = math.Min(r.Min, x), math.Max(r.Max, x)
	}
	if len(rates) > 1 {
		r.Std = stats.StdDev(rates, 1)
	}
	return r
}

// Point is one sample as the Parquet export holds it.
type Point struct {
	T int64
	// Value: the raw gauge value, or the counter's cumulative delta from
	// the reference (clamped at 0).
	Value float64
	// Sum, Count and Buckets: a histogram's cumulative deltas.
	Sum, Count float64
	Buckets    []float64
}

// gaugeRange is the samples [lo, hi) a gauge's statistics use: those inside
// the window, or, when none is (a window shorter than the scrape
// interval), the ones after it.
func gaugeRange(s *Series, w Window, first int) (lo, hi int) {
	lo, hi = first, first
	for hi < len(s.T) && s.T[hi] <= w.EndNs {
		hi++
	}
	if hi == lo {
		hi = len(s.T)
	}
	return lo, hi
}

// Points calls fn for every series (sorted) with exactly the samples its
// statistics use, normalised as the Parquet schema says: a gauge's
// samples raw (so their average is stats.avg); a counter's or histogram's
// reference sample (delta 0) and every sample from the window start to the
// final scrape, as cumulative deltas from that reference, across resets.
func (st *Store) Points(w Window, fn func(f Family, s *Series, pts []Point)) {
	st.mu.Lock()
	defer st.mu.Unlock()
	var pts []Point
	var buf decodeBuffers // fn must not keep the series past its call
	for _, k := range st.sortedKeys() {
		s := st.series[k].decode(&buf, st.scrapes[k.endpoint])
		ref, first, ok := st.reference(s, w)
		if !ok {
			continue
		}
		s, _ = resetCorrected(s)
		pts = pts[:0]
		from, to := first, len(s.T)
		switch s.Type {
		case scrape.Gauge, scrape.Unknown:
			from, to = gaugeRange(s, w, first)
		default:
			if ref >= 0 {
				from = ref // the reference row
			}
		}
		for i := from; i < to; i++ {
			p := Point{T: s.T[i]}
			switch s.Type {
			case scrape.Gauge, scrape.Unknown:
				p.Value = s.V[i]
			case scrape.Counter:
				base := 0.0
				if ref >= 0 {
					base = s.V[ref]
				}
				p.Value = math.Max(0, s.V[i]-base)
			case scrape.Histogram:
				count, sum, buckets := histDelta(s, ref, i)
				p.Count, p.Sum, p.Buckets = math.Max(0, count), math.Max(0, sum), buckets
			}
			pts = append(pts, p)
		}
		fn(st.families[s.Name], s, pts)
	}
}

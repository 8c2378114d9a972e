// Package servermetrics holds the time series scraped from servers' /metrics
// during a run, keyed by endpoint, metric and label set, and aggregates them
// over the profiling period into gauge, counter and histogram statistics
// with optional time slices.
package servermetrics

import (
	"encoding/binary"
	"math"
	"sort"
	"strings"
	"sync"

	"github.com/llmbench/llmbench/internal/scrape"
)

type seriesKey struct {
	endpoint, name, labels string
}

// Series is one endpoint + metric + label set over time.
type Series struct {
	Endpoint string
	Name     string
	Type     scrape.Type
	Labels   []scrape.Label
	// T are the sample timestamps (wall ns), increasing.
	T []int64
	// V holds gauge, counter and unknown values.
	V []float64
	// Histograms: Sum and Count per sample; B the cumulative bucket counts
	// per sample, aligned with Bounds.
	Sum, Count []float64
	Bounds     []float64
	// BoundText are the bounds as the exposition wrote them ("1.0"), for
	// the exports.
	BoundText []string
	B         [][]float64
}

// storedSeries is a series as the store holds it: its description and its
// samples compressed (compact.go).
type storedSeries struct {
	meta seriesMeta
	// runs are the endpoint's scrapes the series has a sample in, as runs
	// of consecutive indexes into Store.scrapes: the timestamps are the
	// endpoint's, shared, so a series present from its first scrape on
	// holds one run instead of a timestamp per sample.
	runs []scrapeRun
	n    int // samples
	// w holds a row per sample. A gauge, counter or unknown metric has one
	// column, its value; a histogram has its sum, then a column per bucket
	// and one for its count, coded as a rowRange (rr).
	w    bitWriter
	cols []column
	rr   rowRange
	// While every bucket count and the count are whole numbers from 0 to
	// 2^53, bucket b's column holds the observations in its own range
	// (c_b − c_{b−1}) and the count's column count − c_{+Inf}: these stay
	// put between scrapes unless an observation fell in that range, so a
	// histogram costs the few buckets its new observations fell in.
	// cumulativeBuckets: they hold the counts as scraped (from the first
	// count that is not such a number on).
	cumulativeBuckets bool
}

// seriesMeta is what a Series says besides its samples.
type seriesMeta struct {
	Endpoint, Name string
	Type           scrape.Type
	Labels         []scrape.Label
	// Bounds and BoundText are shared by the series with the same bounds
	// (Store.bounds).
	Bounds    []float64
	BoundText []string
}

// scrapeRun is n consecutive scrapes of an endpoint from index first.
type scrapeRun struct{ first, n int32 }

// addScrape records that the series has a sample at the endpoint's scrape
// idx, which the caller then adds; false when the series has one there
// already (an exposition that repeats a series: the first is kept, as
// Prometheus rejects the repeat).
func (ss *storedSeries) addScrape(idx int32) bool {
	if k := len(ss.runs) - 1; k >= 0 {
		r := &ss.runs[k]
		switch end := r.first + r.n; {
		case end > idx:
			return false
		case end == idx:
			r.n++
			return true
		}
	}
	ss.runs = append(ss.runs, scrapeRun{idx, 1})
	return true
}

// rowScratch are the arrays a row is coded in, reused from row to row.
type rowScratch struct {
	xs []int64
	z  []uint64
	ks []uint
}

func (sc *rowScratch) size(n int) {
	if cap(sc.xs) < n {
		sc.xs, sc.z, sc.ks = make([]int64, n), make([]uint64, n), make([]uint, n)
	}
	sc.xs, sc.z, sc.ks = sc.xs[:n], sc.z[:n], sc.ks[:n]
}

// addValue appends a gauge's, counter's or unknown metric's value.
func (ss *storedSeries) addValue(v float64, sc *rowScratch) {
	if ss.cols == nil {
		ss.cols = make([]column, 1)
	}
	if c := &ss.cols[0]; !c.fits(v) {
		ss.reencode(sc, func() { c.float = true })
	}
	ss.writeValue(v)
}

func (ss *storedSeries) writeValue(v float64) {
	c := &ss.cols[0]
	c.write(&ss.w, c.value(v))
	ss.n++
}

// addHistogram appends a histogram's sum, count and cumulative bucket
// counts (aligned with its bounds).
func (ss *storedSeries) addHistogram(sum, count float64, row []float64, sc *rowScratch) {
	if ss.cols == nil {
		ss.cols = make([]column, len(row)+2)
	}
	sc.size(len(row) + 1)
	if !ss.fitsHistogram(sum, count, row, sc.xs) {
		ss.reencode(sc, func() { ss.widenHistogram(sum, count, row) })
		sc.size(len(row) + 1)
		ss.fitsHistogram(sum, count, row, sc.xs)
	}
	ss.writeHistogram(sum, sc)
}

// fitsHistogram reports whether the columns can hold the row, and sets xs
// to the bucket columns' values when they can.
func (ss *storedSeries) fitsHistogram(sum, count float64, row []float64, xs []int64) bool {
	if !ss.cols[0].fits(sum) {
		return false
	}
	cols, xs := ss.cols[1:], xs[:len(row)+1]
	if !ss.cumulativeBuckets {
		// Counts from 0 to 2^53 (not -0), so every difference is exact.
		below := int64(0)
		for b, c := range row {
			ic := int64(c)
			if float64(ic) != c || ic < 0 || ic >= maxExactInt || ic == 0 && math.Signbit(c) {
				return false
			}
			xs[b], below = ic-below, ic
		}
		ic := int64(count)
		if float64(ic) != count || ic < 0 || ic >= maxExactInt || ic == 0 && math.Signbit(count) {
			return false
		}
		xs[len(row)] = ic - below
		return true
	}
	for b, c := range row {
		if !cols[b].fits(c) {
			return false
		}
		xs[b] = cols[b].value(c)
	}
	if c := &cols[len(row)]; c.fits(count) {
		xs[len(row)] = c.value(count)
		return true
	}
	return false
}

// widenHistogram changes the columns' coding so they hold the row: the
// sum's column to floats, the buckets to cumulative, their columns to
// floats, as needed. The rows before fit too: each change only widens.
func (ss *storedSeries) widenHistogram(sum, count float64, row []float64) {
	if !ss.cols[0].fits(sum) {
		ss.cols[0].float = true
	}
	if !ss.cumulativeBuckets && !ss.fitsHistogram(sum, count, row, make([]int64, len(row)+1)) {
		ss.cumulativeBuckets = true
	}
	if !ss.cumulativeBuckets {
		return
	}
	for b, c := range row {
		if !ss.cols[1+b].fits(c) {
			ss.cols[1+b].float = true
		}
	}
	if c := &ss.cols[1+len(row)]; !c.fits(count) {
		c.float = true
	}
}

// writeHistogram appends a row: the sum, and the bucket columns' values
// fitsHistogram left in sc.xs.
func (ss *storedSeries) writeHistogram(sum float64, sc *rowScratch) {
	ss.cols[0].write(&ss.w, ss.cols[0].value(sum))
	ss.rr.writeRow(&ss.w, ss.cols[1:], sc.xs, sc.z, sc.ks)
	ss.n++
}

// reencode rewrites the series' rows after change widens its columns'
// coding (a column that turns to floats, buckets that turn cumulative).
// Each change happens once per column at most, so a series is rewritten a
// few times in a run at most.
func (ss *storedSeries) reencode(sc *rowScratch, change func()) {
	s := &Series{Type: ss.meta.Type, Bounds: ss.meta.Bounds}
	ss.decodeValues(&decodeBuffers{}, s)
	change()
	n := ss.n
	ss.w, ss.rr, ss.n = bitWriter{}, rowRange{}, 0
	for i := range ss.cols {
		ss.cols[i] = column{float: ss.cols[i].float}
	}
	for i := range n {
		if s.Type == scrape.Histogram {
			sc.size(len(ss.cols) - 1)
			ss.fitsHistogram(s.Sum[i], s.Count[i], s.B[i], sc.xs) // true: the change widened
			ss.writeHistogram(s.Sum[i], sc)
		} else {
			ss.writeValue(s.V[i])
		}
	}
}

// decodeBuffers are the arrays a decoded series lives in, reused from one
// series to the next where the caller lets go of each before the next.
type decodeBuffers struct {
	t                []int64
	v, sum, count, b []float64
	rows             [][]float64
	cols             []column
	xs               []int64
}

// decode expands the samples into a Series of plain arrays, in fresh
// arrays when buf is nil, else in buf's (valid until buf's next use).
// scrapes are the endpoint's snapshot times.
func (ss *storedSeries) decode(buf *decodeBuffers, scrapes []int64) *Series {
	if buf == nil {
		buf = &decodeBuffers{}
	}
	m := &ss.meta
	s := &Series{Endpoint: m.Endpoint, Name: m.Name, Type: m.Type, Labels: m.Labels, Bounds: m.Bounds, BoundText: m.BoundText}
	s.T = buf.t[:0]
	for _, r := range ss.runs {
		s.T = append(s.T, scrapes[r.first:r.first+r.n]...)
	}
	buf.t = s.T
	ss.decodeValues(buf, s)
	return s
}

// decodeValues fills s.V, or s.Sum, s.Count and s.B, in buf's arrays.
func (ss *storedSeries) decodeValues(buf *decodeBuffers, s *Series) {
	// The decoder's columns start as the encoder's did, and follow the
	// same values, so they make the same predictions.
	cols := buf.cols[:0]
	for _, c := range ss.cols {
		cols = append(cols, column{float: c.float})
	}
	buf.cols = cols
	r := newBitReader(&ss.w)
	if s.Type != scrape.Histogram {
		v := buf.v[:0]
		for range ss.n {
			v = append(v, cols[0].float64(cols[0].read(&r)))
		}
		s.V, buf.v = v, v
		return
	}
	n, nb := ss.n, len(s.Bounds)
	if cap(buf.b) < nb*n {
		buf.b = make([]float64, nb*n)
	}
	if cap(buf.xs) < nb+1 {
		buf.xs = make([]int64, nb+1)
	}
	if cap(buf.rows) < n {
		buf.rows = make([][]float64, n)
	}
	flat, xs, rows := buf.b[:nb*n], buf.xs[:nb+1], buf.rows[:n]
	sum, count := buf.sum[:0], buf.count[:0]
	var rr rowRange
	for i := range n {
		sum = append(sum, cols[0].float64(cols[0].read(&r)))
		rr.readRow(&r, cols[1:], xs)
		row := flat[i*nb : (i+1)*nb : (i+1)*nb]
		if ss.cumulativeBuckets {
			for b := range row {
				row[b] = cols[1+b].float64(xs[b])
			}
			count = append(count, cols[1+nb].float64(xs[nb]))
		} else {
			cum := int64(0)
			for b := range row {
				cum += xs[b]
				row[b] = float64(cum)
			}
			count = append(count, float64(cum+xs[nb]))
		}
		rows[i] = row
	}
	s.Sum, s.Count, s.B = sum, count, rows
	buf.sum, buf.count = sum, count
}

// Family describes a metric name across endpoints.
type Family struct {
	Name string
	Type scrape.Type
	Help string
}

// Store accumulates snapshots. It is safe for concurrent use.
type Store struct {
	mu       sync.Mutex
	series   map[seriesKey]*storedSeries
	families map[string]Family
	// scrapes are each endpoint's snapshot timestamps.
	scrapes map[string][]int64
	// bounds are the histograms' bucket bounds, one copy per distinct
	// set, keyed by boundsKey: a family's series share theirs.
	bounds  map[string]boundSet
	row     []float64 // scratch for alignBuckets
	scratch rowScratch
}

// boundSet is a histogram's bucket bounds and their exposition text.
type boundSet struct {
	bounds []float64
	text   []string
}

// NewStore returns an empty store.
func NewStore() *Store {
	return &Store{series: map[seriesKey]*storedSeries{}, families: map[string]Family{}, scrapes: map[string][]int64{}, bounds: map[string]boundSet{}}
}

// Add records one snapshot.
func (st *Store) Add(snap *scrape.Snapshot) {
	st.mu.Lock()
	defer st.mu.Unlock()
	ts := snap.TimestampNs()
	st.scrapes[snap.Endpoint] = append(st.scrapes[snap.Endpoint], ts)
	idx := int32(len(st.scrapes[snap.Endpoint]) - 1)
	for i := range snap.Families {
		f := &snap.Families[i]
		if _, ok := st.families[f.Name]; !ok {
			st.families[f.Name] = Family{Name: f.Name, Type: f.Type, Help: f.Help}
		}
		for j := range f.Series {
			in := &f.Series[j]
			key := in.Key
			if key == "" && len(in.Labels) > 0 {
				key = scrape.LabelKey(in.Labels)
			}
			k := seriesKey{snap.Endpoint, f.Name, key}
			ss := st.series[k]
			if ss == nil {
				ss = &storedSeries{meta: seriesMeta{Endpoint: snap.Endpoint, Name: f.Name, Type: f.Type, Labels: in.Labels}}
				if f.Type == scrape.Histogram {
					ss.meta.Bounds, ss.meta.BoundText = st.internBounds(in.Buckets)
				}
				st.series[k] = ss
			}
			if ss.meta.Type != f.Type || !ss.addScrape(idx) {
				continue // a family that changed type mid-run, or a repeated series: keep the first
			}
			if f.Type != scrape.Histogram {
				ss.addValue(in.Value, &st.scratch)
				continue
			}
			ss.addHistogram(in.Sum, in.Count, alignBuckets(&ss.meta, in.Buckets, &st.row), &st.scratch)
		}
	}
}

// internBounds returns the bounds of b, and their text, as the store's
// one copy of them. The text is copied: the parser's strings are slices of
// whole exposition lines, which would stay alive with it.
func (st *Store) internBounds(b []scrape.Bucket) ([]float64, []string) {
	key := boundsKey(b)
	set, ok := st.bounds[key]
	if !ok {
		set = boundSet{bounds: make([]float64, len(b)), text: make([]string, len(b))}
		for i, x := range b {
			set.bounds[i], set.text[i] = x.UpperBound, strings.Clone(x.LeText())
		}
		st.bounds[key] = set
	}
	return set.bounds, set.text
}

// boundsKey identifies a set of bounds by their values and text (each
// text after its length, so no two sets share a key).
func boundsKey(b []scrape.Bucket) string {
	var k []byte
	for _, x := range b {
		le := x.LeText()
		k = binary.LittleEndian.AppendUint64(k, math.Float64bits(x.UpperBound))
		k = binary.AppendUvarint(k, uint64(len(le)))
		k = append(k, le...)
	}
	return string(k)
}

// alignBuckets returns b's counts in the order of s.Bounds; a bound the
// scrape lacks counts 0. The row is scratch space, valid until the next
// call.
func alignBuckets(s *seriesMeta, b []scrape.Bucket, scratch *[]float64) []float64 {
	if cap(*scratch) < len(s.Bounds) {
		*scratch = make([]float64, len(s.Bounds))
	}
	out := (*scratch)[:len(s.Bounds)]
	if len(b) == len(s.Bounds) { // the usual case: the same bounds
		i := 0
		for ; i < len(b) && b[i].UpperBound == s.Bounds[i]; i++ {
			out[i] = b[i].Count
		}
		if i == len(b) {
			return out
		}
	}
	clear(out)
	for _, x := range b {
		if i := sort.SearchFloat64s(s.Bounds, x.UpperBound); i < len(s.Bounds) && s.Bounds[i] == x.UpperBound {
			out[i] = x.Count
		}
	}
	return out
}

// Each calls fn for every series, sorted by metric name, endpoint and labels.
func (st *Store) Each(fn func(f Family, s *Series)) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, k := range st.sortedKeys() {
		fn(st.families[k.name], st.series[k].decode(nil, st.scrapes[k.endpoint]))
	}
}

// sortedKeys orders the series by metric name, endpoint and labels; the
// caller holds st.mu.
func (st *Store) sortedKeys() []seriesKey {
	keys := make([]seriesKey, 0, len(st.series))
	for k := range st.series {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.name != b.name {
			return a.name < b.name
		}
		if a.endpoint != b.endpoint {
			return a.endpoint < b.endpoint
		}
		return a.labels < b.labels
	})
	return keys
}

// firstScrape is the endpoint's first snapshot time, or 0.
func (st *Store) firstScrape(endpoint string) int64 {
	if ts := st.scrapes[endpoint]; len(ts) > 0 {
		return ts[0]
	}
	return 0
}

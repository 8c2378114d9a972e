// Package servermetrics holds the time series scraped from servers' /metrics
// during a run, keyed by endpoint, metric and label set, and aggregates them
// over the profiling period into gauge, counter and histogram statistics
// with optional time slices.
package servermetrics

import (
	"sort"
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

// storedSeries is a series as the store holds it: its description (a
// Series without samples) and its samples compressed (compact.go).
type storedSeries struct {
	meta Series
	// runs are the endpoint's scrapes the series has a sample in, as runs
	// of consecutive indexes into Store.scrapes: the timestamps are the
	// endpoint's, shared, so a series present from its first scrape on
	// holds one run instead of a timestamp per sample.
	runs       []scrapeRun
	n          int
	v          numStream // gauge, counter and unknown values
	sum, count numStream
	buckets    []numStream // per bound
	// While every bucket count is a whole number, bucket b holds the
	// observations in its own range (c_b − c_{b−1}): that count stays put
	// between scrapes unless an observation fell in that range, so a
	// histogram costs a bit per quiet bucket. cumulativeBuckets: they hold
	// the counts as scraped (from the first count that is not a whole
	// number from 0 to 2^53 on).
	cumulativeBuckets bool
}

// scrapeRun is n consecutive scrapes of an endpoint from index first.
type scrapeRun struct{ first, n int32 }

// addScrape records a sample at the endpoint's scrape idx; false when the
// series has one there already (an exposition that repeats a series: the
// first is kept, as Prometheus rejects the repeat).
func (ss *storedSeries) addScrape(idx int32) bool {
	if k := len(ss.runs) - 1; k >= 0 {
		r := &ss.runs[k]
		switch end := r.first + r.n; {
		case end > idx:
			return false
		case end == idx:
			r.n++
			ss.n++
			return true
		}
	}
	ss.runs = append(ss.runs, scrapeRun{idx, 1})
	ss.n++
	return true
}

// addBuckets appends one scrape's cumulative bucket counts.
func (ss *storedSeries) addBuckets(row []float64) {
	if ss.buckets == nil {
		ss.buckets = make([]numStream, len(row))
	}
	if !ss.cumulativeBuckets {
		whole := true
		for _, c := range row {
			// Counts from 0 to 2^53 keep every difference exact.
			whole = whole && wholeNumber(c) && c >= 0
		}
		if !whole {
			ss.reencodeCumulative()
		}
	}
	if ss.cumulativeBuckets {
		for b, c := range row {
			ss.buckets[b].add(c)
		}
		return
	}
	below := int64(0)
	for b, c := range row {
		ss.buckets[b].addWhole(int64(c) - below) // whole, as checked above
		below = int64(c)
	}
}

// reencodeCumulative turns per-range bucket counts back into the
// cumulative counts scraped, for a histogram whose counts stopped being
// whole numbers.
func (ss *storedSeries) reencodeCumulative() {
	rows := ss.decodeBuckets(nil, ss.buckets[0].n) // the row being added is not stored yet
	ss.buckets = make([]numStream, len(ss.buckets))
	ss.cumulativeBuckets = true
	for _, row := range rows {
		for b, c := range row {
			ss.buckets[b].add(c)
		}
	}
}

// decodeBuckets expands the first n rows of cumulative bucket counts, one
// per sample, in buf's arrays (fresh ones when buf is nil). The bucket
// streams are read in lockstep, so the rows fill in sequence and share one
// allocation, which estimators then scan in order.
func (ss *storedSeries) decodeBuckets(buf *decodeBuffers, n int) [][]float64 {
	if buf == nil {
		buf = &decodeBuffers{}
	}
	nb := len(ss.buckets)
	if cap(buf.b) < nb*n {
		buf.b = make([]float64, nb*n)
	}
	flat := buf.b[:nb*n]
	buf.dec = buf.dec[:0]
	for b := range ss.buckets {
		buf.dec = append(buf.dec, ss.buckets[b].decoder())
	}
	for i := range n {
		row := flat[i*nb : (i+1)*nb]
		below := 0.0
		for b := range buf.dec {
			row[b] = buf.dec[b].next()
			if !ss.cumulativeBuckets {
				row[b] += below
				below = row[b]
			}
		}
	}
	if cap(buf.rows) < n {
		buf.rows = make([][]float64, n)
	}
	rows := buf.rows[:n]
	for i := range rows {
		rows[i] = flat[i*nb : (i+1)*nb : (i+1)*nb]
	}
	return rows
}

// decodeBuffers are the arrays a decoded series lives in, reused from one
// series to the next where the caller lets go of each before the next.
type decodeBuffers struct {
	t                []int64
	v, sum, count, b []float64
	rows             [][]float64
	dec              []numDecoder
}

// decode expands the samples into a Series of plain arrays, in fresh
// arrays when buf is nil, else in buf's (valid until buf's next use).
// scrapes are the endpoint's snapshot times.
func (ss *storedSeries) decode(buf *decodeBuffers, scrapes []int64) *Series {
	if buf == nil {
		buf = &decodeBuffers{}
	}
	s := ss.meta
	s.T = buf.t[:0]
	for _, r := range ss.runs {
		s.T = append(s.T, scrapes[r.first:r.first+r.n]...)
	}
	buf.t = s.T
	if s.Type != scrape.Histogram {
		s.V = ss.v.decode(buf.v[:0])
		buf.v = s.V
		return &s
	}
	s.Sum = ss.sum.decode(buf.sum[:0])
	s.Count = ss.count.decode(buf.count[:0])
	buf.sum, buf.count = s.Sum, s.Count
	s.B = ss.decodeBuckets(buf, ss.n)
	return &s
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
	row     []float64 // scratch for alignBuckets
}

// NewStore returns an empty store.
func NewStore() *Store {
	return &Store{series: map[seriesKey]*storedSeries{}, families: map[string]Family{}, scrapes: map[string][]int64{}}
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
				ss = &storedSeries{meta: Series{Endpoint: snap.Endpoint, Name: f.Name, Type: f.Type, Labels: in.Labels}}
				st.series[k] = ss
			}
			if ss.meta.Type != f.Type || !ss.addScrape(idx) {
				continue // a family that changed type mid-run, or a repeated series: keep the first
			}
			if f.Type != scrape.Histogram {
				ss.v.add(in.Value)
				continue
			}
			ss.sum.add(in.Sum)
			ss.count.add(in.Count)
			ss.addBuckets(alignBuckets(&ss.meta, in.Buckets, &st.row))
		}
	}
}

// alignBuckets returns b's counts in the order of s.Bounds, adopting b's
// bounds when the series has none yet; a bound the scrape lacks counts 0.
// The row is scratch space, valid until the next call.
func alignBuckets(s *Series, b []scrape.Bucket, scratch *[]float64) []float64 {
	if s.Bounds == nil {
		s.Bounds = make([]float64, len(b))
		s.BoundText = make([]string, len(b))
		for i, x := range b {
			s.Bounds[i], s.BoundText[i] = x.UpperBound, x.LeText()
		}
	}
	out := (*scratch)[:0]
	for range s.Bounds {
		out = append(out, 0)
	}
	*scratch = out
	if len(b) == len(s.Bounds) {
		same := true
		for i := range b {
			if b[i].UpperBound != s.Bounds[i] {
				same = false
				break
			}
		}
		if same {
			for i := range b {
				out[i] = b[i].Count
			}
			return out
		}
	}
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

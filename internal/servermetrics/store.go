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
	// rows is where B's next rows are carved from: a series' consecutive
	// rows share one allocation, so scanning them in order (estimators fit
	// every scrape interval) reads memory in sequence.
	rows []float64
}

// rowsPerChunk is how many bucket rows one allocation holds.
const rowsPerChunk = 128

// newRow returns a zeroed row of len(s.Bounds) counts.
func (s *Series) newRow() []float64 {
	n := len(s.Bounds)
	if len(s.rows) < n {
		s.rows = make([]float64, n*rowsPerChunk)
	}
	row := s.rows[:n:n]
	s.rows = s.rows[n:]
	return row
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
	series   map[seriesKey]*Series
	families map[string]Family
	// scrapes are each endpoint's snapshot timestamps.
	scrapes map[string][]int64
}

// NewStore returns an empty store.
func NewStore() *Store {
	return &Store{series: map[seriesKey]*Series{}, families: map[string]Family{}, scrapes: map[string][]int64{}}
}

// Add records one snapshot.
func (st *Store) Add(snap *scrape.Snapshot) {
	st.mu.Lock()
	defer st.mu.Unlock()
	ts := snap.TimestampNs()
	st.scrapes[snap.Endpoint] = append(st.scrapes[snap.Endpoint], ts)
	for i := range snap.Families {
		f := &snap.Families[i]
		if _, ok := st.families[f.Name]; !ok {
			st.families[f.Name] = Family{Name: f.Name, Type: f.Type, Help: f.Help}
		}
		for j := range f.Series {
			in := &f.Series[j]
			k := seriesKey{snap.Endpoint, f.Name, scrape.LabelKey(in.Labels)}
			s := st.series[k]
			if s == nil {
				s = &Series{Endpoint: snap.Endpoint, Name: f.Name, Type: f.Type, Labels: in.Labels}
				st.series[k] = s
			}
			if s.Type != f.Type {
				continue // a family that changed type mid-run: keep the first
			}
			s.T = append(s.T, ts)
			if f.Type != scrape.Histogram {
				s.V = append(s.V, in.Value)
				continue
			}
			s.Sum = append(s.Sum, in.Sum)
			s.Count = append(s.Count, in.Count)
			s.B = append(s.B, alignBuckets(s, in.Buckets))
		}
	}
}

// alignBuckets returns b's counts in the order of s.Bounds, adopting b's
// bounds when the series has none yet; a bound the scrape lacks counts 0.
func alignBuckets(s *Series, b []scrape.Bucket) []float64 {
	if s.Bounds == nil {
		s.Bounds = make([]float64, len(b))
		s.BoundText = make([]string, len(b))
		for i, x := range b {
			s.Bounds[i], s.BoundText[i] = x.UpperBound, x.LeText()
		}
	}
	out := s.newRow()
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
		fn(st.families[k.name], st.series[k])
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

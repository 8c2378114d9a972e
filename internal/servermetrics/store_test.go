package servermetrics

import (
	"math"
	"reflect"
	"testing"

	"github.com/llmbench/llmbench/internal/scrape"
)

// TestStoreRoundTrip: what the store hands back is exactly what was
// scraped, for the cases its compact layout treats specially: a series
// missing from some scrapes (its timestamps are the endpoint's, by run),
// a series repeated within one scrape (the first kept), histogram buckets
// stored per range while whole and cumulative once a count is fractional,
// negative and huge counts, and two endpoints on their own schedules.
func TestStoreRoundTrip(t *testing.T) {
	inf := math.Inf(1)
	hist := func(c1, c2, cinf float64) scrape.Series {
		return scrape.Series{Sum: cinf * 0.25, Count: cinf, Buckets: []scrape.Bucket{{UpperBound: 0.1, Count: c1}, {UpperBound: 1, Count: c2}, {UpperBound: inf, Count: cinf}}}
	}
	type scrapeOf struct {
		ep    string
		ts    int64
		gauge []float64 // one series each, labelled i; NaN: absent
		h     scrape.Series
	}
	const a, b = "http://a/metrics", "http://b/metrics"
	nan := math.NaN()
	in := []scrapeOf{
		{a, 100, []float64{1, 5}, hist(0, 2, 3)},
		{b, 150, []float64{7, nan}, hist(1, 1, 1)},
		{a, 200, []float64{1, nan}, hist(0, 2, 3)},
		{a, 300, []float64{-4, 6}, hist(4, 9, 9)},
		{b, 350, []float64{nan, 8}, hist(1, 2.5, 3)}, // fractional from here on
		{a, 400, []float64{1e15, 6}, hist(4, 9, 1<<52)},
		{b, 450, []float64{7, 9}, hist(2, 4, 6)},
	}
	st := NewStore()
	for _, s := range in {
		var gs []scrape.Series
		for i, v := range s.gauge {
			if !math.IsNaN(v) {
				gs = append(gs, scrape.Series{Labels: []scrape.Label{{Name: "i", Value: string(rune('0' + i))}}, Value: v})
			}
		}
		if s.ep == a && s.ts == 200 { // a repeated series: the first counts
			gs = append(gs, scrape.Series{Labels: []scrape.Label{{Name: "i", Value: "0"}}, Value: 99})
		}
		st.Add(&scrape.Snapshot{Endpoint: s.ep, FirstByteNs: s.ts, Families: []scrape.Family{
			{Name: "g", Type: scrape.Gauge, Series: gs},
			{Name: "h", Type: scrape.Histogram, Series: []scrape.Series{s.h}},
		}})
	}
	type want struct {
		t []int64
		v []float64
	}
	got := map[string]want{}
	hists := map[string]*Series{}
	st.Each(func(f Family, s *Series) {
		key := s.Endpoint + " " + s.Name
		if len(s.Labels) > 0 {
			key += " " + s.Labels[0].Value
		}
		if f.Type == scrape.Histogram {
			hists[s.Endpoint] = s
			return
		}
		got[key] = want{s.T, s.V}
	})
	wantG := map[string]want{
		a + " g 0": {[]int64{100, 200, 300, 400}, []float64{1, 1, -4, 1e15}},
		a + " g 1": {[]int64{100, 300, 400}, []float64{5, 6, 6}},
		b + " g 0": {[]int64{150, 450}, []float64{7, 7}},
		b + " g 1": {[]int64{350, 450}, []float64{8, 9}},
	}
	if !reflect.DeepEqual(got, wantG) {
		t.Errorf("gauges\n got %v\nwant %v", got, wantG)
	}
	for ep, rows := range map[string][][]float64{
		a: {{0, 2, 3}, {0, 2, 3}, {4, 9, 9}, {4, 9, 1 << 52}},
		b: {{1, 1, 1}, {1, 2.5, 3}, {2, 4, 6}},
	} {
		h := hists[ep]
		if h == nil {
			t.Fatalf("%s: no histogram", ep)
		}
		if !reflect.DeepEqual(h.B, rows) {
			t.Errorf("%s buckets %v, want %v", ep, h.B, rows)
		}
		for i, row := range rows {
			if h.Count[i] != row[2] || h.Sum[i] != row[2]*0.25 {
				t.Errorf("%s sample %d: count %v sum %v, want %v and %v", ep, i, h.Count[i], h.Sum[i], row[2], row[2]*0.25)
			}
		}
	}
}

// TestQuietHistogramCostsABitPerBucket: a 20-bucket histogram whose new
// observations all fall in one bucket range costs about a byte for that
// range and a bit for each other bucket per scrape, not a delta for every
// cumulative bucket above it.
func TestQuietHistogramCostsABitPerBucket(t *testing.T) {
	st := NewStore()
	bounds := make([]scrape.Bucket, 20)
	for i := range bounds {
		bounds[i].UpperBound = float64(i + 1)
	}
	bounds[19].UpperBound = math.Inf(1)
	const scrapes = 1000
	for n := range scrapes {
		bs := append([]scrape.Bucket(nil), bounds...)
		for i := range bs {
			if i >= 5 {
				bs[i].Count = float64(3 * n) // 3 new observations in (5, 6] each scrape
			}
		}
		st.Add(&scrape.Snapshot{Endpoint: ep, FirstByteNs: int64(n), Families: []scrape.Family{
			{Name: "h", Type: scrape.Histogram, Series: []scrape.Series{{Buckets: bs, Count: float64(3 * n)}}}}})
	}
	size := 0
	for _, ss := range st.series {
		for _, b := range ss.buckets {
			size += len(b.w.buf)
		}
	}
	if per := float64(size) / scrapes; per > 4 {
		t.Errorf("%.1f bytes of buckets per scrape, want about 3.4 (one byte and 19 bits)", per)
	}
}

// TestStoreOddHistograms: a histogram without buckets keeps a row per
// sample, and counts whose differences a float64 cannot hold exactly
// (negative, near ±2^53) come back exactly.
func TestStoreOddHistograms(t *testing.T) {
	st := NewStore()
	inf := math.Inf(1)
	big := float64(1<<53 - 1)
	rows := [][]float64{{3, 5}, {-big, big}, {-big + 1, big}}
	for i, row := range rows {
		st.Add(&scrape.Snapshot{Endpoint: ep, FirstByteNs: int64(i), Families: []scrape.Family{
			{Name: "bare", Type: scrape.Histogram, Series: []scrape.Series{{Count: float64(i), Sum: 1}}},
			{Name: "odd", Type: scrape.Histogram, Series: []scrape.Series{{Count: row[1], Buckets: []scrape.Bucket{{UpperBound: 1, Count: row[0]}, {UpperBound: inf, Count: row[1]}}}}},
		}})
	}
	st.Each(func(_ Family, s *Series) {
		switch s.Name {
		case "bare":
			if len(s.B) != 3 || len(s.B[2]) != 0 || !reflect.DeepEqual(s.Count, []float64{0, 1, 2}) {
				t.Errorf("bare histogram: buckets %v counts %v, want 3 empty rows and 0, 1, 2", s.B, s.Count)
			}
		case "odd":
			if !reflect.DeepEqual(s.B, rows) {
				t.Errorf("odd histogram: buckets %v, want %v", s.B, rows)
			}
		}
	})
}

package servermetrics

import (
	"fmt"
	"math"
	"math/rand/v2"
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

// TestSteadyHistogramCost: a 20-bucket histogram whose new observations
// all fall in one bucket range, 3 a scrape, costs 2 bits a scrape once its
// columns have learnt the step: its unchanged sum's, and the range of
// buckets whose prediction missed, empty. Worked out by hand from the
// code (compact.go) for the first rows:
//
//	row 0: sum '0'; all counts 0, as predicted: range width 0, '1'.
//	row 1: sum '0'; bucket 5 (per range) 3, predicted 0: width 1 (zigzag
//	       2, '011'), start 5 (zigzag 10, '0001011'), miss zigzag 6 with
//	       k 0 ('1111110'): 18 bits.
//	row 2: sum '0'; 6 predicted 3 by the last value (the predictors tie):
//	       width and start unchanged ('1', '1'), miss 6 with k 3
//	       ('0110'): 7 bits.
//	row 3: sum '0'; the last step predicts 9: width 0 (zigzag 1,
//	       '010'): 4 bits. Every row after: '0', '1'.
func TestSteadyHistogramCost(t *testing.T) {
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
	want := 2 + 18 + 7 + 4 + (scrapes-4)*2
	for _, ss := range st.series {
		if ss.w.nbit != want {
			t.Errorf("%d bits for %d scrapes, want %d", ss.w.nbit, scrapes, want)
		}
	}
}

// TestHistogramRoundTrip: histogram rows come back bit for bit in each of
// the bucket codings: per range (whole counts from 0 to 2^53, the count
// against the +Inf bucket's), and cumulative, by whole numbers or floats,
// from the first row that is not, with the rows before rewritten.
func TestHistogramRoundTrip(t *testing.T) {
	negZero, nanPayload := math.Copysign(0, -1), math.Float64frombits(0x7ff8_0000_0000_0001)
	type row struct {
		sum, count float64
		b          [3]float64 // bounds 1, 10, +Inf
	}
	for _, tc := range []struct {
		name string
		rows []row
	}{
		{"per range", []row{{0, 0, [3]float64{0, 0, 0}}, {1.5, 2, [3]float64{1, 2, 2}}, {2.5, 3, [3]float64{1, 3, 3}}, {2.5, 3, [3]float64{1, 3, 3}}}},
		{"count beyond +Inf", []row{{0, 5, [3]float64{1, 2, 2}}, {0, 9, [3]float64{1, 2, 2}}}},
		{"count below +Inf", []row{{0, 1, [3]float64{1, 2, 2}}}},
		{"reset", []row{{10, 8, [3]float64{3, 8, 8}}, {0.5, 1, [3]float64{0, 1, 1}}, {2, 4, [3]float64{2, 4, 4}}}},
		{"whole sums", []row{{0, 0, [3]float64{0, 0, 0}}, {7, 2, [3]float64{1, 2, 2}}, {30, 4, [3]float64{1, 3, 4}}}},
		{"sum specials", []row{{nanPayload, 1, [3]float64{1, 1, 1}}, {math.Inf(1), 1, [3]float64{1, 1, 1}}, {negZero, 1, [3]float64{1, 1, 1}}, {-3.25, 1, [3]float64{1, 1, 1}}}},
		{"fractional count later", []row{{0, 2, [3]float64{1, 2, 2}}, {0, 2.5, [3]float64{1, 2, 2.5}}, {0, 3, [3]float64{1, 3, 3}}}},
		{"negative count", []row{{0, 2, [3]float64{1, 2, 2}}, {0, 2, [3]float64{-1, 2, 2}}}},
		{"negative zero count", []row{{0, 2, [3]float64{1, 2, 2}}, {0, 2, [3]float64{negZero, 2, 2}}}},
		{"at 2^53", []row{{0, 2, [3]float64{1, 2, 2}}, {0, maxExactInt, [3]float64{1, 2, maxExactInt}}, {0, maxExactInt - 1, [3]float64{0, 1, maxExactInt - 1}}}},
		{"NaN and Inf counts", []row{{0, 2, [3]float64{1, 2, 2}}, {0, math.Inf(1), [3]float64{math.NaN(), nanPayload, math.Inf(1)}}, {0, 2, [3]float64{1, 2, 2}}}},
	} {
		st := NewStore()
		for i, r := range tc.rows {
			st.Add(&scrape.Snapshot{Endpoint: ep, FirstByteNs: int64(i), Families: []scrape.Family{{Name: "h", Type: scrape.Histogram, Series: []scrape.Series{{
				Sum: r.sum, Count: r.count, Buckets: []scrape.Bucket{{UpperBound: 1, Count: r.b[0]}, {UpperBound: 10, Count: r.b[1]}, {UpperBound: math.Inf(1), Count: r.b[2]}}}}}}})
		}
		st.Each(func(_ Family, s *Series) {
			if len(s.Sum) != len(tc.rows) {
				t.Fatalf("%s: %d rows back, want %d", tc.name, len(s.Sum), len(tc.rows))
			}
			same := func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }
			for i, r := range tc.rows {
				ok := same(s.Sum[i], r.sum) && same(s.Count[i], r.count)
				for b := range r.b {
					ok = ok && same(s.B[i][b], r.b[b])
				}
				if !ok {
					t.Errorf("%s row %d: sum %v count %v buckets %v, want %v", tc.name, i, s.Sum[i], s.Count[i], s.B[i], r)
				}
			}
		})
	}
}

// TestStoreRoundTripRandom: many histograms and gauges whose values move
// at random, scraped together, come back exactly, read back midway and at
// the end: a check that each series' rows stay in step with the store's
// scratch space shared between series.
func TestStoreRoundTripRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const series, buckets, scrapes = 12, 10, 300
	bounds := make([]float64, buckets)
	for k := range bounds {
		bounds[k] = float64(int(1) << k)
	}
	bounds[buckets-1] = math.Inf(1)
	type state struct {
		obs        [buckets]float64
		sum, gauge float64
	}
	states := make([]state, series)
	type sample struct {
		sum, count, gauge float64
		cum               []float64
	}
	var in [][]sample // by scrape, by series
	st := NewStore()
	check := func() {
		got := map[string]*Series{}
		st.Each(func(_ Family, s *Series) {
			c := *s
			c.V, c.Sum, c.Count = append([]float64(nil), s.V...), append([]float64(nil), s.Sum...), append([]float64(nil), s.Count...)
			got[s.Name+s.Labels[0].Value] = &c
		})
		for i, row := range in {
			for e, x := range row {
				h, g := got[fmt.Sprint("h", e)], got[fmt.Sprint("g", e)]
				if h.Sum[i] != x.sum || h.Count[i] != x.count || g.V[i] != x.gauge {
					t.Fatalf("scrape %d series %d: sum %v count %v gauge %v, want %v %v %v", i, e, h.Sum[i], h.Count[i], g.V[i], x.sum, x.count, x.gauge)
				}
			}
		}
	}
	for n := range scrapes {
		var hs, gs []scrape.Series
		var row []sample
		for e := range states {
			x := &states[e]
			// Each series has its habit: quiet, busy, or jumping by
			// hundreds (the bench's churn).
			switch e % 3 {
			case 0:
				if rng.IntN(4) == 0 {
					x.obs[rng.IntN(3)]++
				}
			case 1:
				for range rng.IntN(30) {
					k := min(max(4+int(rng.NormFloat64()*1.5), 0), buckets-1)
					x.obs[k]++
					x.sum += bounds[max(k-1, 0)] * (0.5 + 0.5*rng.Float64())
				}
			default:
				for k := range x.obs {
					x.obs[k] = float64((k*3 + n*(k%4+1)) % 997)
				}
				x.sum = float64(n) * 0.37
			}
			x.gauge += float64(rng.IntN(5) - 2)
			bs := make([]scrape.Bucket, buckets)
			cum := make([]float64, buckets)
			c := 0.0
			for k := range bs {
				c += x.obs[k]
				bs[k], cum[k] = scrape.Bucket{UpperBound: bounds[k], Count: c}, c
			}
			lbl := []scrape.Label{{Name: "e", Value: fmt.Sprint(e)}}
			hs = append(hs, scrape.Series{Labels: lbl, Sum: x.sum, Count: c, Buckets: bs})
			gs = append(gs, scrape.Series{Labels: lbl, Value: x.gauge})
			row = append(row, sample{x.sum, c, x.gauge, cum})
		}
		in = append(in, row)
		st.Add(&scrape.Snapshot{Endpoint: ep, FirstByteNs: int64(n), Families: []scrape.Family{
			{Name: "h", Type: scrape.Histogram, Series: hs}, {Name: "g", Type: scrape.Gauge, Series: gs}}})
		if n == scrapes/2 {
			check()
		}
	}
	check()
	st.Each(func(_ Family, s *Series) {
		if s.Type != scrape.Histogram {
			return
		}
		var e int
		fmt.Sscan(s.Labels[0].Value, &e)
		for i := range in {
			if !reflect.DeepEqual(s.B[i], in[i][e].cum) {
				t.Fatalf("scrape %d series %d: buckets %v, want %v", i, e, s.B[i], in[i][e].cum)
			}
		}
	})
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

// FuzzHistogram: any sequence of histogram rows, their counts moving by
// steps of every size, going down, turning fractional, negative, -0 or
// any float64 bit pattern, their sums likewise, round-trips.
func FuzzHistogram(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 1, 1, 1, 1, 2, 5, 0, 7})
	f.Add([]byte("llmbench histogram rows"))
	f.Fuzz(func(t *testing.T, b []byte) {
		type row struct{ sum, count, b0, b1 float64 }
		var rows []row
		var r row
		move := func(v float64, kind, x byte) float64 {
			switch kind % 7 {
			case 0:
				return v
			case 1:
				return v + float64(x)
			case 2:
				return v + float64(int16(x)<<7)
			case 3:
				return v - float64(x)
			case 4:
				return v + float64(x)/8
			case 5:
				return math.Copysign(0, -1)
			default:
				return math.Float64frombits(uint64(x) * 0x0101010101010101)
			}
		}
		for len(b) >= 4 {
			r.b0 = move(r.b0, b[0], b[1])
			r.b1 = move(r.b1, b[0]>>3, b[1]^b[2])
			r.count = move(r.count, b[2], b[3])
			r.sum = move(r.sum, b[3], b[0])
			rows = append(rows, r)
			b = b[4:]
		}
		st := NewStore()
		for i, r := range rows {
			st.Add(&scrape.Snapshot{Endpoint: ep, FirstByteNs: int64(i), Families: []scrape.Family{{Name: "h", Type: scrape.Histogram, Series: []scrape.Series{{
				Sum: r.sum, Count: r.count, Buckets: []scrape.Bucket{{UpperBound: 1, Count: r.b0}, {UpperBound: math.Inf(1), Count: r.b1}}}}}}})
		}
		same := func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }
		st.Each(func(_ Family, s *Series) {
			if len(s.Sum) != len(rows) {
				t.Fatalf("%d rows back, want %d", len(s.Sum), len(rows))
			}
			for i, r := range rows {
				if !same(s.Sum[i], r.sum) || !same(s.Count[i], r.count) || !same(s.B[i][0], r.b0) || !same(s.B[i][1], r.b1) {
					t.Fatalf("row %d: %v %v %v, want %+v", i, s.Sum[i], s.Count[i], s.B[i], r)
				}
			}
		})
	})
}

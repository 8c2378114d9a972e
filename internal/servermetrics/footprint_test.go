package servermetrics

import (
	"math"
	"testing"
	"unsafe"

	"github.com/llmbench/llmbench/internal/scrape"
)

// TestFootprint: what a store holds grows by the encoded samples and the
// timestamps, and the capacity past them stays within the buffers'
// eighth to spare.
func TestFootprint(t *testing.T) {
	counter := func(scrapes int) Footprint {
		st := NewStore()
		for i := range scrapes {
			st.Add(&scrape.Snapshot{Endpoint: ep, FirstByteNs: int64(i), Families: []scrape.Family{
				{Name: "c", Type: scrape.Counter, Series: []scrape.Series{{Value: float64(7 * i)}}}}})
		}
		return st.Footprint()
	}
	one, many := counter(1), counter(1000)
	if one.Series != 1 || one.Scrapes != 1 || many.Series != 1 || many.Scrapes != 1000 {
		t.Fatalf("counted %d series and %d scrapes, then %d and %d", one.Series, one.Scrapes, many.Series, many.Scrapes)
	}
	// A counter growing by 7 a scrape takes 1046 bits over 1,000
	// scrapes (TestColumnCost), 131 bytes, one for its first value;
	// each scrape's timestamp 8.
	if got, want := many.Used-one.Used, int64(131-1+999*8); got != want {
		t.Errorf("1,000 scrapes hold %d bytes more than one, want %d", got, want)
	}
	for _, f := range []Footprint{one, many} {
		if f.Allocated < f.Used {
			t.Errorf("allocated %d < used %d", f.Allocated, f.Used)
		}
	}
}

// TestBoundsShared: histograms with the same bounds share one copy of
// them, and their text is the store's own, not the parser's.
func TestBoundsShared(t *testing.T) {
	le := "0.5 and the rest of a long exposition line"[:3]
	bk := func(text string) []scrape.Bucket {
		return []scrape.Bucket{{UpperBound: 0.5, Le: text}, {UpperBound: math.Inf(1), Le: "+Inf"}}
	}
	st := NewStore()
	st.Add(&scrape.Snapshot{Endpoint: ep, Families: []scrape.Family{
		{Name: "a", Type: scrape.Histogram, Series: []scrape.Series{{Buckets: bk(le)}}},
		{Name: "b", Type: scrape.Histogram, Series: []scrape.Series{{Buckets: bk("0.5")}}},
		{Name: "c", Type: scrape.Histogram, Series: []scrape.Series{{Buckets: bk("0.50")}}},
	}})
	got := map[string]*Series{}
	st.Each(func(_ Family, s *Series) { got[s.Name] = s })
	if &got["a"].Bounds[0] != &got["b"].Bounds[0] || &got["a"].BoundText[0] != &got["b"].BoundText[0] {
		t.Error("a and b, with the same bounds, hold two copies")
	}
	if &got["a"].BoundText[0] == &got["c"].BoundText[0] || got["c"].BoundText[0] != "0.50" {
		t.Errorf("c, written 0.50, shares a's bounds or lost its text: %q", got["c"].BoundText)
	}
	if t0 := got["a"].BoundText[0]; t0 != "0.5" || unsafe.StringData(t0) == unsafe.StringData(le) {
		t.Errorf("a's bound text %q is not a copy of the scraped one", t0)
	}
}

package servermetrics

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/llmbench/llmbench/internal/record"
	"github.com/llmbench/llmbench/internal/scrape"
	"github.com/llmbench/llmbench/internal/scrape/scrapetest"
	"github.com/llmbench/llmbench/internal/stats"
)

// BenchmarkScrapeIngest is one whole scrape as a run does it: HTTP fetch
// over loopback, parse, hash, and ingest into the store.
func BenchmarkScrapeIngest(b *testing.B) {
	body := scrapetest.BigExposition()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		w.Write(body)
	}))
	defer srv.Close()
	st := NewStore()
	c := scrape.NewCollector(scrape.Options{URLs: []string{srv.URL + "/metrics"}, Interval: time.Hour, ReachabilityTimeout: 10 * time.Second,
		Clock: record.NewClock(), Sink: st.Add})
	c.Start(context.Background())
	defer c.Finish(context.Background(), context.Background())
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		c.Checkpoint(context.Background(), time.Minute)
	}
	b.ReportMetric(float64(len(body))/1024, "KB/scrape")
}

// hourOfHistograms is a store holding an hour of scrapes every 333 ms
// (10,800) of 8 engines × 25 histogram families of 20 buckets (the
// histograms of scrapetest.BigExposition), each gaining a few lognormal observations
// per interval.
func hourOfHistograms(b *testing.B) (*Store, Window) {
	b.Helper()
	const scrapes, engines, families, buckets = 10800, 8, 25, 20
	bounds := make([]float64, buckets+1)
	for k := range buckets {
		bounds[k] = 0.001 * float64(int(1)<<k)
	}
	bounds[buckets] = math.Inf(1)
	type state struct {
		cum        []float64
		sum, count float64
	}
	states := make([]state, engines*families)
	for i := range states {
		states[i].cum = make([]float64, buckets+1)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	st := NewStore()
	for s := range scrapes {
		fams := make([]scrape.Family, families)
		for f := range families {
			fams[f] = scrape.Family{Name: fmt.Sprintf("vllm:hist_%02d_seconds", f), Type: scrape.Histogram, Help: "h"}
			for e := range engines {
				x := &states[f*engines+e]
				for range rng.IntN(10) {
					v := 0.05 * float64(f+1) * math.Exp(rng.NormFloat64())
					x.sum += v
					x.count++
					for k, ub := range bounds {
						if v <= ub {
							x.cum[k]++
						}
					}
				}
				bk := make([]scrape.Bucket, len(bounds))
				for k, ub := range bounds {
					bk[k] = scrape.Bucket{UpperBound: ub, Count: x.cum[k]}
				}
				fams[f].Series = append(fams[f].Series, scrape.Series{
					Labels: []scrape.Label{{Name: "engine", Value: fmt.Sprint(e)}}, Sum: x.sum, Count: x.count, Buckets: bk})
			}
		}
		st.Add(&scrape.Snapshot{Endpoint: "http://big/metrics", FirstByteNs: int64(s) * 333_000_000, Families: fams})
	}
	return st, Window{StartNs: 0, EndNs: int64(scrapes-1) * 333_000_000}
}

// BenchmarkAggregateHourOfHistograms aggregates every histogram of an hour
// of scrapes (200 series × 10,800 scrapes) with each estimator.
func BenchmarkAggregateHourOfHistograms(b *testing.B) {
	st, w := hourOfHistograms(b)
	for _, est := range []struct {
		name string
		e    Estimator
	}{{"linear", stats.BucketLinear{}}, {"aiperf", stats.AIPerfPolynomial{}}, {"interval-fit", stats.IntervalFit{}}} {
		b.Run(est.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if ms := st.Aggregate(w, est.e); len(ms) != 25 {
					b.Fatalf("%d metrics", len(ms))
				}
			}
		})
	}
}

// BenchmarkStoreAdd is the store's share of a scrape: Add of one parsed
// scrapetest.BigExposition snapshot (200 histograms of 21 buckets, 480
// gauges and counters) whose values move between scrapes the way a busy
// server's do, into a store that already holds the scrapes before it.
// Moving the values is left out of the time.
func BenchmarkStoreAdd(b *testing.B) {
	fams, err := scrape.NewParser().Parse(scrapetest.BigExposition())
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	move := func() {
		for f := range fams {
			for i := range fams[f].Series {
				s := &fams[f].Series[i]
				switch fams[f].Type {
				case scrape.Histogram:
					// 0–40 observations around the series' own typical
					// bucket; its sum grows by their values.
					typical := (f + i) % 16
					for range rng.IntN(41) {
						k := min(max(typical+int(rng.NormFloat64()*1.5), 0), len(s.Buckets)-2)
						for j := k; j < len(s.Buckets); j++ {
							s.Buckets[j].Count++
						}
						s.Sum += s.Buckets[k].UpperBound * (0.5 + 0.5*rng.Float64())
					}
					s.Count = s.Buckets[len(s.Buckets)-1].Count
				case scrape.Counter:
					s.Value += float64(rng.IntN(8))
				default:
					s.Value = float64(rng.IntN(100))
				}
			}
		}
	}
	st := NewStore()
	b.ReportAllocs()
	ts := int64(0)
	for b.Loop() {
		b.StopTimer()
		move()
		ts += 333_000_000
		snap := &scrape.Snapshot{Endpoint: "http://big/metrics", FirstByteNs: ts, Families: fams}
		b.StartTimer()
		st.Add(snap)
	}
}

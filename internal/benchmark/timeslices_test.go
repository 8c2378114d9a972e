package benchmark

import (
	"sync/atomic"
	"testing"

	"github.com/llmbench/llmbench/internal/metrics"
	"github.com/llmbench/llmbench/internal/record"
	"github.com/llmbench/llmbench/internal/tokenizer"
)

// TestTimeslicesByStart: records go to the slice they started in, counted
// from the profiling start; a slice profiling ended inside is incomplete.
func TestTimeslicesByStart(t *testing.T) {
	const ms = int64(1e6)
	var origin atomic.Int64
	origin.Store(1_000 * ms)
	ts := &timeslices{origin: &origin, width: 100 * ms}
	clock := record.ClockAt(0)
	run := metrics.NewAggregator(false)
	// start (ms since the clock's zero) and latency (ms) of each request
	for _, r := range [][2]int64{{1_000, 30}, {1_099, 40}, {1_100, 50}, {1_250, 20}, {999, 10}} {
		rec := &record.Record{StartPerf: r[0] * ms, EndPerf: (r[0] + r[1]) * ms, ResponsePerfs: []int64{(r[0] + r[1]) * ms}, OutputText: "a"}
		v := metrics.Compute(rec, tokenizer.Words{}, clock, metrics.DefaultOptions())
		ts.add(rec, &v)
		run.Add(rec, &v)
	}
	got := ts.results(1_280*ms, run)
	// slice 0 [1000,1100): 1000, 1099 and 999 (a hair early); slice 1:
	// 1100; slice 2 [1200,1300): 1250, cut by the end at 1280.
	want := []struct {
		count    float64
		latAvg   float64
		complete bool
		// effective_concurrency over the slice from every request in
		// flight: [1000,1100) 9 ms of the one from 999, 30, and 1 of the
		// one from 1099; [1100,1200) 39 + 50; [1200,1280] 20 of 80.
		concurrency float64
	}{{3, (30 + 40 + 10) / 3.0, true, 0.40}, {1, 50, true, 0.89}, {1, 20, false, 0.25}}
	if len(got) != len(want) {
		t.Fatalf("%d slices, want %d", len(got), len(want))
	}
	for i, w := range want {
		s := got[i]
		if s.StartNs != (1_000+int64(i)*100)*ms || s.EndNs != s.StartNs+100*ms || s.Complete != w.complete {
			t.Errorf("slice %d: [%d, %d) complete %v", i, s.StartNs, s.EndNs, s.Complete)
		}
		count, _ := s.Results.Get("request_count")
		lat, _ := s.Results.Get("request_latency")
		if count.Value != w.count || lat.Dist == nil || !nearly(lat.Dist.Avg, w.latAvg) {
			t.Errorf("slice %d: %v requests, latency %+v; want %v and avg %v", i, count.Value, lat.Dist, w.count, w.latAvg)
		}
		if c, ok := s.Results.Get("effective_concurrency"); !ok || !nearly(c.Dist.Avg, w.concurrency) {
			t.Errorf("slice %d: effective_concurrency %+v, want avg %v", i, c.Dist, w.concurrency)
		}
	}
}

func nearly(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

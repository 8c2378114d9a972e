package servermetrics

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmbench/llmbench/internal/mockserver"
	"github.com/llmbench/llmbench/internal/record"
	"github.com/llmbench/llmbench/internal/scrape"
	"github.com/llmbench/llmbench/internal/stats"
)

const sec = int64(1e9)
const ep = "http://e:8000/metrics"

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

type point struct {
	gauge, counter, reset float64
	born                  *float64
	hist                  []float64 // cumulative buckets for bounds 0.1, 1, +Inf
	hsum                  float64
}

// buildStore scrapes at t = 0..7 s. The profiling window used by the tests
// is [1.5 s, 5.5 s]; t=0 is the baseline, t=1 warm-up, t=7 the final scrape.
func buildStore() *Store {
	f := func(v float64) *float64 { return &v }
	pts := []point{
		{100, 10, 100, nil, []float64{0, 0, 0}, 0},
		{100, 20, 100, nil, []float64{1, 2, 2}, 0.6},
		{1, 30, 5, nil, []float64{1, 3, 3}, 1.1},
		{2, 30, 5, nil, []float64{2, 4, 4}, 1.6},
		{3, 50, 6, f(7), []float64{2, 6, 7}, 4.5},
		{10, 70, 7, f(8), []float64{3, 7, 8}, 5.5},
		{50, 75, 7, f(8), []float64{3, 8, 9}, 7},
		{0, 80, 8, f(9), []float64{3, 8, 10}, 9},
	}
	st := NewStore()
	inf := math.Inf(1)
	lbl := []scrape.Label{{Name: "model_name", Value: "m"}}
	for i, p := range pts {
		fams := []scrape.Family{
			{Name: "g_running", Type: scrape.Gauge, Help: "Running.", Series: []scrape.Series{{Labels: lbl, Value: p.gauge}}},
			{Name: "c_tokens", Type: scrape.Counter, Help: "Tokens.", Series: []scrape.Series{{Labels: lbl, Value: p.counter}}},
			{Name: "r_requests", Type: scrape.Counter, Series: []scrape.Series{{Value: p.reset}}},
			{Name: "h_seconds", Type: scrape.Histogram, Series: []scrape.Series{{Labels: lbl, Sum: p.hsum, Count: p.hist[2],
				Buckets: []scrape.Bucket{{UpperBound: 0.1, Count: p.hist[0]}, {UpperBound: 1, Count: p.hist[1]}, {UpperBound: inf, Count: p.hist[2]}}}}},
		}
		if p.born != nil {
			fams = append(fams, scrape.Family{Name: "n_errors", Type: scrape.Counter, Series: []scrape.Series{{Value: *p.born}}})
		}
		st.Add(&scrape.Snapshot{Endpoint: ep, FirstByteNs: int64(i) * sec, Families: fams})
	}
	return st
}

func find(t *testing.T, ms []Metric, name string) (Metric, SeriesStats) {
	t.Helper()
	for _, m := range ms {
		if m.Name == name {
			return m, m.Series[0]
		}
	}
	t.Fatalf("metric %s missing", name)
	return Metric{}, SeriesStats{}
}

func TestAggregate(t *testing.T) {
	w := Window{StartNs: 1500 * 1e6, EndNs: 5500 * 1e6, SliceNs: 2 * sec}
	ms := buildStore().Aggregate(w, stats.BucketLinear{})

	// Gauge: window samples t=2..5 are 1, 2, 3, 10.
	m, g := find(t, ms, "g_running")
	if m.Type != scrape.Gauge || m.Description != "Running." {
		t.Fatalf("gauge metric %+v", m)
	}
	gs := g.Gauge
	// mean 4; squared deviations 9+4+1+36 = 50; sample std sqrt(50/3)
	if gs.Avg != 4 || gs.Min != 1 || gs.Max != 10 || !near(gs.Std, math.Sqrt(50.0/3)) || gs.Samples != 4 {
		t.Errorf("gauge stats %+v", gs)
	}
	// p50 = 2.5; p90: h = 2.7 -> 3 + 0.7*7 = 7.9
	if !near(gs.P[4], 2.5) || !near(gs.P[6], 7.9) {
		t.Errorf("gauge p50 %v p90 %v", gs.P[4], gs.P[6])
	}
	// Slices [1.5,3.5) and [3.5,5.5]: {1,2} and {3,10}.
	if len(g.Slices) != 2 || g.Slices[0].Avg != 1.5 || g.Slices[1].Avg != 6.5 || g.Slices[1].Min != 3 || g.Slices[1].Max != 10 || !g.Slices[1].Complete {
		t.Errorf("gauge slices %+v", g.Slices)
	}

	// Counter: reference is t=1 (20); the final scrape (80) ends it.
	_, c := find(t, ms, "c_tokens")
	if c.Counter.Total != 60 || c.Counter.Rate != 15 { // 60 over the 4 s window
		t.Errorf("counter %+v", c.Counter)
	}
	// Slice totals: 30-20 = 10 (rate 5), 70-30 = 40 (rate 20).
	if len(c.Slices) != 2 || c.Slices[0].Total != 10 || c.Slices[0].Rate != 5 || c.Slices[1].Total != 40 || c.Slices[1].Rate != 20 {
		t.Errorf("counter slices %+v", c.Slices)
	}
	// rate_avg 12.5, min 5, max 20, std (ddof=1) = sqrt(2*7.5²) = 10.6066
	if r := c.Counter.SliceRates; r == nil || r.Avg != 12.5 || r.Min != 5 || r.Max != 20 || !near(r.Std, math.Sqrt(112.5)) {
		t.Errorf("rate stats %+v", r)
	}

	// A counter that restarted (100 → 5 at 2 s) counts its increase across
	// the reset: from the reference 100, 5 + 0 + 1 + 1 + 0 + 1 = 8 over the
	// 4 s window (the old clamp said 0).
	if _, r := find(t, ms, "r_requests"); r.Counter.Total != 8 || r.Counter.Rate != 2 || len(r.Resets) != 1 || r.Resets[0] != 2*sec {
		t.Errorf("reset counter %+v, resets %v", r.Counter, r.Resets)
	}
	// A series born mid-run counts from zero.
	if _, n := find(t, ms, "n_errors"); n.Counter.Total != 9 {
		t.Errorf("born counter total %v, want 9", n.Counter.Total)
	}

	// Histogram: final [3,8,10] minus reference [1,2,2] = [2,6,8].
	_, h := find(t, ms, "h_seconds")
	hs := h.Hist
	if hs.Count != 8 || !near(hs.Sum, 8.4) || hs.Buckets[0] != 2 || hs.Buckets[1] != 6 || hs.Buckets[2] != 8 {
		t.Errorf("histogram %+v", hs)
	}
	// p50: rank 4 in (0.1, 1]: 0.1 + 0.9*(4-2)/4 = 0.55; p99 lands in +Inf: 1.
	if !near(hs.Estimates[4], 0.55) || hs.Estimates[8] != 1 {
		t.Errorf("estimates %v", hs.Estimates)
	}
	// First slice: t=3 [2,4,4] minus t=1 [1,2,2]: count 2, sum 1.0.
	if len(h.Slices) != 2 || h.Slices[0].Count != 2 || !near(h.Slices[0].Sum, 1.0) || !near(h.Slices[0].Avg, 0.5) {
		t.Errorf("histogram slices %+v", h.Slices)
	}
}

func TestPartialSliceAndFallback(t *testing.T) {
	st := buildStore()
	// 3 s slices over a 4 s window: one complete, one partial of 1 s.
	ms := st.Aggregate(Window{StartNs: 1500 * 1e6, EndNs: 5500 * 1e6, SliceNs: 3 * sec}, stats.BucketLinear{})
	_, c := find(t, ms, "c_tokens")
	if len(c.Slices) != 2 || !c.Slices[0].Complete || c.Slices[1].Complete || c.Slices[1].EndNs != 5500*1e6 {
		t.Fatalf("slices %+v", c.Slices)
	}
	// Only the complete slice counts: [1.5, 4.5): 50 - 20 = 30 over 3 s = 10/s.
	if r := c.Counter.SliceRates; r.Avg != 10 || r.Min != 10 || r.Max != 10 || r.Std != 0 {
		t.Fatalf("rate stats %+v, want only the complete slice", r)
	}

	// Slices shorter than the 1 s update interval: one slice per scrape
	// interval, from the reference (t=1) to the last scrape in the window.
	ms = st.Aggregate(Window{StartNs: 1500 * 1e6, EndNs: 5500 * 1e6, SliceNs: sec / 2, UpdateIntervalNs: map[string]int64{ep: sec}}, stats.BucketLinear{})
	_, c = find(t, ms, "c_tokens")
	want := []float64{10, 0, 20, 20} // 20->30, 30->30, 30->50, 50->70
	if len(c.Slices) != len(want) {
		t.Fatalf("interval slices %+v", c.Slices)
	}
	for i, s := range c.Slices {
		if s.Total != want[i] || !s.Complete || s.EndNs-s.StartNs != sec {
			t.Errorf("interval slice %d: %+v, want total %v over 1 s", i, s, want[i])
		}
	}
}

func TestHistogramResetAndEmpty(t *testing.T) {
	st := NewStore()
	inf := math.Inf(1)
	add := func(ts int64, count float64) {
		st.Add(&scrape.Snapshot{Endpoint: ep, FirstByteNs: ts, Families: []scrape.Family{{Name: "h", Type: scrape.Histogram,
			Series: []scrape.Series{{Count: count, Sum: count, Buckets: []scrape.Bucket{{UpperBound: 1, Count: count}, {UpperBound: inf, Count: count}}}}}}})
	}
	add(0, 50)
	add(2*sec, 50)
	ms := st.Aggregate(Window{StartNs: sec, EndNs: 3 * sec}, stats.BucketLinear{})
	if h := ms[0].Series[0].Hist; h.Count != 0 || len(h.Buckets) != 2 || h.Buckets[0] != 0 {
		t.Fatalf("idle histogram %+v", h)
	}
	add(4*sec, 3) // restarted, and 3 observed since
	ms = st.Aggregate(Window{StartNs: sec, EndNs: 5 * sec}, stats.BucketLinear{})
	if se := ms[0].Series[0]; se.Hist.Count != 3 || se.Hist.Sum != 3 || se.Hist.Buckets[0] != 3 || len(se.Resets) != 1 || se.Resets[0] != 4*sec {
		t.Fatalf("reset histogram %+v, resets %v: want the 3 observed since the reset", se.Hist, se.Resets)
	}
	// AIPerf's rule: raw deltas (3 − 50 = −47), buckets that went down,
	// so no estimates; the reset is still reported.
	ms = st.Aggregate(Window{StartNs: sec, EndNs: 5 * sec, ClampResets: true}, stats.BucketLinear{})
	if se := ms[0].Series[0]; se.Hist.Count != -47 || se.Hist.Estimates != [len(stats.Percentiles)]float64{} || len(se.Resets) != 1 {
		t.Fatalf("clamped reset histogram %+v, resets %v", se.Hist, se.Resets)
	}
}

// TestCounterResetsCountedPiecewise: 10, 15, 3 (reset), 8, 2 (reset), 6
// increases by 5 + 3 + 5 + 2 + 4 = 19, as Prometheus' increase() counts
// it; the old clamp said max(0, 6 − 10) = 0. Totals, rates, time slices
// and Parquet points read the same corrected values, so they agree.
func TestCounterResetsCountedPiecewise(t *testing.T) {
	st := NewStore()
	for i, v := range []float64{10, 15, 3, 8, 2, 6} {
		st.Add(&scrape.Snapshot{Endpoint: ep, FirstByteNs: int64(i) * sec, Families: []scrape.Family{
			{Name: "c", Type: scrape.Counter, Series: []scrape.Series{{Value: v}}}}})
	}
	w := Window{StartNs: sec / 2, EndNs: 5 * sec, SliceNs: sec}
	ms := st.Aggregate(w, stats.BucketLinear{})
	se := ms[0].Series[0]
	if se.Counter.Total != 19 || math.Abs(se.Counter.Rate-19/4.5) > 1e-12 {
		t.Fatalf("total %v rate %v, want 19 and 19/4.5", se.Counter.Total, se.Counter.Rate)
	}
	if len(se.Resets) != 2 || se.Resets[0] != 2*sec || se.Resets[1] != 4*sec {
		t.Fatalf("resets %v, want at 2 s and 4 s", se.Resets)
	}
	sliced := 0.0
	for _, sl := range se.Slices {
		if sl.Total < 0 {
			t.Fatalf("negative slice %+v", sl)
		}
		sliced += sl.Total
	}
	if sliced != 19 {
		t.Fatalf("slices add up to %v, want 19: %+v", sliced, se.Slices)
	}
	var last float64
	st.Points(w, func(f Family, s *Series, pts []Point) {
		for i := 1; i < len(pts); i++ {
			if pts[i].Value < pts[i-1].Value {
				t.Fatalf("Parquet cumulative delta decreases: %+v", pts)
			}
		}
		last = pts[len(pts)-1].Value
	})
	if last != 19 {
		t.Fatalf("last Parquet cumulative delta %v, want 19", last)
	}
}

// TestInferUnit covers every rule of AIPerf's unit inference (S11), in
// its order of precedence.
func TestInferUnit(t *testing.T) {
	tests := []struct{ name, help, want string }{
		// 1. Scale words: ratio first.
		{"vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", "ratio"},
		{"x_perc", "Usage (0-1).", "ratio"},
		{"x_perc", "Usage (0.0 – 1.0)", "ratio"},
		{"x", "Usage from 0 to 1 of the pool", "ratio"},
		{"x", "fraction in range 0-1", "ratio"},
		{"x", "Utilisation; 1 = 100%", "ratio"},
		{"x", "Utilisation (1 is 100 percent)", "ratio"},
		{"x", "1.0 == 100 %", "ratio"},
		{"x", "Level 10-15, in seconds", "seconds"}, // "10-1" is not "0-1"
		// then percent.
		{"x_ratio", "Utilization (0-100)", "percent"},
		{"x", "Utilization (0.0 to 100.0)", "percent"},
		{"x", "GPU utilization in range 0-100", "percent"},
		{"x", "Between 0 and 0 - 100 %", "percent"},
		// 2a. DCGM's (in X), case-sensitive.
		{"DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", "megabytes"},
		{"DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).", "celsius"},
		{"DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", "watt"},
		{"DCGM_FI_DEV_SM_CLOCK", "SM clock frequency (in MHz).", "megahertz"},
		{"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "Total energy consumption since boot (in mJ).", "millijoule"},
		{"x", "Latency (in us).", "microseconds"},
		{"x", "Bandwidth (in GB/s)", "gb/s"},
		{"x_seconds", "Something (in widgets).", "seconds"}, // unknown X falls through
		// 2b. The nine description patterns.
		{"vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", "seconds"},
		{"x", "Time (seconds)", "seconds"},
		{"x", "Time to first token in milliseconds", "milliseconds"},
		{"x", "Time (ms)", "milliseconds"},
		{"x", "Time in nanoseconds.", "nanoseconds"},
		{"x", "Size (bytes)", "bytes"},
		{"x", "KV transfer (gb/s)", "gb/s"},
		{"x", "Throughput in MB/s", "mb/s"},
		{"x", "Throughput in tokens/sec", "tokens/s"},
		{"x", "Throughput (token/second)", "tokens/s"},
		{"x", "Rate in requests/s", "requests/s"},
		{"x", "Prompt length in tokens", "tokens"},
		{"nv_inference_request_duration_us", "Cumulative inference request duration in microseconds", ""}, // not an AIPerf pattern
		// 3. Name suffixes, longest first, on the lower-cased name.
		{"sglang:token_usage_perc", "", "percent"},
		{"vllm:generation_tokens", "Number of generation tokens processed.", "tokens"},
		{"x_tokens_total", "", "tokens"},
		{"x_seconds_total", "", "seconds"},
		{"vllm:request_success", "Count of successfully processed requests.", "requests"},
		{"trtllm_request_success", "", "requests"},
		{"dynamo_component_errors_total", "", "errors"},
		{"x_error_count_total", "", "errors"},
		{"x_error_count", "", "errors"},
		{"x_requests_total", "", "requests"},
		{"x_reqs", "", "requests"},
		{"x_block_count", "", "blocks"},
		{"x_blocks_total", "", "blocks"},
		{"x_bytes_total", "", "bytes"},
		{"x_bytes", "", "bytes"},
		{"X_MILLISECONDS", "", "milliseconds"},
		{"x_ms_total", "", "milliseconds"},
		{"x_ms", "", "milliseconds"},
		{"x_ns_total", "", "nanoseconds"},
		{"x_nanoseconds", "", "nanoseconds"},
		{"x_kilobytes", "", "kilobytes"},
		{"x_megabytes", "", "megabytes"},
		{"x_gigabytes", "", "gigabytes"},
		{"gpu_temp_celsius", "", "celsius"},
		{"x_percent", "", "percent"},
		{"x_joules", "", "joule"},
		{"x_watts", "", "watt"},
		{"x_ratio", "", "ratio"},
		{"x_kv_transfer_speed_gb_s", "", "gb/s"},
		{"something_count", "", "count"},
		{"something_total", "", "count"},
		// 4. The num_requests_ wildcard, after the suffixes.
		{"vllm:num_requests_running", "Number of requests in model execution batches.", "requests"},
		{"vllm:num_requests_waiting", "", "requests"},
		{"plain", "", ""},
	}
	for _, tc := range tests {
		if got := InferUnit(tc.name, tc.help); got != tc.want {
			t.Errorf("InferUnit(%q, %q) = %q, want %q", tc.name, tc.help, got, tc.want)
		}
	}
	for i := 1; i < len(unitSuffixes); i++ {
		if len(unitSuffixes[i].suffix) > len(unitSuffixes[i-1].suffix) {
			t.Errorf("suffix %q is tried after the shorter %q", unitSuffixes[i].suffix, unitSuffixes[i-1].suffix)
		}
	}
}

// TestCounterResetFromServer scrapes a simulated server that restarts its
// counters after the second scrape: the total is clamped to 0 rather than
// going negative, and the histogram reports the reset.
func TestCounterResetFromServer(t *testing.T) {
	cfg := mockserver.DefaultConfig()
	cfg.TTFT, cfg.ITL, cfg.MetricsResetAfter = 0, 0, 2
	srv, err := mockserver.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	url, stop, err := srv.Start(context.Background(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	st := NewStore()
	clock := record.NewClock()
	c := scrape.NewCollector(scrape.Options{URLs: []string{url + "/metrics"}, Interval: time.Hour, ReachabilityTimeout: 5 * time.Second, Clock: clock, Sink: st.Add})
	c.Start(context.Background()) // scrape 1: baseline
	body := []byte(`{"model":"m","prompt":"a b c","max_tokens":5}`)
	for range 3 {
		resp, err := http.Post(url+"/v1/completions", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	c.Checkpoint(context.Background(), time.Minute) // scrape 2, the reference: 15 tokens
	start := clock.Wall(clock.Now())
	c.Checkpoint(context.Background(), time.Minute) // scrape 3: restarted, 0 tokens
	for range 4 {
		resp, err := http.Post(url+"/v1/completions", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	c.Finish(context.Background(), context.Background()) // scrape 4: 20 tokens since the restart
	ms := st.Aggregate(Window{StartNs: start, EndNs: clock.Wall(clock.Now())}, stats.BucketLinear{})
	_, gen := find(t, ms, "vllm:generation_tokens")
	// 15 → 0 (restart) → 20: an increase of 0 + 20; the old clamp said 20 − 15 = 5.
	if gen.Counter.Total != 20 || len(gen.Resets) != 1 {
		t.Fatalf("generation tokens total %v with resets %v, want 20 and one reset", gen.Counter.Total, gen.Resets)
	}
	var values []float64
	st.Each(func(f Family, s *Series) {
		if s.Name == "vllm:generation_tokens" {
			values = s.V
		}
	})
	if len(values) != 4 || values[1] != 15 || values[2] != 0 || values[3] != 20 {
		t.Fatalf("scraped values %v, want [0 15 0 20]", values)
	}
	_, e2e := find(t, ms, "vllm:e2e_request_latency_seconds")
	if e2e.Hist.Count != 4 || len(e2e.Resets) != 1 {
		t.Fatalf("histogram %+v with resets %v, want the 4 requests since the restart", e2e.Hist, e2e.Resets)
	}

	// AIPerf's rule (--counter-resets clamp): max(20 − 15, 0) = 5; the
	// histogram's count and sum are raw deltas, 4 − 3 = 1 (the sum's sign
	// depends on the latencies; AIPerf only warns of a negative one); its
	// buckets all rose (every latency is under 0.3 s), so estimates are
	// made, as AIPerf makes them. The reset is still reported.
	ms = st.Aggregate(Window{StartNs: start, EndNs: clock.Wall(clock.Now()), ClampResets: true}, stats.BucketLinear{})
	if _, gen := find(t, ms, "vllm:generation_tokens"); gen.Counter.Total != 5 || len(gen.Resets) != 1 {
		t.Fatalf("clamped total %v with resets %v, want 5 and one reset", gen.Counter.Total, gen.Resets)
	}
	_, e2e = find(t, ms, "vllm:e2e_request_latency_seconds")
	if e2e.Hist.Count != 1 || e2e.Hist.Estimates[4] <= 0 || len(e2e.Resets) != 1 {
		t.Fatalf("clamped histogram %+v, want count 1 and estimates", e2e.Hist)
	}
}

// TestDuplicateScrapesAreGaugeSamples: an unchanged scrape still counts as
// a gauge sample, as AIPerf stores it: 1, 1 (the same body), 4 → avg 2.
func TestDuplicateScrapesAreGaugeSamples(t *testing.T) {
	st := NewStore()
	for i, v := range []float64{1, 1, 4} {
		st.Add(&scrape.Snapshot{Endpoint: "http://a/metrics", FirstByteNs: int64(i) * sec, Families: []scrape.Family{
			{Name: "g", Type: scrape.Gauge, Series: []scrape.Series{{Value: v}}}}})
	}
	ms := st.Aggregate(Window{StartNs: 0, EndNs: 2 * sec}, stats.BucketLinear{})
	if g := ms[0].Series[0].Gauge; g.Avg != 2 || g.Min != 1 || g.Max != 4 {
		t.Fatalf("gauge %+v, want avg 2 over three samples", g)
	}
}

// TestEndpointThatStopsAnswering: an endpoint answers four scrapes, then
// hangs. It is warned about once, after three intervals without an
// answer (while its scrape still hangs); it is
// reported as partial; its counter's rate covers only the time it
// answered; and its final scrape holds the end of the run for one
// interval, not the 5 s reachability timeout.
func TestEndpointThatStopsAnswering(t *testing.T) {
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := served.Add(1)
		if n > 4 {
			<-r.Context().Done()
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprintf(w, "# TYPE c_total counter\nc_total %d\n", 10*n)
	}))
	defer srv.Close()
	var logBuf strings.Builder
	var logMu sync.Mutex
	st := NewStore()
	clock := record.NewClock()
	const interval = 50 * time.Millisecond
	c := scrape.NewCollector(scrape.Options{URLs: []string{srv.URL + "/metrics"}, Interval: interval, Flush: 100 * time.Millisecond,
		ReachabilityTimeout: 5 * time.Second, Clock: clock, Sink: st.Add,
		Log: writerFunc(func(p []byte) (int, error) { logMu.Lock(); defer logMu.Unlock(); return logBuf.Write(p) })})
	c.Start(context.Background()) // scrape 1: the reference, 10
	start := clock.Wall(clock.Now())
	time.Sleep(600 * time.Millisecond) // scrapes 2-4 answer (20, 30, 40), then the rest hang
	end := clock.Wall(clock.Now())
	began := time.Now()
	c.Finish(context.Background(), context.Background())
	if took := time.Since(began); took > 1500*time.Millisecond {
		t.Fatalf("Finish took %v: the hung endpoint held the run (flush 100 ms + one 50 ms interval expected)", took)
	}
	logMu.Lock()
	log := logBuf.String()
	logMu.Unlock()
	if n := strings.Count(log, "has not answered for 3 intervals"); n != 1 || strings.Count(log, "WARNING") != 1 {
		t.Fatalf("want exactly one warning, after three intervals without an answer:\n%s", log)
	}
	in := c.Infos()[0]
	if in.Status != "partial" || in.TotalFetches != 4 {
		t.Fatalf("info %+v, want partial with 4 fetches", in)
	}
	ms := st.Aggregate(Window{StartNs: start, EndNs: end}, stats.BucketLinear{})
	se := ms[0].Series[0]
	var lastT int64
	st.Each(func(f Family, s *Series) { lastT = s.T[len(s.T)-1] })
	answered := float64(lastT-start) / 1e9
	if se.Counter.Total != 30 || math.Abs(se.Counter.Rate-30/answered) > 1e-9 || math.Abs(se.ObservedSeconds-answered) > 1e-12 {
		t.Fatalf("total %v rate %v observed %v, want 30 over the %v s it answered", se.Counter.Total, se.Counter.Rate, se.ObservedSeconds, answered)
	}
}

// panickyEstimator panics on a series with 8 observations and answers the
// linear estimates otherwise.
type panickyEstimator struct{}

func (panickyEstimator) Quantiles(h stats.HistogramSeries, qs []float64) []float64 {
	if count, _, _ := h.Totals(); count == 8 {
		panic("index out of range [3] with length 3")
	}
	return stats.BucketLinear{}.Quantiles(h, qs)
}

// TestEstimatorPanicLeavesTheRun: an estimator that panics on one series
// leaves that series' percentiles NaN, says why, and keeps its count, sum
// and buckets; another series with other data is estimated as ever.
func TestEstimatorPanicLeavesTheRun(t *testing.T) {
	w := Window{StartNs: 1500 * 1e6, EndNs: 5500 * 1e6}
	ms := buildStore().Aggregate(w, panickyEstimator{})
	_, h := find(t, ms, "h_seconds")
	if hs := h.Hist; hs.Count != 8 || !near(hs.Sum, 8.4) || hs.Buckets[2] != 8 {
		t.Errorf("histogram %+v: its count, sum and buckets should stand", hs)
	}
	for i, e := range h.Hist.Estimates {
		if !math.IsNaN(e) {
			t.Errorf("estimate %d = %v after a panic, want NaN", i, e)
		}
	}
	want := "the servermetrics.panickyEstimator estimator panicked: index out of range [3] with length 3"
	if h.Hist.EstimateFailure != want {
		t.Errorf("failure %q, want %q", h.Hist.EstimateFailure, want)
	}
	// The whole run (reference t=0, 10 observations) does not panic.
	ms = buildStore().Aggregate(Window{StartNs: 0, EndNs: 7 * sec}, panickyEstimator{})
	if _, h := find(t, ms, "h_seconds"); h.Hist.EstimateFailure != "" || math.IsNaN(h.Hist.Estimates[4]) {
		t.Errorf("a series the estimator answers: %+v", h.Hist)
	}
}

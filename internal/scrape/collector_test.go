package scrape

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmbench/llmbench/internal/mockserver"
	"github.com/llmbench/llmbench/internal/record"
)

func mock(t *testing.T, mutate func(*mockserver.Config)) (*mockserver.Server, string) {
	t.Helper()
	cfg := mockserver.DefaultConfig()
	if mutate != nil {
		mutate(&cfg)
	}
	s, err := mockserver.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	url, stop, err := s.Start(context.Background(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return s, url
}

type sink struct {
	mu    sync.Mutex
	snaps []*Snapshot
}

func (s *sink) add(x *Snapshot) {
	s.mu.Lock()
	s.snaps = append(s.snaps, x)
	s.mu.Unlock()
}

func (s *sink) from(endpoint string) []*Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*Snapshot
	for _, x := range s.snaps {
		if x.Endpoint == endpoint {
			out = append(out, x)
		}
	}
	return out
}

// run collects for d with the given interval and returns what it saw.
func run(t *testing.T, urls []string, interval, d time.Duration) (*Collector, *sink, string) {
	t.Helper()
	return runUntil(t, urls, interval, d, nil, 0)
}

// runUntil is run that, with until set, goes on past d (up to a deadline
// of 10 s) until the log satisfies it, then for after more: what comes
// a set number of intervals after an event waits for the event however
// late a loaded machine makes it.
func runUntil(t *testing.T, urls []string, interval, d time.Duration, until func(log string) bool, after time.Duration) (*Collector, *sink, string) {
	t.Helper()
	var log bytes.Buffer
	var logMu sync.Mutex
	logged := func() string { logMu.Lock(); defer logMu.Unlock(); return log.String() }
	sk := &sink{}
	c := NewCollector(Options{URLs: urls, Interval: interval, ReachabilityTimeout: 2 * time.Second, Clock: record.NewClock(),
		Log: writerFunc(func(p []byte) (int, error) { logMu.Lock(); defer logMu.Unlock(); return log.Write(p) }), Sink: sk.add})
	c.Start(context.Background())
	time.Sleep(d)
	if until != nil {
		for deadline := time.Now().Add(10 * time.Second); !until(logged()) && time.Now().Before(deadline); {
			time.Sleep(interval / 2)
		}
		time.Sleep(after)
	}
	c.Finish(context.Background(), context.Background())
	return c, sk, logged()
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func info(t *testing.T, c *Collector, url string) Info {
	t.Helper()
	for _, in := range c.Infos() {
		if in.URL == url {
			return in
		}
	}
	t.Fatalf("no info for %s", url)
	return Info{}
}

func TestTRTLLMFallback(t *testing.T) {
	_, url := mock(t, func(c *mockserver.Config) { c.MetricsProfile = "trtllm" })
	c, sk, log := run(t, []string{url + "/metrics"}, 50*time.Millisecond, 200*time.Millisecond)
	alt := url + "/prometheus/metrics"
	snaps := sk.from(alt)
	if len(snaps) < 3 || len(sk.snaps) != len(snaps) {
		t.Fatalf("%d snapshots from %s, %d in all; log %q", len(snaps), alt, len(sk.snaps), log)
	}
	if !strings.Contains(log, "using "+alt) || strings.Contains(log, "WARNING") {
		t.Fatalf("log %q", log)
	}
	found := false
	for _, f := range snaps[0].Families {
		found = found || f.Name == "trtllm_time_to_first_token_seconds"
	}
	if !found {
		t.Fatal("no trtllm_time_to_first_token_seconds in the fallback's metrics")
	}
	if in := info(t, c, alt); in.Disabled || in.TotalFetches != len(snaps) {
		t.Fatalf("info %+v", in)
	}
}

func TestNonPrometheusDisabledOnceOthersUnaffected(t *testing.T) {
	var jsonHits, altHits int
	var mu sync.Mutex
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if r.URL.Path == "/prometheus/metrics" {
			altHits++
			http.NotFound(w, r)
			return
		}
		jsonHits++
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`[{"iter": 1}]`))
	}))
	defer bad.Close()
	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("<html>not metrics</html>"))
	}))
	defer garbage.Close()
	_, good := mock(t, nil)
	c, sk, log := run(t, []string{bad.URL + "/metrics", garbage.URL + "/stats", good + "/metrics"}, 40*time.Millisecond, 250*time.Millisecond)

	if n := strings.Count(log, "WARNING"); n != 2 {
		t.Fatalf("%d warnings, want one per bad endpoint:\n%s", n, log)
	}
	for _, want := range []string{"Disabling server metrics collection for " + bad.URL + "/metrics", "content-type 'application/json'", "--no-server-metrics", garbage.URL + "/stats"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	mu.Lock()
	if jsonHits != 1 || altHits != 1 {
		t.Errorf("bad endpoint hit %d times and its fallback %d times, want 1 and 1", jsonHits, altHits)
	}
	mu.Unlock()
	if len(sk.from(good+"/metrics")) < 5 {
		t.Errorf("good endpoint delivered %d snapshots", len(sk.from(good+"/metrics")))
	}
	if in := info(t, c, bad.URL+"/metrics"); !in.Disabled || in.TotalFetches != 0 {
		t.Errorf("bad endpoint info %+v", in)
	}
}

func TestSlowEndpointDoesNotDelayOthers(t *testing.T) {
	_, slow := mock(t, func(c *mockserver.Config) { c.MetricsDelay = 300 * time.Millisecond })
	_, fast := mock(t, nil)
	start := time.Now()
	c, sk, _ := run(t, []string{slow + "/metrics", fast + "/metrics"}, 50*time.Millisecond, 600*time.Millisecond)
	_ = c
	// The baseline waits for the slow one (300 ms), then 600 ms of 50 ms
	// ticks: about 12 for the fast endpoint, 2 or 3 for the slow one.
	if n := len(sk.from(fast + "/metrics")); n < 9 {
		t.Errorf("fast endpoint got %d scrapes in %v, want at least 9", n, time.Since(start))
	}
	if n := len(sk.from(slow + "/metrics")); n > 5 {
		t.Errorf("slow endpoint got %d scrapes, want at most 5", n)
	}
}

func TestEndpointDyingMidRun(t *testing.T) {
	srv, url := mock(t, func(c *mockserver.Config) { c.MetricsDieAfter = 3 })
	// The warning comes 3 intervals after the last answer, which a loaded
	// machine can delay past a fixed 300 ms (it did once under -race in
	// CI): wait for it and for the 3 failed scrapes the checks below
	// count (a loaded loop skips ticks), then 5 intervals more, where no
	// second warning may come.
	const iv = 30 * time.Millisecond
	c, sk, log := runUntil(t, []string{url + "/metrics"}, iv, 300*time.Millisecond,
		func(log string) bool { return strings.Contains(log, "WARNING") && srv.Scrapes() >= 6 }, 5*iv)
	in := info(t, c, url+"/metrics")
	if len(sk.snaps) != 3 || in.TotalFetches != 3 || in.Failures < 3 || srv.Scrapes() < 6 {
		t.Fatalf("%d snapshots, info %+v, server saw %d scrapes", len(sk.snaps), in, srv.Scrapes())
	}
	if n := strings.Count(log, "WARNING"); n != 1 {
		t.Fatalf("%d warnings for a dying endpoint, want 1:\n%s", n, log)
	}
}

func TestScheduleDoesNotDrift(t *testing.T) {
	_, url := mock(t, func(c *mockserver.Config) { c.MetricsDelay = 7 * time.Millisecond })
	const iv = 40 * time.Millisecond
	_, sk, _ := run(t, []string{url + "/metrics"}, iv, 1200*time.Millisecond)
	snaps := sk.snaps[1 : len(sk.snaps)-1] // periodic ones: not the baseline, not the final
	// A loaded machine makes the loop skip the ticks it was late for (by
	// design), so fewer than the 30 possible scrapes happen; 12 are enough.
	if len(snaps) < 12 {
		t.Fatalf("only %d periodic scrapes", len(snaps))
	}
	// Each scrape is sent at start + k·interval. A drifting loop (next =
	// last completion + interval) makes every gap between sends at least
	// interval + the 7 ms fetch, whatever the scheduler adds; on the fixed
	// grid, gaps are multiples of the interval plus the difference of two
	// lateness values, so on a busy machine too some gap lands within a
	// few ms of a multiple.
	best := time.Hour
	for i := 1; i < len(snaps); i++ {
		gap := time.Duration(snaps[i].RequestSentNs - snaps[i-1].RequestSentNs)
		k := (gap + iv/2) / iv
		best = min(best, (gap - k*iv).Abs())
	}
	if best > 4*time.Millisecond {
		t.Fatalf("every gap between scrapes is at least %v off a multiple of the interval: the schedule drifts", best)
	}
}

func TestUniqueUpdates(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.prom")
	b := filepath.Join(dir, "b.prom")
	os.WriteFile(a, []byte("# TYPE x counter\nx_total 1\n"), 0o644)
	os.WriteFile(b, []byte("# TYPE x counter\nx_total 2\n"), 0o644)
	// Replay a, a, b, then b forever: 2 distinct contents.
	_, url := mock(t, func(c *mockserver.Config) { c.MetricsReplay = []string{a, a, b} })
	c, sk, _ := run(t, []string{url + "/metrics"}, 30*time.Millisecond, 200*time.Millisecond)
	in := info(t, c, url+"/metrics")
	if in.UniqueUpdates != 2 || in.TotalFetches != len(sk.snaps) || in.TotalFetches < 5 {
		t.Fatalf("info %+v with %d snapshots, want 2 unique updates", in, len(sk.snaps))
	}
	if !sk.snaps[0].Changed || sk.snaps[1].Changed || !sk.snaps[2].Changed || sk.snaps[3].Changed {
		t.Fatal("Changed flags do not follow the content")
	}
	if in.MedianUpdateMs != nil {
		t.Fatal("median update interval needs 2 intervals, there is 1")
	}
}

func TestFallbackURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://h:8000/metrics":            "http://h:8000/prometheus/metrics",
		"http://h:8000/v1/metrics":         "http://h:8000/v1/prometheus/metrics",
		"http://h:8000/prometheus/metrics": "",
		"http://h:8000/stats":              "",
	} {
		got, ok := fallbackURL(in)
		if got != want || ok != (want != "") {
			t.Errorf("fallbackURL(%s) = %q %v, want %q", in, got, ok, want)
		}
	}
}

// TestNonFiniteDroppedAndWarnedOnce: NaN and ±Inf samples are dropped (a
// histogram label set with any, for that scrape), with one warning per
// metric naming it and the endpoint, however many scrapes carry them.
func TestNonFiniteDroppedAndWarnedOnce(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		w.Write([]byte(`# TYPE g gauge
g{k="nan"} NaN
g{k="ok"} 2
# TYPE c_total counter
c_total +Inf
# TYPE h histogram
h_bucket{k="bad",le="1"} 1
h_bucket{k="bad",le="+Inf"} 2
h_sum{k="bad"} NaN
h_count{k="bad"} 2
h_bucket{k="good",le="1"} 3
h_bucket{k="good",le="+Inf"} 4
h_sum{k="good"} 2.5
h_count{k="good"} 4
`))
	}))
	defer srv.Close()
	_, sk, log := run(t, []string{srv.URL + "/metrics"}, 30*time.Millisecond, 200*time.Millisecond)
	snaps := sk.from(srv.URL + "/metrics")
	if len(snaps) < 3 {
		t.Fatalf("%d snapshots", len(snaps))
	}
	for _, f := range snaps[len(snaps)-1].Families {
		var keys []string
		for _, s := range f.Series {
			keys = append(keys, LabelKey(s.Labels))
		}
		want := map[string]string{"g": `k="ok"`, "c": "", "h": `k="good"`}[f.Name]
		if strings.Join(keys, " ") != want || f.NonFinite != 1 {
			t.Errorf("%s: series %v (dropped %d), want %q and one dropped", f.Name, keys, f.NonFinite, want)
		}
	}
	for _, name := range []string{"g", "c", "h"} {
		if n := strings.Count(log, "Server metric "+name+" from "+srv.URL+"/metrics has NaN or infinite values"); n != 1 {
			t.Errorf("%d warnings for %s, want 1:\n%s", n, name, log)
		}
	}
}

// TestOptionalEndpoints: a URL probed in case something answers there
// (a default DCGM port) costs at most a second when it holds the
// connection without answering, is dropped without a word when it serves
// something unwanted, and is collected when it serves what is wanted.
func TestOptionalEndpoints(t *testing.T) {
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer hang.Close()
	_, other := mock(t, nil) // vLLM metrics: not what is wanted
	gpus, _ := mock(t, func(c *mockserver.Config) { c.GPUs = 1 })
	dcgmURL, stopDCGM, err := gpus.StartGPUs(context.Background(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer stopDCGM()
	urls := []string{hang.URL + "/metrics", other + "/metrics", dcgmURL}
	var log bytes.Buffer
	var got sink
	c := NewCollector(Options{
		URLs: urls, Interval: 50 * time.Millisecond, Clock: record.NewClock(), Log: &log, Sink: got.add,
		Subject: "GPU telemetry", Suppress: "--no-gpu-telemetry", NoFallback: true,
		Optional: map[string]bool{urls[0]: true, urls[1]: true, urls[2]: true},
		Wanted: func(s *Snapshot) bool {
			for _, f := range s.Families {
				if strings.HasPrefix(f.Name, "DCGM_FI_") {
					return true
				}
			}
			return false
		},
	})
	start := time.Now()
	c.Start(context.Background())
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Start took %v: the silent port held it", d)
	}
	c.Checkpoint(context.Background(), time.Second)
	c.Finish(context.Background(), context.Background())
	if live := c.Live(); len(live) != 1 || live[0] != dcgmURL {
		t.Fatalf("live %v, want only %s", live, dcgmURL)
	}
	if len(got.from(urls[1])) != 0 || len(got.from(dcgmURL)) < 3 {
		t.Fatalf("snapshots: unwanted %d, DCGM %d", len(got.from(urls[1])), len(got.from(dcgmURL)))
	}
	// Nothing said of the optional endpoints that were dropped (a loaded
	// machine may delay the live one's scrapes; that is another warning).
	for _, u := range urls[:2] {
		if strings.Contains(log.String(), u) {
			t.Fatalf("warned about optional endpoint %s: %s", u, log.String())
		}
	}
	// After Finish, a checkpoint delivers nothing.
	n := len(got.from(dcgmURL))
	c.Checkpoint(context.Background(), time.Second)
	if len(got.from(dcgmURL)) != n {
		t.Fatal("a snapshot after Finish")
	}
}

// TestHungFirstScrapeDelaysNoOther: while one endpoint's first scrape
// hangs for the reachability timeout, a healthy one is scraped on its own
// schedule, and is neither warned about as stalled nor reported partial.
func TestHungFirstScrapeDelaysNoOther(t *testing.T) {
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer hang.Close()
	_, healthy := mock(t, nil)
	var log bytes.Buffer
	var got sink
	c := NewCollector(Options{
		// 200 ms intervals: a stall warning needs 600 ms without an answer,
		// which the other's 2 s probe made certain before and a loaded
		// machine's hiccup does not.
		URLs: []string{healthy + "/metrics", hang.URL + "/metrics"}, Interval: 200 * time.Millisecond, ReachabilityTimeout: 2 * time.Second,
		Clock: record.NewClock(), Log: &log, Sink: got.add,
	})
	c.Start(context.Background())
	// The healthy endpoint went on while Start waited for the other.
	if n := len(got.from(healthy + "/metrics")); n < 5 {
		t.Fatalf("%d scrapes of the healthy endpoint during the other's 2 s probe", n)
	}
	time.Sleep(400 * time.Millisecond)
	c.Finish(context.Background(), context.Background())
	infos := c.Infos()
	if infos[0].Status != "ok" || infos[1].Status != "failed" {
		t.Fatalf("status %s and %s, want ok and failed", infos[0].Status, infos[1].Status)
	}
	if strings.Contains(log.String(), "has not answered") || !strings.Contains(log.String(), hang.URL) {
		t.Fatalf("log: %s", log.String())
	}
}

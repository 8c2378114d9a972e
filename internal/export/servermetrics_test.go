package export

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmbench/llmbench/internal/scrape"
	"github.com/llmbench/llmbench/internal/servermetrics"
	"github.com/llmbench/llmbench/internal/stats"
)

// goldenServerMetrics scrapes two endpoints at t = 0..4 s; the window is
// [0.5 s, 3.5 s] with 2 s slices (one complete, one partial).
func goldenServerMetrics() ServerMetrics {
	st := servermetrics.NewStore()
	inf := math.Inf(1)
	model := []scrape.Label{{Name: "model_name", Value: "m"}}
	for _, ep := range []string{"http://a:8000/metrics", "http://b:8001/metrics"} {
		for i := range 5 {
			v := float64(i)
			st.Add(&scrape.Snapshot{Endpoint: ep, FirstByteNs: int64(i) * sec, Families: []scrape.Family{
				{Name: "vllm:num_requests_running", Type: scrape.Gauge, Help: "Number of requests in model execution batches.", Series: []scrape.Series{{Labels: model, Value: v * 2}}},
				{Name: "vllm:kv_cache_usage_perc", Type: scrape.Gauge, Help: "KV-cache usage. 1 means 100 percent usage.", Series: []scrape.Series{{Labels: model, Value: 0.25}}},
				{Name: "vllm:generation_tokens", Type: scrape.Counter, Help: "Number of generation tokens processed.", Series: []scrape.Series{{Labels: model, Value: 100 * v * v}}},
				{Name: "vllm:num_preemptions", Type: scrape.Counter, Help: "Cumulative number of preemption from the engine.", Series: []scrape.Series{{Labels: model, Value: 3}}},
				{Name: "vllm:e2e_request_latency_seconds", Type: scrape.Histogram, Help: "Histogram of e2e request latency in seconds.", Series: []scrape.Series{{Labels: model,
					Sum: 0.4 * v, Count: v, Buckets: []scrape.Bucket{{UpperBound: 0.3, Count: 0}, {UpperBound: 0.5, Count: v}, {UpperBound: inf, Count: v}}}}},
				{Name: "vllm:request_queue_time_seconds", Type: scrape.Histogram, Help: "Histogram of time spent in WAITING phase for request.", Series: []scrape.Series{{Labels: model,
					Buckets: []scrape.Bucket{{UpperBound: 0.3, Count: 0}, {UpperBound: inf, Count: 0}}}}},
				{Name: "vllm:cache_config_info", Type: scrape.Gauge, Help: "Information of the LLMEngine CacheConfig", Series: []scrape.Series{{Labels: []scrape.Label{{Name: "block_size", Value: "16"}}, Value: 1}}},
				{Name: "process_open_fds", Type: scrape.Unknown, Series: []scrape.Series{{Value: 12}}},
			}})
		}
	}
	w := servermetrics.Window{StartNs: sec / 2, EndNs: 3*sec + sec/2, SliceNs: 2 * sec}
	med := 1000.0
	return ServerMetrics{
		SchemaVersion: "1.0", Version: "0.1.0", BenchmarkID: "00000000-0000-4000-8000-000000000000",
		Configured: []string{"http://a:8000/metrics", "http://b:8001/metrics", "http://dead:9/metrics"},
		Successful: []string{"http://a:8000/metrics", "http://b:8001/metrics"},
		Start:      time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC), End: time.Date(2026, 11, 21, 12, 0, 4, 0, time.UTC),
		Infos: []scrape.Info{{URL: "http://a:8000/metrics", TotalFetches: 5, FirstFetchNs: 0, LastFetchNs: 4 * sec, AvgFetchLatency: 1.5,
			UniqueUpdates: 5, LastUpdateNs: 4 * sec, DurationSeconds: 4, AvgUpdateMs: 1000, MedianUpdateMs: &med},
			{URL: "http://dead:9/metrics", Disabled: true}},
		Metrics: st.Aggregate(w, stats.BucketLinear{}), Window: w,
		InputConfig: map[string]any{"endpoint": map[string]any{"model_names": []string{"m"}}},
	}
}

func TestServerMetricsJSONGolden(t *testing.T) {
	got, err := ServerMetricsJSON(goldenServerMetrics())
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "server_metrics_export.json", got)

	var doc struct {
		Summary struct {
			EndpointInfo map[string]map[string]any `json:"endpoint_info"`
		} `json:"summary"`
		Metrics map[string]struct {
			Type   string `json:"type"`
			Unit   string `json:"unit"`
			Series []struct {
				EndpointURL string                       `json:"endpoint_url"`
				Labels      map[string]string            `json:"labels"`
				Stats       map[string]float64           `json:"stats"`
				Buckets     map[string]float64           `json:"buckets"`
				Timeslices  []map[string]json.RawMessage `json:"timeslices"`
			} `json:"series"`
		} `json:"metrics"`
	}
	if err := json.Unmarshal(got, &doc); err != nil {
		t.Fatal(err)
	}
	if _, ok := doc.Summary.EndpointInfo["http://dead:9/metrics"]; ok || len(doc.Summary.EndpointInfo) != 1 {
		t.Fatalf("endpoint_info %v: only endpoints that answered", doc.Summary.EndpointInfo)
	}
	m := doc.Metrics["vllm:generation_tokens"]
	// Two endpoints, one series each; reference t=0 (0), final t=4 (1600).
	if len(m.Series) != 2 || m.Series[0].EndpointURL != "http://a:8000/metrics" || m.Series[0].Stats["total"] != 1600 || m.Series[0].Stats["rate"] != 1600.0/3 {
		t.Fatalf("counter %+v", m)
	}
	// Slices: [0.5, 2.5): 400-0 = 400 at 200/s complete; [2.5, 3.5]: 900-400 = 500, partial.
	ts := m.Series[0].Timeslices
	if len(ts) != 2 || string(ts[0]["total"]) != "400" || string(ts[1]["is_complete"]) != "false" || ts[0]["is_complete"] != nil {
		t.Fatalf("timeslices %v", ts)
	}
	if s := m.Series[0].Stats; s["rate_avg"] != 200 || s["rate_std"] != 0 {
		t.Fatalf("rate stats use the complete slice only: %v", s)
	}
	if m := doc.Metrics["vllm:num_preemptions"].Series[0].Stats; m["total"] != 0 || m["rate"] != 0 {
		t.Fatalf("idle counter %v", m)
	}
	empty := doc.Metrics["vllm:request_queue_time_seconds"].Series[0]
	if len(empty.Stats) != 1 || empty.Stats["count"] != 0 || len(empty.Buckets) != 2 || empty.Timeslices != nil {
		t.Fatalf("empty histogram %+v: stats count 0 only, zero buckets, no slices", empty)
	}
	kv := doc.Metrics["vllm:kv_cache_usage_perc"]
	if kv.Unit != "ratio" || kv.Series[0].Stats["p99"] != 0.25 || kv.Series[0].Stats["std"] != 0 {
		t.Fatalf("constant gauge %+v", kv)
	}
	if doc.Metrics["process_open_fds"].Type != "unknown" {
		t.Fatal("untyped family not exported as unknown")
	}
}

func TestServerMetricsCSVGolden(t *testing.T) {
	got, err := ServerMetricsCSV(goldenServerMetrics())
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "server_metrics_export.csv", got)
}

// TestServerMetricsCSVEmptySectionsLeftOut: with only a gauge, the file
// is the gauge section alone, in AIPerf's columns, as AIPerf leaves empty
// sections out.
func TestServerMetricsCSVEmptySectionsLeftOut(t *testing.T) {
	st := servermetrics.NewStore()
	for i := range 3 {
		st.Add(&scrape.Snapshot{Endpoint: "http://a:8000/metrics", FirstByteNs: int64(i) * sec, Families: []scrape.Family{
			{Name: "g", Help: "A gauge, with a comma.", Type: scrape.Gauge, Series: []scrape.Series{{Value: float64(i)}}}}})
	}
	w := servermetrics.Window{StartNs: 0, EndNs: 2 * sec}
	got, err := ServerMetricsCSV(ServerMetrics{Metrics: st.Aggregate(w, stats.BucketLinear{}), Window: w})
	if err != nil {
		t.Fatal(err)
	}
	want := "Endpoint,Type,Metric,Unit,avg,min,max,std,p1,p5,p10,p25,p50,p75,p90,p95,p99,Description\n" +
		"a:8000,gauge,g,,1.0000,0.0000,2.0000,1.0000,0.0200,0.1000,0.2000,0.5000,1.0000,1.5000,1.8000,1.9000,1.9800,\"A gauge, with a comma.\"\n"
	if string(got) != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

// TestScrapeJSONLEndpointLatency: endpoint_latency_ns is first byte minus
// request sent, as the spec's example shows, not the whole fetch.
func TestScrapeJSONLEndpointLatency(t *testing.T) {
	dir := t.TempDir()
	sw, err := NewScrapeWriter(dir, "s.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if err := sw.Write(&scrape.Snapshot{Endpoint: "http://a/metrics", RequestSentNs: 1000, FirstByteNs: 1750, DoneNs: 9000}); err != nil {
		t.Fatal(err)
	}
	sw.Close()
	b, _ := os.ReadFile(filepath.Join(dir, "s.jsonl"))
	var line struct {
		Latency   int64 `json:"endpoint_latency_ns"`
		Timestamp int64 `json:"timestamp_ns"`
	}
	if err := json.Unmarshal(b, &line); err != nil || line.Latency != 750 || line.Timestamp != 1750 {
		t.Fatalf("line %s (%v): want latency 750 at 1750", b, err)
	}
}

// TestServerMetricsCSVLabelCollisions: labels named like columns get a
// label_ prefix, so no header repeats; series stay distinct.
func TestServerMetricsCSVLabelCollisions(t *testing.T) {
	st := servermetrics.NewStore()
	for i := range 2 {
		st.Add(&scrape.Snapshot{Endpoint: "http://a/metrics", FirstByteNs: int64(i) * sec, Families: []scrape.Family{
			{Name: "g", Type: scrape.Gauge, Series: []scrape.Series{
				{Labels: []scrape.Label{{Name: "Description", Value: "y"}, {Name: "avg", Value: "x"}, {Name: "label_avg", Value: "z"}}, Value: 1},
				{Labels: []scrape.Label{{Name: "Description", Value: "y"}, {Name: "avg", Value: "x2"}, {Name: "label_avg", Value: "z"}}, Value: 2},
			}}}})
	}
	w := servermetrics.Window{StartNs: 0, EndNs: sec}
	got, err := ServerMetricsCSV(ServerMetrics{Metrics: st.Aggregate(w, stats.BucketLinear{}), Window: w})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(got), "\n")
	wantHead := "Endpoint,Type,Metric,Unit,avg,min,max,std,p1,p5,p10,p25,p50,p75,p90,p95,p99,label_Description,label_avg,label_label_avg,Description"
	if lines[0] != wantHead || !strings.HasPrefix(lines[1], "a,gauge,g,,1.0000,") || !strings.HasSuffix(lines[1], ",y,x,z,") || !strings.HasSuffix(lines[2], ",y,x2,z,") {
		t.Fatalf("csv:\n%s", got)
	}
}

// TestBucketBoundTextInExports: bounds keep the exposition's text from
// parse to JSON keys, JSONL and Parquet bucket_le (Python's
// prometheus_client, behind vLLM, writes le="1.0").
func TestBucketBoundTextInExports(t *testing.T) {
	st := servermetrics.NewStore()
	dir := t.TempDir()
	sw, err := NewScrapeWriter(dir, "s.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		text := fmt.Sprintf("# TYPE h_seconds histogram\nh_seconds_bucket{le=\"0.5\"} %d\nh_seconds_bucket{le=\"1.0\"} %d\nh_seconds_bucket{le=\"+Inf\"} %d\nh_seconds_sum %d\nh_seconds_count %d\n", i, 2*i, 2*i, i, 2*i)
		fams, err := scrape.Parse(strings.NewReader(text))
		if err != nil {
			t.Fatal(err)
		}
		snap := &scrape.Snapshot{Endpoint: "http://a/metrics", FirstByteNs: int64(i) * sec, Families: fams}
		st.Add(snap)
		sw.Write(snap)
	}
	sw.Close()
	w := servermetrics.Window{StartNs: 0, EndNs: 2 * sec}
	sm := ServerMetrics{Metrics: st.Aggregate(w, stats.BucketLinear{}), Window: w, Successful: []string{"http://a/metrics"}}
	j, err := ServerMetricsJSON(sm)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(j), `"buckets": {`) || !strings.Contains(string(j), `"1.0": 4`) || strings.Contains(string(j), `"1":`) {
		t.Fatalf("JSON buckets:\n%s", j)
	}
	jl, _ := os.ReadFile(filepath.Join(dir, "s.jsonl"))
	if !strings.Contains(string(jl), `"1.0":4`) {
		t.Fatalf("JSONL:\n%s", jl)
	}
	pq := filepath.Join(dir, "m.parquet")
	data, err := ServerMetricsParquet(st, sm)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(pq, data, 0o644)
	rows := duckdb(t, "SELECT DISTINCT bucket_le FROM '"+pq+"' ORDER BY bucket_le")
	var les []string
	for _, r := range rows {
		les = append(les, fmt.Sprint(r["bucket_le"]))
	}
	if strings.Join(les, " ") != "+Inf 0.5 1.0" {
		t.Fatalf("Parquet bucket_le %v", les)
	}
}

// TestServerMetricsJSONPartialEndpoints: an endpoint that stopped answering
// is listed in summary.endpoints_partial and marked in its endpoint_info;
// one that never answered in endpoints_failed. AIPerf's fields are kept.
func TestServerMetricsJSONPartialEndpoints(t *testing.T) {
	sm := ServerMetrics{
		Configured: []string{"http://ok/metrics", "http://gone/metrics", "http://dead/metrics"},
		Successful: []string{"http://ok/metrics", "http://gone/metrics"},
		Infos: []scrape.Info{
			{URL: "http://ok/metrics", TotalFetches: 9, Status: "ok"},
			{URL: "http://gone/metrics", TotalFetches: 4, Status: "partial", ConsecutiveFailures: 7},
			{URL: "http://dead/metrics", Disabled: true, Status: "failed"},
		},
	}
	b, err := ServerMetricsJSON(sm)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Summary struct {
			Successful []string                  `json:"endpoints_successful"`
			Partial    []string                  `json:"endpoints_partial"`
			Failed     []string                  `json:"endpoints_failed"`
			Info       map[string]map[string]any `json:"endpoint_info"`
		} `json:"summary"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	s := doc.Summary
	if strings.Join(s.Partial, " ") != "http://gone/metrics" || strings.Join(s.Failed, " ") != "http://dead/metrics" || len(s.Successful) != 2 ||
		s.Info["http://gone/metrics"]["status"] != "partial" || s.Info["http://gone/metrics"]["consecutive_failures"] != 7.0 || s.Info["http://ok/metrics"]["total_fetches"] != 9.0 {
		t.Fatalf("summary %+v", s)
	}
}

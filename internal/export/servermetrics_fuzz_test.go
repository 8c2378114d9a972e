package export

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/llmbench/llmbench/internal/scrape"
	"github.com/llmbench/llmbench/internal/servermetrics"
	"github.com/llmbench/llmbench/internal/stats"
)

// fuzzScrapes turns one parsed exposition into six scrapes a second
// apart in which every value moves by i·step: gauges by it, counters and
// histograms grow (a histogram by i·step observations in its first
// bucket, at that bucket's bound), so that rates, resets-free totals,
// slices and percentile estimates all have something to work on.
func fuzzScrapes(fams []scrape.Family, step float64) *servermetrics.Store {
	st := servermetrics.NewStore()
	for i := range 6 {
		d := float64(i) * step
		moved := make([]scrape.Family, len(fams))
		for f, fam := range fams {
			moved[f] = fam
			moved[f].Series = make([]scrape.Series, len(fam.Series))
			for k, s := range fam.Series {
				s.Buckets = append([]scrape.Bucket(nil), s.Buckets...)
				switch fam.Type {
				case scrape.Histogram:
					for b := range s.Buckets {
						s.Buckets[b].Count += d
					}
					s.Count += d
					if len(s.Buckets) > 0 && !math.IsInf(s.Buckets[0].UpperBound, 0) {
						s.Sum += d * s.Buckets[0].UpperBound
					}
				default:
					s.Value += d
				}
				moved[f].Series[k] = s
			}
		}
		st.Add(&scrape.Snapshot{Endpoint: "http://fuzz:8000/metrics", FirstByteNs: int64(i) * sec, Families: moved})
	}
	return st
}

// FuzzServerMetricsExports: whatever exposition a server sends (any
// families, labels, bounds and values the parser accepts), aggregated
// over a run with interval-fit percentiles and 1 s slices, every export
// is written: the JSON is valid JSON, the CSV reads back as CSV, and the
// Parquet file is written without error.
func FuzzServerMetricsExports(f *testing.F) {
	f.Add([]byte("# TYPE vllm:e2e_request_latency_seconds histogram\n"+
		"vllm:e2e_request_latency_seconds_bucket{model_name=\"m\",le=\"0\"} 1\n"+
		"vllm:e2e_request_latency_seconds_bucket{model_name=\"m\",le=\"0.5\"} 3\n"+
		"vllm:e2e_request_latency_seconds_bucket{model_name=\"m\",le=\"+Inf\"} 4\n"+
		"vllm:e2e_request_latency_seconds_sum{model_name=\"m\"} 2.5\n"+
		"vllm:e2e_request_latency_seconds_count{model_name=\"m\"} 4\n"+
		"# TYPE vllm:generation_tokens counter\nvllm:generation_tokens_total{model_name=\"m\"} 10\n"+
		"# HELP vllm:num_requests_running Requests \"running\",\\n now.\n# TYPE vllm:num_requests_running gauge\n"+
		"vllm:num_requests_running{model_name=\"a,b\",engine=\"0\"} 3\n"), 0.5)
	f.Add([]byte("# TYPE h histogram\nh_bucket{le=\"-5\"} 2\nh_bucket{le=\"1e308\"} 2\nh_bucket{le=\"+Inf\"} 9\nh_sum -10\nh_count 9\n"+
		"# TYPE x_info gauge\nx_info{version=\"=cmd|' /C calc'!A0\",os=\"\\\"\"} 1\nuntyped_thing 1e300\n"), 1e300)
	f.Add([]byte("# TYPE c counter\nc_total 5\nc_total{a=\"\"} -3\n# TYPE g gauge\ng{le=\"1\"} 0\n"), -1.0)
	f.Fuzz(func(t *testing.T, text []byte, step float64) {
		fams, err := scrape.NewParser().Parse(text)
		if err != nil || math.IsNaN(step) {
			return
		}
		st := fuzzScrapes(fams, step)
		w := servermetrics.Window{StartNs: sec / 2, EndNs: 4*sec + sec/2, SliceNs: sec}
		sm := ServerMetrics{
			SchemaVersion: "1.0", Version: "fuzz", BenchmarkID: "00000000-0000-4000-8000-000000000000",
			Configured: []string{"http://fuzz:8000/metrics"}, Successful: []string{"http://fuzz:8000/metrics"},
			Start: time.Unix(0, 0).UTC(), End: time.Unix(4, 0).UTC(),
			Metrics: st.Aggregate(w, stats.IntervalFit{}), Window: w,
		}
		js, err := ServerMetricsJSON(sm)
		if err != nil {
			t.Fatalf("JSON export: %v", err)
		}
		if !json.Valid(js) {
			t.Fatalf("JSON export is not JSON:\n%s", js)
		}
		c, err := ServerMetricsCSV(sm)
		if err != nil {
			t.Fatalf("CSV export: %v", err)
		}
		r := csv.NewReader(bytes.NewReader(c))
		r.FieldsPerRecord = -1
		if _, err := r.ReadAll(); err != nil {
			t.Fatalf("CSV export does not read back: %v\n%s", err, c)
		}
		if _, err := ServerMetricsParquet(st, sm); err != nil {
			t.Fatalf("Parquet export: %v", err)
		}
	})
}

// TestServerMetricsJSONOverflowIsNull: a gauge swinging between ±1e308
// has a standard deviation whose squares overflow to +Inf, which
// encoding/json refuses, with the whole file: that statistic is written
// null (its key kept), the ones that exist as they are, and the file is
// written.
func TestServerMetricsJSONOverflowIsNull(t *testing.T) {
	st := servermetrics.NewStore()
	for i := range 4 {
		st.Add(&scrape.Snapshot{Endpoint: "http://big:8000/metrics", FirstByteNs: int64(i) * sec, Families: []scrape.Family{
			{Name: "swing", Type: scrape.Gauge, Series: []scrape.Series{{Value: 1e308 * float64(1-2*(i%2))}}}}})
	}
	w := servermetrics.Window{StartNs: 0, EndNs: 3 * sec}
	js, err := ServerMetricsJSON(ServerMetrics{Metrics: st.Aggregate(w, stats.IntervalFit{}), Window: w})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Metrics map[string]struct {
			Series []struct {
				Stats map[string]*float64 `json:"stats"`
			} `json:"series"`
		} `json:"metrics"`
	}
	if err := json.Unmarshal(js, &doc); err != nil {
		t.Fatalf("%v\n%s", err, js)
	}
	got := doc.Metrics["swing"].Series[0].Stats
	if v, ok := got["std"]; !ok || v != nil {
		t.Errorf("std %v (present: %v), want null", v, ok)
	}
	if got["min"] == nil || *got["min"] != -1e308 || got["max"] == nil || *got["max"] != 1e308 {
		t.Errorf("min %v, max %v, want ∓1e308", got["min"], got["max"])
	}
}

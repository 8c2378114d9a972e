package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/llmbench/llmbench/internal/metrics"
	"github.com/llmbench/llmbench/internal/record"
	"github.com/llmbench/llmbench/internal/servermetrics"
	"github.com/llmbench/llmbench/internal/stats"
)

func TestProgressLine(t *testing.T) {
	got := ProgressLine(30, 20, 5, 100, 0, 2500*time.Millisecond)
	want := "[2.5s] done 25/100 (25%)  in flight 5  errors 5  10.0 req/s"
	if got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	if got := ProgressLine(3, 1, 0, 0, 0, time.Second); got != "[1s] done 1  in flight 2  errors 0  1.0 req/s" {
		t.Fatalf("no goal line %q", got)
	}
	if got := ProgressLine(3, 1, 0, 0, time.Minute, 12500*time.Millisecond); got != "[12s of 1m0s (21%)] done 1  in flight 2  errors 0  0.1 req/s" {
		t.Fatalf("duration mode line %q", got)
	}
}

func TestTableGolden(t *testing.T) {
	lat := stats.Summarize([]float64{300, 500})
	icl := stats.Summarize([]float64{1, 2})
	rs := metrics.Results{
		Metrics: []metrics.Result{
			{Def: metrics.RecordDefs[metrics.RequestLatency], Dist: &lat},
			{Def: metrics.RecordDefs[metrics.InterChunkLatency], Dist: &icl}, // NoConsole: hidden
			{Def: metrics.DefRequestCount, Value: 2},
			{Def: metrics.DefBenchmarkDuration, Value: 1.5},
			{Def: metrics.DefTotalISL, Value: 30}, // NoConsole: hidden
		},
		Errors: []metrics.ErrorCount{{Error: record.Error{Code: 500, Type: "InternalServerError", Message: "boom\nagain"}, Count: 3}},
	}
	got := Table(rs, "title", 0)
	golden(t, "table.txt", got)
	if strings.Contains(got, "Inter Chunk") || strings.Contains(got, "Total Input") {
		t.Fatal("NoConsole metrics shown")
	}
}

func TestServerMetricsLines(t *testing.T) {
	ms := []servermetrics.Metric{
		{Name: "vllm:num_requests_running", Series: []servermetrics.SeriesStats{{Endpoint: "http://a/metrics", Gauge: &servermetrics.GaugeStats{Avg: 7.5, Max: 8}}}},
		{Name: "vllm:generation_tokens", Unit: "tokens", Series: []servermetrics.SeriesStats{{Endpoint: "http://a/metrics", Counter: &servermetrics.CounterStats{Total: 12800, Rate: 1398.4}}}},
		{Name: "vllm:time_to_first_token_seconds", Unit: "seconds", Series: []servermetrics.SeriesStats{{Endpoint: "http://a/metrics",
			Hist: &servermetrics.HistStats{Count: 200, Estimates: [9]float64{4: 0.05, 8: 0.0598}}}}},
		{Name: "vllm:e2e_request_latency_seconds", Series: []servermetrics.SeriesStats{{Endpoint: "http://a/metrics", Hist: &servermetrics.HistStats{Count: 0}}}},
		{Name: "not_watched", Series: []servermetrics.SeriesStats{{Gauge: &servermetrics.GaugeStats{Avg: 1}}}},
	}
	want := " Server metrics (profiling period) from http://a/metrics:\n" +
		" vllm:num_requests_running         avg 7.50  max 8.00\n" +
		" vllm:generation_tokens            total 12800  rate 1398 tokens/s\n" +
		" vllm:time_to_first_token_seconds  p50≈50.00  p99≈59.80 ms  (n=200)\n"
	if got := ServerMetrics(ms); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	// Several endpoints: each line names its own.
	ms[1].Series[0].Endpoint = "http://b/metrics"
	want = " Server metrics (profiling period):\n" +
		" vllm:num_requests_running         avg 7.50  max 8.00  [http://a/metrics]\n" +
		" vllm:generation_tokens            total 12800  rate 1398 tokens/s  [http://b/metrics]\n" +
		" vllm:time_to_first_token_seconds  p50≈50.00  p99≈59.80 ms  (n=200)  [http://a/metrics]\n"
	if got := ServerMetrics(ms); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if ServerMetrics(nil) != "" {
		t.Fatal("no metrics, no section")
	}
}

package benchmark

import (
	"bytes"
	"testing"

	"github.com/llmbench/llmbench/internal/scrape"
	"github.com/llmbench/llmbench/internal/servermetrics"
)

// TestWarnEstimateFailures: a series the estimator gave no answer for is
// named, with its labels, endpoint and reason; one it answered, and a
// gauge, are not.
func TestWarnEstimateFailures(t *testing.T) {
	metrics := []servermetrics.Metric{
		{Name: "vllm:e2e_request_latency_seconds", Series: []servermetrics.SeriesStats{
			{Endpoint: "http://a:8000/metrics", Labels: []scrape.Label{{Name: "model_name", Value: "m"}},
				Hist: &servermetrics.HistStats{EstimateFailure: "the stats.IntervalFit estimator panicked: boom"}},
			{Endpoint: "http://b:8000/metrics", Hist: &servermetrics.HistStats{}},
		}},
		{Name: "vllm:num_requests_running", Series: []servermetrics.SeriesStats{{Endpoint: "http://a:8000/metrics"}}},
	}
	var log bytes.Buffer
	warnEstimateFailures(&log, metrics)
	want := `WARNING  Server metric vllm:e2e_request_latency_seconds{model_name="m"} on http://a:8000/metrics has no percentile estimates: the stats.IntervalFit estimator panicked: boom. Its other statistics are exported; please report it with the series' samples (--server-metrics-formats jsonl writes them).` + "\n"
	if got := log.String(); got != want {
		t.Errorf("log:\n%s\nwant:\n%s", got, want)
	}
}

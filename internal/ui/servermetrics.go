package ui

import (
	"fmt"
	"strings"

	"github.com/llmbench/llmbench/internal/servermetrics"
)

// watched are the server metrics worth a glance after a run, per engine:
// the "what to watch" of the server metrics reference.
var watched = map[string]bool{
	"vllm:num_requests_running": true, "vllm:num_requests_waiting": true, "vllm:kv_cache_usage_perc": true,
	"vllm:num_preemptions": true, "vllm:generation_tokens": true, "vllm:time_to_first_token_seconds": true,
	"vllm:inter_token_latency_seconds": true, "vllm:e2e_request_latency_seconds": true,
	"sglang:num_running_reqs": true, "sglang:num_queue_reqs": true, "sglang:token_usage": true, "sglang:generation_tokens": true,
	"sglang:time_to_first_token_seconds": true, "sglang:inter_token_latency_seconds": true, "sglang:e2e_request_latency_seconds": true,
	"trtllm_num_requests_running": true, "trtllm_num_requests_waiting": true, "trtllm_kv_cache_utilization": true, "trtllm_generation_tokens": true,
	"trtllm_time_to_first_token_seconds": true, "trtllm_time_per_output_token_seconds": true, "trtllm_e2e_request_latency_seconds": true,
	"dynamo_frontend_inflight_requests": true, "dynamo_frontend_queued_requests": true, "dynamo_frontend_output_tokens": true,
	"dynamo_frontend_time_to_first_token_seconds": true, "dynamo_frontend_inter_token_latency_seconds": true, "dynamo_frontend_request_duration_seconds": true,
	"nv_inference_request_success": true, "nv_inference_pending_request_count": true, "nv_inference_first_response_histogram_ms": true,
}

// ServerMetrics renders the watched server metrics, one line per series:
// gauges avg and max, counters total and rate, histograms p50 and p99
// estimates. Times are shown in milliseconds, as the client's table shows
// them (the exports keep the server's seconds). A single endpoint is named
// once in the heading, several at the end of each line, so the lines fit
// a terminal. It is empty when none was scraped.
func ServerMetrics(ms []servermetrics.Metric) string {
	type line struct{ name, value, endpoint string }
	var lines []line
	endpoints := map[string]bool{}
	nameWidth := 0
	for _, m := range ms {
		if !watched[m.Name] {
			continue
		}
		unit, scale := "", 1.0
		switch m.Unit {
		case "", "count":
		case "seconds":
			unit, scale = " ms", 1000
		case "milliseconds":
			unit = " ms"
		default:
			unit = " " + m.Unit
		}
		show := func(v float64) string { return short(v * scale) }
		for _, s := range m.Series {
			var v string
			switch {
			case s.Gauge != nil:
				v = fmt.Sprintf("avg %s  max %s%s", show(s.Gauge.Avg), show(s.Gauge.Max), unit)
			case s.Counter != nil:
				v = fmt.Sprintf("total %s  rate %s%s/s", show(s.Counter.Total), show(s.Counter.Rate), unit)
			case s.Hist != nil && s.Hist.Count > 0:
				v = fmt.Sprintf("p50≈%s  p99≈%s%s  (n=%.0f)", show(s.Hist.Estimates[4]), show(s.Hist.Estimates[8]), unit, s.Hist.Count)
			default:
				continue
			}
			lines = append(lines, line{m.Name, v, s.Endpoint})
			endpoints[s.Endpoint] = true
			nameWidth = max(nameWidth, len(m.Name))
		}
	}
	if len(lines) == 0 {
		return ""
	}
	var b strings.Builder
	if len(endpoints) == 1 {
		fmt.Fprintf(&b, " Server metrics (profiling period) from %s:\n", lines[0].endpoint)
	} else {
		b.WriteString(" Server metrics (profiling period):\n")
	}
	for _, l := range lines {
		fmt.Fprintf(&b, " %-*s  %s", nameWidth, l.name, l.value)
		if len(endpoints) > 1 {
			fmt.Fprintf(&b, "  [%s]", l.endpoint)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func short(v float64) string {
	switch {
	case v == 0:
		return "0"
	case v >= 100 || v <= -100:
		return fmt.Sprintf("%.0f", v)
	case v >= 1 || v <= -1:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.4g", v)
}

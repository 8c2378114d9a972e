// Package scrapetest holds Prometheus expositions for the tests and
// benchmarks of the scrape and servermetrics packages.
package scrapetest

import (
	"bytes"
	"fmt"
)

// BigExposition is a vLLM-like exposition of about 400 KB: 8 engines, each
// with 25 histogram families of 20 buckets, 30 gauges and 30 counters.
func BigExposition() []byte {
	var b bytes.Buffer
	for f := range 25 {
		name := fmt.Sprintf("vllm:hist_%02d_seconds", f)
		fmt.Fprintf(&b, "# HELP %s Histogram %d in seconds.\n# TYPE %s histogram\n", name, f, name)
		for e := range 8 {
			lbl := fmt.Sprintf(`engine="%d",model_name="Qwen/Qwen3-0.6B"`, e)
			cum := 0
			for k := range 20 {
				cum += k * 3
				fmt.Fprintf(&b, "%s_bucket{%s,le=\"%g\"} %d\n", name, lbl, 0.001*float64(int(1)<<k), cum)
			}
			fmt.Fprintf(&b, "%s_bucket{%s,le=\"+Inf\"} %d\n%s_sum{%s} %g\n%s_count{%s} %d\n", name, lbl, cum, name, lbl, float64(cum)*0.37, name, lbl, cum)
		}
	}
	for f := range 30 {
		fmt.Fprintf(&b, "# HELP vllm:gauge_%02d A gauge.\n# TYPE vllm:gauge_%02d gauge\n", f, f)
		for e := range 8 {
			fmt.Fprintf(&b, "vllm:gauge_%02d{engine=\"%d\",model_name=\"Qwen/Qwen3-0.6B\"} %d\n", f, e, f*e)
		}
		fmt.Fprintf(&b, "# HELP vllm:counter_%02d_total A counter.\n# TYPE vllm:counter_%02d_total counter\n", f, f)
		for e := range 8 {
			fmt.Fprintf(&b, "vllm:counter_%02d_total{engine=\"%d\",model_name=\"Qwen/Qwen3-0.6B\"} %d\n", f, e, f*e*1000)
		}
	}
	return b.Bytes()
}

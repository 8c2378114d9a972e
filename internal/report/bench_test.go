package report

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/internal/artifacts"
)

// BenchmarkRunReport10k measures what a run's report costs at its end:
// reading 10,000 streamed requests' records (64 inter-chunk latencies
// each, as the README command's), building the page and rendering it.
func BenchmarkRunReport10k(b *testing.B) {
	dir := b.TempDir()
	var sb strings.Builder
	icl := strings.TrimSuffix(strings.Repeat("10.01234,", 63), ",")
	for i := range 10000 {
		start := int64(1_700_000_000_000_000_000) + int64(i)*10_000_000
		fmt.Fprintf(&sb, `{"metadata":{"session_num":%d,"x_request_id":"8bc0b700-b262-4671-9545-252bc6b59518","request_start_ns":%d,"request_end_ns":%d,"benchmark_phase":"profiling","was_cancelled":false},"metrics":{"request_latency":{"value":680.9,"unit":"ms"},"time_to_first_token":{"value":%g,"unit":"ms"},"inter_token_latency":{"value":10.0,"unit":"ms"},"inter_chunk_latency":{"value":[%s],"unit":"ms"},"output_token_throughput_per_user":{"value":99.97,"unit":"tokens/sec/user"},"input_sequence_length":{"value":550,"unit":"tokens"},"output_sequence_length":{"value":64,"unit":"tokens"},"output_token_count":{"value":64,"unit":"tokens"}}}`+"\n",
			i, start, start+680_900_000, 20+float64(i%31), icl)
	}
	if err := os.WriteFile(filepath.Join(dir, artifacts.RecordsFile), []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(sb.Len()))
	b.ReportAllocs()
	for b.Loop() {
		r, err := artifacts.LoadRun(dir, artifacts.DefaultNames, RecordTags...)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Render(SingleRun(r, "bench")); err != nil {
			b.Fatal(err)
		}
	}
}

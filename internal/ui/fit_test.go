package ui

import (
	"fmt"
	"github.com/llmbench/llmbench/internal/goldentest"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/internal/gputelemetry"
	"github.com/llmbench/llmbench/internal/metrics"
	"github.com/llmbench/llmbench/internal/record"
	"github.com/llmbench/llmbench/internal/stats"
)

// runResults is a run's results as a streaming chat run has them: the
// Effective and Active groups, the default table with its longest label
// (Output Token Throughput Per User) and an error with a long message.
func runResults() metrics.Results {
	dist := func(xs ...float64) *stats.Summary { s := stats.Summarize(xs); return &s }
	defs := metrics.RecordDefs
	return metrics.Results{
		Metrics: []metrics.Result{
			{Def: metrics.DefEffectiveConcurrency, Dist: dist(3.5, 4, 4)},
			{Def: metrics.DefEffectiveDecodeThroughputPerUser, Dist: dist(95.17, 99.93, 554.17)},
			{Def: metrics.DefEffectiveLatency, Dist: dist(1040.3, 1044.98)},
			{Def: metrics.DefActivePrefillThroughputPerUsr, Dist: dist(10083.87, 10957.38)},
			{Def: defs[metrics.RequestLatency], Dist: dist(1040.27, 1044.94, 1042.04)},
			{Def: defs[metrics.TimeToFirstToken], Dist: dist(50.19, 54.54)},
			{Def: defs[metrics.InterTokenLatency], Dist: dist(9.96, 10.05)},
			{Def: defs[metrics.OutputTokenThroughputPerUser], Dist: dist(99.52, 100.35)},
			{Def: defs[metrics.InputSequenceLength], Dist: dist(550, 550)},
			{Def: defs[metrics.OutputSequenceLength], Dist: dist(100, 100)},
			{Def: metrics.DefRequestCount, Value: 2000},
			{Def: metrics.DefBenchmarkDuration, Value: 52.1},
			{Def: metrics.DefRequestThroughput, Value: 38.39},
			{Def: metrics.DefOutputTokenThroughput, Value: 3838.77},
		},
		Errors: []metrics.ErrorCount{{Error: record.Error{Code: 500, Type: "InternalServerError",
			Message: strings.Repeat("the simulated server failed this request on purpose; ", 3)}, Count: 3}},
	}
}

// TestTableWidths: at 80 and 120 columns every line fits, the columns
// that always stay are there, and the table says it was narrowed; with no
// limit every column is there, as in the files.
func TestTableWidths(t *testing.T) {
	title := "llmbench 0.1.0 metrics (AIPerf-compatible) for http://gpu-node-17.example.internal:8000"
	for _, width := range []int{80, 120, 0} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			got := Table(runResults(), title, width)
			golden(t, fmt.Sprintf("table_width_%d.txt", width), got)
			for i, line := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
				if n := len([]rune(line)); width > 0 && n > width {
					t.Errorf("line %d is %d columns wide, over %d: %q", i+1, n, width, line)
				}
			}
			for _, line := range strings.Split(got, "\n") {
				if f := strings.Fields(line); len(f) > 0 && f[0] == "Metric" {
					if h := strings.Join(f, " "); !strings.HasPrefix(h, "Metric avg") || !strings.Contains(h, " p50") || !strings.HasSuffix(h, "p99") && !strings.HasSuffix(h, "std") {
						t.Errorf("header %q lacks a column that always stays", h)
					}
				}
			}
			narrowed := strings.Contains(got, "Narrowed to the terminal's width")
			if all := strings.Contains(got, " p1 ") && strings.Contains(got, " p75 ") && strings.Contains(got, "Output Token Throughput Per User"); (width == 0) != all || (width == 0) == narrowed {
				t.Errorf("width %d: every column %v, narrowed %v", width, all, narrowed)
			}
		})
	}
}

// TestFitRowsOrder: columns go in dropOrder, only as many as needed; then
// labels are abbreviated, then cut, and the room that frees takes back
// columns.
func TestFitRowsOrder(t *testing.T) {
	rows := [][]string{
		{"Metric", "avg", "min", "max", "p1", "p50", "p90", "p99", "std"},
		{"Output Token Throughput Per User (tokens/sec/user)", "1.00", "2.00", "3.00", "4.00", "5.00", "6.00", "7.00", "8.00"},
	}
	cases := []struct {
		width  int
		header string
		label  string
	}{
		{200, "Metric avg min max p1 p50 p90 p99 std", "Output Token Throughput Per User (tokens/sec/user)"},
		{99, "Metric avg min max p50 p90 p99 std", "Output Token Throughput Per User (tokens/sec/user)"},
		{84, "Metric avg min max p50 p99", "Output Token Throughput Per User (tokens/sec/user)"},
		{66, "Metric avg min p50 p99", "Out Tok Tput/User (tokens/sec/user)"},
		{40, "Metric avg p50 p99", "Out Tok Tput/User (…"},
	}
	for _, c := range cases {
		got, _ := fitRows(rows, c.width, dropOrder)
		if h := strings.Join(got[0], " "); h != c.header || got[1][0] != c.label {
			t.Errorf("width %d: header %q label %q, want %q %q", c.width, h, got[1][0], c.header, c.label)
		}
		if w := gridWidth(got); c.width < 200 && w > c.width {
			t.Errorf("width %d: table is %d wide", c.width, w)
		}
	}
	if got, changed := fitRows(rows, 0, dropOrder); changed || len(got[0]) != 9 {
		t.Error("no limit changed the table")
	}
}

// TestGPUTelemetryWidth: the per-GPU tables narrow like the others.
func TestGPUTelemetryWidth(t *testing.T) {
	r := &gputelemetry.Report{
		Configured: []string{"http://localhost:9400/metrics"}, Successful: []string{"http://localhost:9400/metrics"},
		GPUs: []gputelemetry.GPUSummary{{
			GPU: gputelemetry.GPU{Index: 0, Model: "NVIDIA H100 80GB HBM3", Source: "http://localhost:9400/metrics"},
			Metrics: []gputelemetry.Stats{
				{Field: &gputelemetry.Field{Display: "GPU Power Usage", Unit: "W"}, Avg: 520.4, Min: 350.5, Max: 690.25, Std: 240.3},
			},
		}},
	}
	for _, width := range []int{60, 0} {
		got := GPUTelemetry(r, width)
		for _, line := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
			if width > 0 && len([]rune(line)) > width {
				t.Errorf("line over %d columns: %q", width, line)
			}
		}
		if (width == 0) != strings.Contains(got, " std") {
			t.Errorf("width %d:\n%s", width, got)
		}
	}
}

// golden compares got with testdata/name (go test -update rewrites it).
func golden(t *testing.T, name, got string) { t.Helper(); goldentest.Check(t, name, []byte(got)) }

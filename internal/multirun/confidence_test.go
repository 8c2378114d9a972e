package multirun

import (
	"math"
	"testing"

	"github.com/llmbench/llmbench/internal/metrics"
	"github.com/llmbench/llmbench/internal/stats"
)

func all(metrics.Def) bool { return true }

func run(throughput float64, latencies ...float64) metrics.Results {
	lat := stats.Summarize(latencies)
	return metrics.Results{Metrics: []metrics.Result{
		{Def: metrics.DefRequestThroughput, Value: throughput},
		{Def: metrics.RecordDefs[metrics.RequestLatency], Dist: &lat},
	}}
}

// TestAggregate: request_throughput of 10, 12 and 14 over three runs:
// mean 12, sample std 2, se 2/√3, t(0.975, 2) = 4.302652729749464, so the
// 95 % interval is 12 ± 4.9682... (worked by hand from the t table).
func TestAggregate(t *testing.T) {
	got := Aggregate([]metrics.Results{run(10, 100, 200), run(12, 300), run(14, 100, 100, 400)}, 0.95, all)
	byName := map[string]Stat{}
	for _, s := range got {
		byName[s.Name] = s
	}
	tp := byName["request_throughput_avg"]
	se := 2 / math.Sqrt(3)
	margin := 4.302652729749464 * se
	want := Stat{Name: "request_throughput_avg", Unit: "requests/sec", Mean: 12, Std: 2, Min: 10, Max: 14, CV: 2.0 / 12, SE: se,
		CILow: 12 - margin, CIHigh: 12 + margin, TCritical: 4.302652729749464, N: 3}
	if !statNear(tp, want) {
		t.Fatalf("got  %+v\nwant %+v", tp, want)
	}
	// request_latency_avg: 150, 300, 200 -> mean 216.67; max: 200, 300, 400.
	if s := byName["request_latency_avg"]; math.Abs(s.Mean-650.0/3) > 1e-9 || s.Unit != "ms" {
		t.Fatalf("request_latency_avg %+v", s)
	}
	if s := byName["request_latency_max"]; s.Mean != 300 || s.Min != 200 || s.Max != 400 {
		t.Fatalf("request_latency_max %+v", s)
	}
	// Order: the metric order, then avg, min, max, sum, p1…p99, std.
	if got[0].Name != "request_throughput_avg" || got[1].Name != "request_latency_avg" || got[2].Name != "request_latency_min" ||
		got[len(got)-1].Name != "request_latency_std" || len(got) != 1+14 {
		t.Fatalf("order: %v", names(got))
	}
}

// TestAggregateOneRun: one run gives the value with no spread and no t.
func TestAggregateOneRun(t *testing.T) {
	got := Aggregate([]metrics.Results{run(10, 100)}, 0.95, all)
	s := got[0]
	if s.Mean != 10 || s.Std != 0 || s.SE != 0 || s.CILow != 10 || s.CIHigh != 10 || !math.IsNaN(s.TCritical) {
		t.Fatalf("%+v", s)
	}
}

func names(ss []Stat) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Name)
	}
	return out
}

func statNear(a, b Stat) bool {
	near := func(x, y float64) bool { return math.Abs(x-y) <= 1e-9*math.Max(1, math.Abs(y)) }
	return a.Name == b.Name && a.Unit == b.Unit && a.N == b.N && near(a.Mean, b.Mean) && near(a.Std, b.Std) && near(a.Min, b.Min) &&
		near(a.Max, b.Max) && near(a.CV, b.CV) && near(a.SE, b.SE) && near(a.CILow, b.CILow) && near(a.CIHigh, b.CIHigh) && near(a.TCritical, b.TCritical)
}

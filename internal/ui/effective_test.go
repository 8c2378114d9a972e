package ui

import (
	"math"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/internal/metrics"
	"github.com/llmbench/llmbench/internal/stats"
)

// TestEffectiveTablesGolden: the Effective and Active tables come before
// the default one, and their metrics are not repeated in it.
func TestEffectiveTablesGolden(t *testing.T) {
	nan := math.NaN()
	lat := stats.Summarize([]float64{300, 500})
	eff := stats.Summarize([]float64{304, 509})
	conc := stats.Summary{Sum: nan, Avg: 1.7, Min: 1, Max: 2, Std: math.Sqrt(0.21), P: [9]float64{nan, nan, nan, nan, 2, nan, 2, 2, 2}}
	tput := stats.Summary{Sum: nan, Avg: 1125, Min: 500, Max: 1500, Std: 330.72, P: [9]float64{nan, nan, nan, nan, 1000, nan, 1500, 1500, 1500}}
	credit := stats.Summarize([]float64{0, 4})
	rs := metrics.Results{Metrics: []metrics.Result{
		{Def: metrics.RecordDefs[metrics.RequestLatency], Dist: &lat},
		{Def: metrics.DefRequestCount, Value: 2},
		{Def: metrics.DefEffectiveConcurrency, Dist: &conc},
		{Def: metrics.DefActiveDecodeThroughput, Dist: &tput},
		{Def: metrics.DefCreditToStartLatency, Dist: &credit}, // exported, not shown
		{Def: metrics.DefEffectiveLatency, Dist: &eff},
	}}
	got := Table(rs, "title", 0)
	golden(t, "effective_table.txt", got)
	e, a, d := strings.Index(got, "title: Effective"), strings.Index(got, "title: Active"), strings.Index(got, "Request Latency")
	if e < 0 || a < e || d < a || strings.Count(got, "Effective Concurrency") != 1 || strings.Contains(got, "Credit-to-Start") {
		t.Fatalf("groups out of order or repeated:\n%s", got)
	}
}

package ui

import (
	"math"

	"github.com/llmbench/llmbench/internal/metrics"
	"github.com/llmbench/llmbench/internal/stats"
)

// groupTables renders AIPerf 0.12's console groups that come before the
// default table: "<title>: Effective" (effective_latency and the
// time-weighted Effective family), then "<title>: Active". A group with no
// metric has no table. The columns are the statistics every metric of
// both groups has (a curve has no p1…p25 or p75).
//
// It reports whether a table was narrowed to width.
func groupTables(rs metrics.Results, title string, width int) (string, bool) {
	out, narrowed := "", false
	for _, g := range []struct {
		flag metrics.Flag
		name string
	}{{metrics.Effective, "Effective"}, {metrics.Active, "Active"}} {
		rows := [][]string{{"Metric", "avg", "min", "max", "p50", "p90", "p95", "p99", "std"}}
		for _, r := range rs.Metrics {
			if r.Dist == nil || !r.Def.Has(g.flag) || r.Def.Has(metrics.NoConsole) {
				continue
			}
			d := r.Dist
			row := []string{label(r.Def), numOrBlank(d.Avg), numOrBlank(d.Min), numOrBlank(d.Max)}
			for i, p := range stats.Percentiles {
				if p == 50 || p == 90 || p == 95 || p == 99 {
					row = append(row, numOrBlank(d.P[i]))
				}
			}
			rows = append(rows, append(row, numOrBlank(d.Std)))
		}
		if len(rows) > 1 {
			rows, n := fitRows(rows, width, dropOrder)
			narrowed = narrowed || n
			out += grid(fitTitle(title, ": "+g.name, width), rows) + "\n"
		}
	}
	return out, narrowed
}

// inGroup reports whether a metric is shown in a group's table rather
// than the default one.
func inGroup(d metrics.Def) bool { return d.Has(metrics.Effective) || d.Has(metrics.Active) }

func numOrBlank(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	return num(v)
}

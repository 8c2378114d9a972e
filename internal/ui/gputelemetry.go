package ui

import (
	"fmt"
	"strings"

	"github.com/llmbench/llmbench/internal/gputelemetry"
	"github.com/llmbench/llmbench/internal/metrics"
)

// GPUTelemetry renders AIPerf's GPU telemetry console output (e4): which
// sources answered, then one table per GPU titled
// "<host:port> | GPU <i> | <name>" with avg, min, max, p99, p90, p50 and
// std of each field (a counter shows its increase as avg).
//
// width is the terminal's (0: no limit), as for Table.
func GPUTelemetry(r *gputelemetry.Report, width int) string {
	if r == nil || len(r.GPUs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("NVIDIA GPUs, read from DCGM exporters.\n")
	b.WriteString("llmbench | GPU Telemetry Summary\n")
	fmt.Fprintf(&b, "%d/%d telemetry sources reachable\n", len(r.Successful), len(r.Configured))
	for _, u := range r.Configured {
		mark := "✘"
		for _, s := range r.Successful {
			if s == u {
				mark = "✔"
			}
		}
		fmt.Fprintf(&b, "  %s %s\n", mark, u)
	}
	for _, g := range r.GPUs {
		title := fmt.Sprintf("%s | GPU %d | %s", g.GPU.Endpoint(), g.GPU.Index, g.GPU.Model)
		if g.Partial {
			title += " (reported for part of the run)"
		}
		rows := [][]string{{"Metric", "avg", "min", "max", "p99", "p90", "p50", "std"}}
		for _, m := range g.Metrics {
			if m.Counter {
				rows = append(rows, []string{m.Field.Label() + " (increase)", fmtNum(m.Avg), "", "", "", "", "", ""})
				continue
			}
			// p99, p90, p50 are the 9th, 7th and 5th of the percentiles.
			rows = append(rows, []string{m.Field.Label(), fmtNum(m.Avg), fmtNum(m.Min), fmtNum(m.Max), fmtNum(m.P[8]), fmtNum(m.P[6]), fmtNum(m.P[4]), fmtNum(m.Std)})
		}
		rows, _ = fitRows(rows, width, dropOrder)
		b.WriteString("\n" + grid(fitTitle(title, "", width), rows))
	}
	return b.String()
}

// PowerEfficiency renders the energy metrics (AIPerf's "GPU Power
// Efficiency (NVIDIA)" table, avg only); "" when there are none. width is
// the terminal's (0: no limit).
func PowerEfficiency(rs metrics.Results, width int) string {
	rows := [][]string{{"Metric", "avg"}}
	for _, r := range rs.Metrics {
		if strings.HasPrefix(r.Def.Tag, gputelemetry.PlatformNVIDIA+"_") {
			rows = append(rows, []string{label(r.Def), fmtNum(r.Value)})
		}
	}
	if len(rows) == 1 {
		return ""
	}
	rows, _ = fitRows(rows, width, nil)
	return grid(fitTitle("GPU Power Efficiency (NVIDIA)", "", width), rows)
}

// fmtNum shows a value with two decimals, small ones with more.
func fmtNum(v float64) string {
	if v != 0 && v < 0.1 && v > -0.1 {
		return fmt.Sprintf("%.4g", v)
	}
	return num(v)
}

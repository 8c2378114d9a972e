// Package ui shows a run to a person: a live progress line while it runs and
// the final table of metrics when it ends.
package ui

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/llmbench/llmbench/internal/metrics"
	"github.com/llmbench/llmbench/internal/stats"
)

// Counters are the live counts a run publishes for the progress line.
type Counters struct {
	Sent, Completed, Errors atomic.Int64
}

// InFlight is the number of requests sent and not yet finished.
func (c *Counters) InFlight() int64 {
	return c.Sent.Load() - c.Completed.Load() - c.Errors.Load()
}

// Progress prints a progress line every interval until stop is closed.
// On a terminal the line is redrawn in place. total is the requests
// expected (0: unknown), duration the run's --benchmark-duration (0: none).
func Progress(w io.Writer, c *Counters, total int, duration, interval time.Duration, terminal bool, stop <-chan struct{}) {
	start := time.Now()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			if terminal {
				fmt.Fprintln(w)
			}
			return
		case <-t.C:
			line := ProgressLine(c.Sent.Load(), c.Completed.Load(), c.Errors.Load(), total, duration, time.Since(start))
			if terminal {
				fmt.Fprintf(w, "\r\033[K%s", line)
			} else {
				fmt.Fprintln(w, line)
			}
		}
	}
}

// ProgressLine describes progress in one line: against the requests
// expected, or, for a run of a set duration, its time against that.
func ProgressLine(sent, completed, errors int64, total int, duration, elapsed time.Duration) string {
	done := completed + errors
	rate := 0.0
	if s := elapsed.Seconds(); s > 0 {
		rate = float64(done) / s
	}
	clock, of := elapsed.Truncate(100*time.Millisecond).String(), ""
	switch {
	case total > 0:
		of = fmt.Sprintf("/%d (%.0f%%)", total, 100*float64(done)/float64(total))
	case duration > 0:
		clock = fmt.Sprintf("%s of %s (%.0f%%)", elapsed.Truncate(time.Second), duration, math.Min(100, 100*elapsed.Seconds()/duration.Seconds()))
	}
	return fmt.Sprintf("[%s] done %d%s  in flight %d  errors %d  %.1f req/s", clock, done, of, sent-done, errors, rate)
}

// Table renders the final results: the Effective and Active tables
// (effective.go), the console metrics' distributions, then their
// single-value metrics, then the error summary. width is the terminal's
// (Width); a table wider than it loses columns in dropOrder and then
// shortens its labels. 0 means no limit: every column, as the files have.
func Table(rs metrics.Results, title string, width int) string {
	var b strings.Builder
	groups, narrowed := groupTables(rs, title, width)
	b.WriteString(groups)
	header := []string{"Metric", "avg", "min", "max"}
	header = append(header, stats.PercentileNames[:]...)
	header = append(header, "std")
	rows := [][]string{header}
	for _, r := range rs.Metrics {
		if r.Dist == nil || r.Def.Has(metrics.NoConsole) || inGroup(r.Def) {
			continue
		}
		d := r.Dist
		row := []string{label(r.Def), num(d.Avg), num(d.Min), num(d.Max)}
		for _, p := range d.P {
			row = append(row, num(p))
		}
		rows = append(rows, append(row, num(d.Std)))
	}
	rows, n := fitRows(rows, width, dropOrder)
	narrowed = narrowed || n
	b.WriteString(grid(fitTitle(title, "", width), rows))
	rule := strings.Repeat("─", gridWidth(rows))
	for _, r := range rs.Metrics {
		if r.Dist != nil || (r.Def.Has(metrics.NoConsole) && r.Def.Tag != "benchmark_duration") {
			continue
		}
		fmt.Fprintf(&b, " %-40s %s\n", label(r.Def), num(r.Value))
	}
	if len(rs.Errors) > 0 {
		b.WriteString(rule + "\n Errors:\n")
		for _, e := range rs.Errors {
			line := fmt.Sprintf("   %6d × %s (%d): ", e.Count, e.Error.Type, e.Error.Code)
			room := 100
			if width > 0 {
				room = max(width-len([]rune(line))-1, 20)
			}
			b.WriteString(line + oneLine(e.Error.Message, room) + "\n")
		}
	}
	if narrowed {
		b.WriteString(" Narrowed to the terminal's width; the export files hold every column.\n")
	}
	return b.String()
}

func label(d metrics.Def) string {
	if d.Unit == "" {
		return d.Header
	}
	return d.Header + " (" + d.Unit + ")"
}

func num(v float64) string {
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func center(s string, width int) string {
	pad := (width - len([]rune(s))) / 2
	if pad <= 0 {
		return s
	}
	return strings.Repeat(" ", pad) + s
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// grid renders rows (the first the header) as a titled table with the
// first column left-aligned and the rest right-aligned. The title should
// fit (fitTitle); narrowing the rows is fitRows' job.
func grid(title string, rows [][]string) string {
	widths := columnWidths(rows)
	total := gridWidth(rows)
	var b strings.Builder
	b.WriteString(center(title, total) + "\n")
	rule := strings.Repeat("─", total)
	b.WriteString(rule + "\n")
	for i, row := range rows {
		var line strings.Builder
		for j, cell := range row {
			pad := widths[j] - len([]rune(cell))
			if j == 0 {
				line.WriteString(" " + cell + strings.Repeat(" ", pad) + " ")
			} else {
				line.WriteString("  " + strings.Repeat(" ", pad) + cell)
			}
		}
		// A row whose last cells are empty (a counter's) ends at its text.
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
		if i == 0 {
			b.WriteString(rule + "\n")
		}
	}
	b.WriteString(rule + "\n")
	return b.String()
}

func columnWidths(rows [][]string) []int {
	widths := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, cell := range row {
			widths[i] = max(widths[i], len([]rune(cell)))
		}
	}
	return widths
}

// gridWidth is the width of grid's rows and rules: each cell takes its
// column's width and two spaces.
func gridWidth(rows [][]string) int {
	total := 0
	for _, w := range columnWidths(rows) {
		total += w + 2
	}
	return total
}

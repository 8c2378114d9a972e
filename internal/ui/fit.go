package ui

import (
	"strings"
)

// dropOrder is the order in which a statistics table gives up columns when
// it is wider than the terminal: first the percentiles AIPerf's console
// table does not show (p1, p5, p10, p25, p75, p95), then AIPerf's own
// columns from the least telling (its table reads avg, min, max, p99, p90,
// p50, std). Metric, avg, p50 and p99 always stay.
var dropOrder = []string{"p1", "p5", "p10", "p25", "p75", "p95", "std", "p90", "max", "min"}

// abbreviations shorten metric labels, longest phrases first, once the
// columns are down to the ones that always stay.
var abbreviations = strings.NewReplacer(
	" Per User", "/User",
	"Throughput", "Tput",
	"Sequence Length", "Seq Len",
	"Concurrency", "Conc",
	"Effective", "Eff",
	"Latency", "Lat",
	"Request", "Req",
	"Output", "Out",
	"Input", "In",
	"Token", "Tok",
	"Prefill", "Pfill",
	"Decode", "Dec",
	"Duration", "Dur",
)

// fitRows narrows rows (the first the header) to width columns as grid
// renders them: it drops the columns named in drop, in order, until the
// table fits. When even the columns that always stay are too wide, it
// abbreviates the labels too long for the room left (cutting them if need
// be) and takes back the columns that frees, the last dropped first. It
// reports whether it changed anything. width 0 means no limit: files and
// pipes get every column.
func fitRows(rows [][]string, width int, drop []string) ([][]string, bool) {
	if width <= 0 || gridWidth(rows) <= width {
		return rows, false
	}
	var cols []string // the columns of drop the table has
	for _, name := range drop {
		if column(rows[0], name) > 0 {
			cols = append(cols, name)
		}
	}
	for k := 1; k <= len(cols); k++ {
		if r := without(rows, cols[:k]); gridWidth(r) <= width {
			return r, true
		}
	}
	narrow := without(rows, cols)
	room := max(columnWidths(narrow)[0]-(gridWidth(narrow)-width), 8)
	short := withLabels(rows, func(s string) string {
		if len([]rune(s)) <= room {
			return s
		}
		return cut(abbreviations.Replace(s), room)
	})
	for k := 0; k < len(cols); k++ {
		if r := without(short, cols[:k]); gridWidth(r) <= width {
			return r, true
		}
	}
	return without(short, cols), true
}

// column is the index of the column named name, -1 when there is none.
func column(header []string, name string) int {
	for j, h := range header {
		if h == name {
			return j
		}
	}
	return -1
}

// without is rows less the columns named.
func without(rows [][]string, names []string) [][]string {
	gone := map[int]bool{}
	for _, n := range names {
		if j := column(rows[0], n); j > 0 {
			gone[j] = true
		}
	}
	out := make([][]string, len(rows))
	for i, row := range rows {
		out[i] = make([]string, 0, len(row)-len(gone))
		for j, cell := range row {
			if !gone[j] {
				out[i] = append(out[i], cell)
			}
		}
	}
	return out
}

// withLabels is rows with f applied to the first cell of every row but
// the header.
func withLabels(rows [][]string, f func(string) string) [][]string {
	out := make([][]string, len(rows))
	out[0] = rows[0]
	for i, row := range rows[1:] {
		out[i+1] = append([]string{f(row[0])}, row[1:]...)
	}
	return out
}

// cut shortens s to n runes, the last an ellipsis.
func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n || n < 1 {
		return s
	}
	return string(r[:n-1]) + "…"
}

// fitTitle cuts a title to width (0: no limit), keeping its suffix whole.
func fitTitle(title, suffix string, width int) string {
	if width <= 0 {
		return title + suffix
	}
	return cut(title, max(width-len([]rune(suffix)), 8)) + suffix
}

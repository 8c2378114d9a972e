package compare

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Num is a number in compare.json: NaN and ±Inf (no value, no interval)
// are written as null.
type Num float64

// MarshalJSON writes the number as encoding/json writes a float64, or null.
func (n Num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(f)
}

// UnmarshalJSON reads a number, null as NaN.
func (n *Num) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = Num(math.NaN())
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*n = Num(f)
	return nil
}

// MarshalJSON writes a workload metric's direction as null.
func (d Direction) MarshalJSON() ([]byte, error) {
	if d == "" {
		return []byte("null"), nil
	}
	return json.Marshal(string(d))
}

// UnmarshalJSON reads a direction, null as "".
func (d *Direction) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*d = ""
		return nil
	}
	return json.Unmarshal(b, (*string)(d))
}

// JSON renders compare.json, indented, ending in a newline.
func (r *Result) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode compare.json: %w", err)
	}
	return append(b, '\n'), nil
}

// shortTags abbreviate the metrics when a table must be narrow.
var shortTags = map[string]string{
	"time_to_first_token":              "TTFT",
	"inter_token_latency":              "ITL",
	"request_latency":                  "latency",
	"time_to_second_token":             "TTST",
	"output_token_throughput_per_user": "tok/s/user",
	"input_sequence_length":            "ISL",
	"output_sequence_length":           "OSL",
	"request_throughput":               "req/s",
	"output_token_throughput":          "tok/s",
	ErrorRateTag:                       "errors",
}

// verdictRank orders the table: regressions first.
func verdictRank(v string) int {
	switch v {
	case Regressed:
		return 0
	case Changed:
		return 1
	case Improved:
		return 2
	case NoChange:
		return 3
	}
	return 4
}

// Table renders the comparison as plain aligned text: regressions first
// (marked "!"), then workload changes, improvements, the rest; then the
// gates and notes. width > 0 is the most columns it may take: it
// abbreviates metric names, then drops the intervals, then the base and
// new values, and wraps lines as a last resort.
func (r *Result) Table(width int) string {
	order := make([]int, 0, len(r.Metrics))
	for rank := range 5 {
		for i, e := range r.Metrics {
			if verdictRank(e.Verdict) == rank {
				order = append(order, i)
			}
		}
	}
	var rows [][]string
	for level := 0; level <= maxLevel; level++ {
		rows = r.tableRows(order, level)
		if width <= 0 || tableWidth(rows) <= width {
			break
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "BASE %s\nNEW  %s\n%s, %g%% intervals\n\n", r.Inputs.Base.Path, r.Inputs.New.Path, methodText(r.Inputs), 100*r.Inputs.Level)
	widths := columnWidths(rows)
	for _, row := range rows {
		var line strings.Builder
		for j, cell := range row {
			if j == 0 {
				if widths[0] > 0 { // the regression mark's column
					line.WriteString(cell + strings.Repeat(" ", widths[0]-len(cell)) + " ")
				}
				continue
			}
			if j > 1 {
				line.WriteString("  ")
			}
			pad := strings.Repeat(" ", widths[j]-utf8.RuneCountInString(cell))
			if len(row) == 7 && (j == 3 || j == 4) { // base and new, right-aligned
				line.WriteString(pad + cell)
			} else {
				line.WriteString(cell + pad)
			}
		}
		sb.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
	seen := map[string]bool{}
	for _, e := range r.Metrics {
		if e.Verdict == NotTested && e.Note != "" && !seen[e.Note] {
			if len(seen) == 0 {
				sb.WriteString("\n")
			}
			seen[e.Note] = true
			fmt.Fprintf(&sb, "not tested: %s\n", e.Note)
		}
	}
	for _, e := range r.Metrics {
		if e.Better == "" {
			sb.WriteString("\nISL and OSL describe the workload, not the server: they change or not, neither better nor worse.\n")
			break
		}
	}
	if len(r.Gates) > 0 {
		sb.WriteString("\n")
		for _, g := range r.Gates {
			fmt.Fprintf(&sb, "gate %s: %s (%s)\n", g.Expr, strings.ToUpper(g.Status), g.Reason)
		}
	}
	for _, n := range r.Notes {
		sb.WriteString("note: " + n + "\n")
	}
	if width <= 0 {
		return sb.String()
	}
	return wrapLines(sb.String(), width)
}

func methodText(in Inputs) string {
	switch in.Method {
	case MethodRuns:
		return fmt.Sprintf("over runs (%d vs %d): Welch's t", in.Base.Runs, in.New.Runs)
	case MethodPooled:
		return fmt.Sprintf("over requests, the multi-run side's pooled: means by Welch's t, percentiles by bootstrap (%d resamples), errors by Newcombe", in.Resamples)
	}
	return fmt.Sprintf("over requests: means by Welch's t, percentiles by bootstrap (%d resamples), errors by Newcombe", in.Resamples)
}

// The table's compactness levels, each dropping more than the last.
const (
	levelShortNames = 1
	levelNoUnits    = 2
	levelNoInterval = 3
	levelNoValues   = 4
	maxLevel        = levelNoValues
)

// tableRows builds the header and rows at a compactness level.
func (r *Result) tableRows(order []int, level int) [][]string {
	head := []string{"", "METRIC", "STAT", "BASE", "NEW", "CHANGE", "VERDICT"}
	if level >= levelNoValues {
		head = []string{"", "METRIC", "STAT", "CHANGE", "VERDICT"}
	}
	rows := [][]string{head}
	for _, i := range order {
		e := r.Metrics[i]
		mark := ""
		if e.Verdict == Regressed {
			mark = "!"
		}
		name := e.Tag
		if level >= levelShortNames {
			name = shortTags[e.Tag]
		}
		if e.Unit != "" && level < levelNoUnits {
			name += " (" + e.Unit + ")"
		}
		change := formatChange(e, level < levelNoInterval)
		verdict := e.Verdict
		if e.Better == "" && e.Tag != ErrorRateTag && level < levelNoUnits {
			verdict += " (workload)"
		}
		if level >= levelNoValues {
			rows = append(rows, []string{mark, name, e.Stat, change, verdict})
			continue
		}
		rows = append(rows, []string{mark, name, e.Stat, formatNum(float64(e.Base)), formatNum(float64(e.New)), change, verdict})
	}
	return rows
}

// formatChange writes the relative change in percent with its interval,
// or the absolute change in points for the error rate (or a zero base).
func formatChange(e Entry, interval bool) string {
	rel, lo, hi := float64(e.ChangeRel), float64(e.CIRelLow), float64(e.CIRelHigh)
	unit, scale := "%", 100.0
	if e.Tag == ErrorRateTag || math.IsNaN(rel) {
		rel, lo, hi = float64(e.ChangeAbs), float64(e.CIAbsLow), float64(e.CIAbsHigh)
		unit, scale = "", 1
		if e.Tag == ErrorRateTag {
			unit = "pp"
		}
	}
	if math.IsNaN(rel) {
		return "-"
	}
	s := fmt.Sprintf("%+.1f%s", scale*rel, unit)
	if interval && !math.IsNaN(lo) && !math.IsNaN(hi) {
		s += fmt.Sprintf(" [%+.1f, %+.1f]", scale*lo, scale*hi)
	}
	return s
}

// formatNum writes a value with about four significant digits.
func formatNum(x float64) string {
	a := math.Abs(x)
	switch {
	case math.IsNaN(x):
		return "-"
	case a >= 1000 || a == math.Trunc(a) && a < 1e15:
		return strconv.FormatFloat(x, 'f', 0, 64)
	case a >= 100:
		return strconv.FormatFloat(x, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(x, 'f', 2, 64)
	}
	return strconv.FormatFloat(x, 'g', 3, 64)
}

func columnWidths(rows [][]string) []int {
	var w []int
	for _, row := range rows {
		for j, cell := range row {
			if j >= len(w) {
				w = append(w, 0)
			}
			w[j] = max(w[j], utf8.RuneCountInString(cell))
		}
	}
	return w
}

func tableWidth(rows [][]string) int {
	w := columnWidths(rows)
	total := 2 * (len(w) - 2)
	if w[0] > 0 {
		total += w[0] + 1
	}
	for _, x := range w[1:] {
		total += x
	}
	return total
}

// minWidth is the narrowest a table wraps to.
const minWidth = 20

// wrapLines wraps lines longer than width at a space (or anywhere, when
// there is none), indenting the continuations.
func wrapLines(s string, width int) string {
	width = max(width, minWidth)
	var sb strings.Builder
	for _, line := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		for r := []rune(line); len(r) > width; r = []rune(line) {
			i := width
			// Past the continuation's indent, so each pass shortens it.
			for j := width; j > 2; j-- {
				if r[j] == ' ' {
					i = j
					break
				}
			}
			sb.WriteString(strings.TrimRight(string(r[:i]), " ") + "\n")
			line = "  " + strings.TrimLeft(string(r[i:]), " ")
		}
		sb.WriteString(line + "\n")
	}
	return sb.String()
}

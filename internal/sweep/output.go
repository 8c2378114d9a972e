package sweep

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/llmbench/llmbench/internal/export"
	"github.com/llmbench/llmbench/internal/stats"
)

// MarshalJSON writes the parameters as an object, in their order.
func (p Parameters) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	render(&b, p.node(), 0)
	return b.Bytes(), nil
}

// The sweep JSON is built as a small ordered tree, then printed as
// Python's json (indent 2) prints it: key order kept, "{}" and "[]" for
// empty containers, floats in Python repr.
type (
	object []member
	member struct {
		key string
		val any // object, array, or raw (already-encoded JSON)
	}
	array []any
	raw   string
)

func render(b *bytes.Buffer, v any, depth int) {
	open, close := byte('{'), byte('}')
	var n int
	switch t := v.(type) {
	case raw:
		b.WriteString(string(t))
		return
	case object:
		n = len(t)
	case array:
		open, close, n = '[', ']', len(t)
	}
	b.WriteByte(open)
	if n == 0 {
		b.WriteByte(close)
		return
	}
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
		b.WriteString(strings.Repeat("  ", depth+1))
		switch t := v.(type) {
		case object:
			b.WriteString(string(str(t[i].key)) + ": ")
			render(b, t[i].val, depth+1)
		case array:
			render(b, t[i], depth+1)
		}
	}
	b.WriteByte('\n')
	b.WriteString(strings.Repeat("  ", depth))
	b.WriteByte(close)
}

// str is s as a JSON string, non-ASCII kept as is (as orjson writes it).
func str(s string) raw {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return raw(bytes.TrimRight(b.Bytes(), "\n"))
}

// num is f in Python repr; NaN and ±Inf, which JSON lacks, as null.
func num(f float64) raw {
	if !finite(f) {
		return "null"
	}
	return raw(pyFloat(f))
}

func integer(n int) raw { return raw(strconv.Itoa(n)) }

func value(v Value) raw {
	j, _ := v.MarshalJSON() // never fails
	return raw(j)
}

func (p Parameters) node() object {
	o := make(object, len(p))
	for i, x := range p {
		o[i] = member{x.Name, value(x.Value)}
	}
	return o
}

func (b Block) node() object {
	o := object{{"mean", num(b.Mean)}}
	if b.Bare {
		o = append(o, member{"avg", num(b.Mean)})
	}
	o = append(o, member{"std", num(b.Std)}, member{"min", num(b.Min)}, member{"max", num(b.Max)}, member{"cv", num(b.CV)},
		member{"ci_low", num(b.CILow)}, member{"ci_high", num(b.CIHigh)}, member{"unit", str(b.Unit)})
	if !b.Bare {
		return o
	}
	for i, p := range b.P {
		if finite(p) { // what the run's export does not hold is left out
			o = append(o, member{stats.PercentileNames[i], num(p)})
		}
	}
	if b.Count != nil {
		o = append(o, member{"count", integer(*b.Count)})
	}
	if b.Sum != nil {
		o = append(o, member{"sum", num(*b.Sum)})
	}
	return o
}

// SummaryJSON renders profile_export_aiperf_sweep.json: aggregation_type,
// num_profile_runs, num_successful_runs, failed_runs, metadata,
// per_combination_metrics, best_configurations and pareto_optimal, in
// that order, indented by 2; NaN and ±Inf written as null.
func SummaryJSON(s Summary) ([]byte, error) {
	failed := array{}
	for _, f := range s.FailedRuns {
		failed = append(failed, object{{"label", str(f.Label)}, {"error", str(f.Error)}})
	}
	params := array{}
	for _, p := range s.Parameters {
		vals := array{}
		for _, v := range p.Values {
			vals = append(vals, value(v))
		}
		params = append(params, object{{"name", str(p.Name)}, {"values", vals}})
	}
	meta := object{
		{"sweep_parameters", params},
		{"num_combinations", integer(s.NumCombinations)},
		{"aggregation_type", str("sweep")},
		{"sweep_mode", str(s.Mode)},
		{"confidence_level", num(s.ConfidenceLevel)},
		{"num_trials_per_value", integer(s.TrialsPerValue)},
	}
	if a := s.ParetoAxes; a != nil {
		keys := array{}
		for _, k := range a.SeriesKeys {
			keys = append(keys, str(k))
		}
		meta = append(meta, member{"pareto_axes", object{
			{"x_metric", str(a.XMetric)}, {"x_stat", str(a.XStat)}, {"x_minimize", raw(strconv.FormatBool(a.XMinimize))},
			{"y_metric", str(a.YMetric)}, {"y_stat", str(a.YStat)}, {"y_maximize", raw(strconv.FormatBool(a.YMaximize))},
			{"series_keys", keys},
		}})
	}
	if c := s.SLA; c != nil {
		filters := array{}
		for _, f := range c.Filters {
			filters = append(filters, object{{"metric_tag", str(f.Tag)}, {"stat", str(f.Stat)}, {"op", str(string(f.Op))}, {"threshold", num(f.Threshold)}})
		}
		meta = append(meta, member{"sla_constraints", object{
			{"active_filters", filters}, {"feasible_count", integer(c.Feasible)}, {"infeasible_count", integer(c.Infeasible)},
		}})
	}
	cells := array{}
	for _, c := range s.Cells {
		if c.Metrics == nil {
			continue
		}
		ms := object{}
		for _, b := range c.Metrics {
			ms = append(ms, member{b.Key, b.node()})
		}
		cells = append(cells, object{{"parameters", c.Params.node()}, {"metrics", ms}})
	}
	best := object{}
	for _, b := range s.Best {
		best = append(best, member{b.Key, object{{"parameters", b.Params.node()}, {"metric", num(b.Metric)}, {"unit", str(b.Unit)}}})
	}
	front := array{}
	for _, p := range s.Pareto {
		front = append(front, p.node())
	}
	var b bytes.Buffer
	render(&b, object{
		{"aggregation_type", str("sweep")},
		{"num_profile_runs", integer(s.NumRuns)},
		{"num_successful_runs", integer(s.NumSuccessful)},
		{"failed_runs", failed},
		{"metadata", meta},
		{"per_combination_metrics", cells},
		{"best_configurations", best},
		{"pareto_optimal", front},
	}, 0)
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// csvNum is a CSV number as AIPerf's sweep exporter writes it: fixed
// decimals; NaN and ±Inf empty.
func csvNum(v float64, decimals int) string {
	if !finite(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', decimals, 64)
}

func csvRow(b *bytes.Buffer, fields ...string) {
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(export.CSVField(f))
	}
	b.WriteByte('\n')
}

// paramFields are a cell's values in the columns of names ("" for none).
func paramFields(p Parameters, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		for _, x := range p {
			if x.Name == n {
				out[i] = x.Value.String()
			}
		}
	}
	return out
}

// SummaryCSV renders profile_export_aiperf_sweep.csv: four sections
// separated by an empty row. The per-cell table (parameter columns, then
// <key>_mean,_std,_min,_max,_cv for every metric key of any cell, sorted;
// floats with 2 decimals, cv with 4, no value empty); Best Configurations;
// Pareto Optimal Points ("None" when empty); Metadata. Rows end in "\n",
// as llmbench's other CSVs do.
func SummaryCSV(s Summary) []byte {
	var b bytes.Buffer
	names := make([]string, len(s.Parameters))
	for i, p := range s.Parameters {
		names[i] = p.Name
	}
	var keys []string
	seen := map[string]bool{}
	usable := false
	for _, c := range s.Cells {
		usable = usable || c.Metrics != nil
		for _, m := range c.Metrics {
			if !seen[m.Key] {
				seen[m.Key] = true
				keys = append(keys, m.Key)
			}
		}
	}
	if usable {
		header := append([]string(nil), names...)
		slices.Sort(keys)
		for _, k := range keys {
			header = append(header, k+"_mean", k+"_std", k+"_min", k+"_max", k+"_cv")
		}
		csvRow(&b, header...)
		for _, c := range s.Cells {
			if c.Metrics == nil {
				continue
			}
			row := paramFields(c.Params, names)
			for _, k := range keys {
				m, ok := c.block(k)
				if !ok {
					row = append(row, "", "", "", "", "")
					continue
				}
				row = append(row, csvNum(m.Mean, 2), csvNum(m.Std, 2), csvNum(m.Min, 2), csvNum(m.Max, 2), csvNum(m.CV, 4))
			}
			csvRow(&b, row...)
		}
	}
	b.WriteByte('\n')
	csvRow(&b, "Best Configurations")
	if len(s.Best) > 0 {
		csvRow(&b, append(append([]string{"Configuration"}, names...), "Metric", "Unit")...)
		for _, x := range s.Best {
			row := append([]string{title(x.Key)}, paramFields(x.Params, names)...)
			csvRow(&b, append(row, csvNum(x.Metric, 2), x.Unit)...)
		}
	}
	b.WriteByte('\n')
	csvRow(&b, "Pareto Optimal Points")
	if len(s.Pareto) == 0 {
		csvRow(&b, "None")
	} else {
		csvRow(&b, names...)
		for _, p := range s.Pareto {
			csvRow(&b, paramFields(p, names)...)
		}
	}
	b.WriteByte('\n')
	csvRow(&b, "Metadata")
	csvRow(&b, "Field", "Value")
	csvRow(&b, "Aggregation Type", "sweep")
	csvRow(&b, "Sweep Parameters", strings.Join(names, ", "))
	csvRow(&b, "Number of Combinations", strconv.Itoa(s.NumCombinations))
	csvRow(&b, "Number of Profile Runs", strconv.Itoa(s.NumRuns))
	csvRow(&b, "Number of Successful Runs", strconv.Itoa(s.NumSuccessful))
	return b.Bytes()
}

// title is Python's key.replace("_", " ").title(): "best_latency_p99"
// -> "Best Latency P99".
func title(key string) string {
	words := strings.Split(key, "_")
	for i, w := range words {
		if w != "" {
			words[i] = strings.ToUpper(w[:1]) + strings.ToLower(w[1:])
		}
	}
	return strings.Join(words, " ")
}

// tableMetrics are the table's metric columns: tag and statistic.
var tableMetrics = [][2]string{
	{"output_token_throughput", "avg"},
	{"time_to_first_token", "p99"},
	{"inter_token_latency", "p99"},
	{"request_latency", "p95"},
}

// Table renders the per-cell console table AIPerf re-prints after each
// cell: one column per swept dotted path (sorted), output_token_throughput
// (avg), time_to_first_token (p99), inter_token_latency (p99),
// request_latency (p95), trials, and, when the recipe declares Pareto
// axes, "pareto" with "*" on the rows no other row dominates. Values with
// 2 decimals, none blank; columns right-aligned. With width > 0, long
// headers wrap over several lines to keep the table within width where
// the values allow. Cells with several trials show their flat keys'
// means, where AIPerf leaves them blank (llmbench's choice: the values exist).
func Table(s Summary, width int) string {
	var headers []string
	for _, p := range s.Paths {
		// The console names a path without the prefix every path of its
		// kind shares (the files keep it whole).
		headers = append(headers, strings.TrimPrefix(strings.TrimPrefix(p, "phases.profiling."), "datasets.main."))
	}
	for _, m := range tableMetrics {
		headers = append(headers, m[0]+" "+m[1])
	}
	headers = append(headers, "trials")
	marks := paretoMarks(s)
	if s.ParetoAxes != nil {
		headers = append(headers, "pareto")
	}
	rows := make([][]string, len(s.Cells))
	for i, c := range s.Cells {
		vals := map[string]string{}
		for _, a := range c.Cell.Assign {
			vals[a.Path] = a.Value.String()
		}
		var row []string
		for _, p := range s.Paths {
			row = append(row, vals[p])
		}
		for _, m := range tableMetrics {
			cell := ""
			if v, _, ok := c.Stat(m[0], m[1]); ok {
				cell = strconv.FormatFloat(v, 'f', 2, 64)
			}
			row = append(row, cell)
		}
		row = append(row, strconv.Itoa(c.Trials))
		if s.ParetoAxes != nil {
			mark := ""
			if marks[i] {
				mark = "*"
			}
			row = append(row, mark)
		}
		rows[i] = row
	}

	const gap = 2
	n := len(headers)
	// floor is a column's longest value and header word (the parts
	// between "_", "." and blanks), values its longest value (at least 6).
	widths, floor, values := make([]int, n), make([]int, n), make([]int, n)
	for j, h := range headers {
		values[j] = 6
		for _, r := range rows {
			values[j] = max(values[j], utf8.RuneCountInString(r[j]))
		}
		floor[j] = max(values[j], longestWord(h))
		widths[j] = max(floor[j], utf8.RuneCountInString(h))
	}
	total := func() int {
		t := gap * (n - 1)
		for _, w := range widths {
			t += w
		}
		return t
	}
	// Narrow the column whose header overhangs its floor the most: first
	// down to whole words, then, if the table still does not fit, down to
	// its values (at least 6 runes), breaking words.
	for _, floors := range [][]int{floor, values} {
		for width > 0 && total() > width {
			k, slack := -1, 0
			for j := range widths {
				if sl := widths[j] - floors[j]; sl > slack {
					k, slack = j, sl
				}
			}
			if k < 0 {
				break
			}
			widths[k]--
		}
	}

	wrapped := make([][]string, n)
	lines := 1
	for j, h := range headers {
		wrapped[j] = wrap(h, widths[j])
		lines = max(lines, len(wrapped[j]))
	}
	var b strings.Builder
	line := func(cells []string, center map[int]bool) {
		var l strings.Builder
		for j, c := range cells {
			if j > 0 {
				l.WriteString(strings.Repeat(" ", gap))
			}
			pad := widths[j] - utf8.RuneCountInString(c)
			left := pad
			if center[j] {
				left = pad / 2
			}
			l.WriteString(strings.Repeat(" ", left) + c + strings.Repeat(" ", pad-left))
		}
		b.WriteString(strings.TrimRight(l.String(), " ") + "\n")
	}
	center := map[int]bool{}
	if s.ParetoAxes != nil {
		center[n-1] = true
	}
	for i := range lines {
		cells := make([]string, n)
		for j := range wrapped {
			// Bottom-align wrapped headers, so the last line sits on the rule.
			if k := i - (lines - len(wrapped[j])); k >= 0 {
				cells[j] = wrapped[j][k]
			}
		}
		line(cells, center)
	}
	b.WriteString(strings.Repeat("━", total()) + "\n")
	for _, r := range rows {
		line(r, center)
	}
	return b.String()
}

// longestWord is the length of the longest run of h between "_", "."
// and blanks, each counted with its trailing separator but a blank.
func longestWord(h string) int {
	longest, n := 1, 0
	for _, r := range h {
		switch r {
		case ' ':
			n = 0
		case '_', '.':
			longest = max(longest, n+1)
			n = 0
			continue
		default:
			n++
		}
		longest = max(longest, n)
	}
	return longest
}

// wrap splits a header into lines of at most w runes, at a blank or
// after a "_" or "." where it can.
func wrap(h string, w int) []string {
	r := []rune(h)
	var out []string
	for len(r) > w {
		cut, next := w, w
		for i := w; i > 0; i-- {
			if i < len(r) && r[i] == ' ' {
				cut, next = i, i+1 // the blank ends the line, unprinted
				break
			}
			if i < w && (r[i] == '_' || r[i] == '.') {
				cut, next = i+1, i+1
				break
			}
		}
		out = append(out, string(r[:cut]))
		r = r[next:]
	}
	return append(out, string(r))
}

// paretoMarks marks the table rows on the front of the recipe's axes: a
// row is marked when it has both values and no row with both is no worse
// on each axis and strictly better on one. An axis value is the cell's
// statistic, else the swept value of that name.
func paretoMarks(s Summary) []bool {
	marks := make([]bool, len(s.Cells))
	a := s.ParetoAxes
	if a == nil {
		return marks
	}
	axis := func(c CellResult, metric, stat string) (float64, bool) {
		if v, _, ok := c.Stat(metric, stat); ok {
			return v, true
		}
		for _, x := range c.Cell.Assign {
			if x.Path == metric && finite(x.Value.F) {
				return x.Value.F, true
			}
		}
		return math.NaN(), false
	}
	type pt struct {
		x, y float64
		ok   bool
	}
	pts := make([]pt, len(s.Cells))
	for i, c := range s.Cells {
		x, okx := axis(c, a.XMetric, a.XStat)
		y, oky := axis(c, a.YMetric, a.YStat)
		pts[i] = pt{x, y, okx && oky}
	}
	// noWorse and better orient both axes so that less is better.
	orient := func(v float64, minimize bool) float64 {
		if minimize {
			return v
		}
		return -v
	}
	for i, p := range pts {
		if !p.ok {
			continue
		}
		px, py := orient(p.x, a.XMinimize), orient(p.y, !a.YMaximize)
		marks[i] = true
		for j, q := range pts {
			if i == j || !q.ok {
				continue
			}
			qx, qy := orient(q.x, a.XMinimize), orient(q.y, !a.YMaximize)
			if qx <= px && qy <= py && (qx < px || qy < py) {
				marks[i] = false
				break
			}
		}
	}
	return marks
}

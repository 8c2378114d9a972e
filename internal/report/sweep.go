package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/llmbench/llmbench/internal/chart"
	"github.com/llmbench/llmbench/internal/sla"
)

// label names a cell on a chart: its value when one parameter is swept,
// else name=value for each.
func (d *sweepData) label(c *sweepCell) string {
	if len(d.params) == 1 {
		return c.text[d.params[0]]
	}
	var parts []string
	for _, p := range d.params {
		parts = append(parts, p+"="+c.text[p])
	}
	return strings.Join(parts, ", ")
}

// group names a cell's values of the parameters other than the primary
// one ("" when only one is swept).
func (d *sweepData) group(c *sweepCell) string {
	var parts []string
	for _, p := range d.params {
		if p != d.primary {
			parts = append(parts, p+"="+c.text[p])
		}
	}
	return strings.Join(parts, ", ")
}

// Sweep is the page of a sweep or recipe folder: its cells, the
// throughput–latency trade-off with the Pareto frontier, latency and
// throughput against the swept parameter, and a ramp's knee.
func Sweep(dir, generator string) (*Page, error) {
	d, err := loadSweep(dir)
	if err != nil {
		return nil, fmt.Errorf("sweep report: %w", err)
	}
	return sweepPage(d, generator), nil
}

func sweepPage(d *sweepData, generator string) *Page {
	p := &Page{Kind: "Sweep", Generator: generator}
	var swept []string
	for _, sp := range d.sum.Metadata.SweepParameters {
		// In order of value: a search lists its values as it probed them.
		vals := slices.Clone(sp.Values)
		slices.SortStableFunc(vals, func(a, b json.RawMessage) int {
			_, x := valueText(a)
			_, y := valueText(b)
			return cmp.Compare(x, y)
		})
		texts := make([]string, len(vals))
		for i, v := range vals {
			texts[i], _ = valueText(v)
		}
		swept = append(swept, sp.Name+" "+strings.Join(texts, ", "))
	}
	p.Title = "Sweep of " + strings.Join(swept, " × ")
	if d.run != nil {
		if m := inputConfig(d.run).models(); m != "" {
			p.Title = m + " · " + p.Title
			p.Facts = append(p.Facts, Fact{"Model", m})
		}
		p.Facts = append(p.Facts, Fact{"Endpoint", inputConfig(d.run).endpoint()})
	}
	md := d.sum.Metadata
	p.Facts = append(p.Facts, Fact{"Swept", strings.Join(swept, "; ")},
		Fact{"Cells", fmt.Sprintf("%d with results, of %d combinations", len(d.cells), md.NumCombinations)},
		Fact{"Trials per cell", strconv.Itoa(md.NumTrialsPerValue)},
		Fact{"Runs", fmt.Sprintf("%d of %d succeeded", d.sum.NumSuccessfulRuns, d.sum.NumProfileRuns)})
	if md.NumTrialsPerValue > 1 {
		p.Facts = append(p.Facts, Fact{"Confidence level", strconv.FormatFloat(md.ConfidenceLevel*100, 'f', -1, 64) + "%"})
	}
	if len(d.filters) > 0 {
		fs := make([]string, len(d.filters))
		for i, f := range d.filters {
			fs[i] = f.String()
		}
		p.Facts = append(p.Facts, Fact{"SLA", strings.Join(fs, ", ")})
	}
	p.Facts = append(p.Facts, Fact{"Folder", d.dir})
	for _, f := range d.sum.FailedRuns {
		p.Warnings = append(p.Warnings, fmt.Sprintf("Run %s failed: %s. It is left out of its cell.", f.Label, f.Error))
	}
	if len(d.cells) == 0 {
		p.Warnings = append(p.Warnings, "No cell produced results.")
	}
	p.Sections = append(p.Sections, sweepTableSection(d))
	if s, ok := tradeoffSection(d); ok {
		p.Sections = append(p.Sections, s)
	}
	if s, ok := loadSection(d); ok {
		p.Sections = append(p.Sections, s)
	}
	if s, fact, ok := kneeSection(d); ok {
		p.Sections = append(p.Sections, s)
		p.Facts = slices.Insert(p.Facts, len(p.Facts)-1, fact) // before the folder
	}
	if d.run != nil {
		s := configSection(d.run)
		name, err := filepath.Rel(d.dir, d.run.Dir)
		if err != nil {
			name = d.run.Dir
		}
		s.Title = "Configuration of " + filepath.ToSlash(name)
		p.Sections = append(p.Sections, s)
	}
	return p
}

// sweepColumns are the cells table's metrics, shown when a cell has them.
var sweepColumns = []struct{ tag, stat, name string }{
	{"output_token_throughput", "avg", "Output token throughput"},
	{"request_throughput", "avg", "Request throughput"},
	{"output_token_throughput_per_user", "avg", "Output token throughput per user"},
	{"time_to_first_token", "p50", "TTFT p50"},
	{"time_to_first_token", "p95", "TTFT p95"},
	{"time_to_first_token", "p99", "TTFT p99"},
	{"inter_token_latency", "avg", "ITL avg"},
	{"request_latency", "p50", "Latency p50"},
	{"request_latency", "p99", "Latency p99"},
}

func sweepTableSection(d *sweepData) Section {
	s := Section{ID: "summary", Title: "Cells",
		Intro: "One row per cell, in order of its parameters: the mean over a cell's trials (a single-trial cell shows its run's own values). Best and Pareto-optimal are the sweep aggregate's: highest request throughput, lowest TTFT p99 (request latency p99 without streaming), and the cells no other beats on both."}
	t := Table{ID: "sweep-cells", Header: slices.Clone(d.params)}
	type column struct {
		tag, stat string
		filter    *sla.Filter
	}
	var cols []column
	for _, sc := range sweepColumns {
		unit, has := "", false
		for i := range d.cells {
			if st := d.cells[i].stat(sc.tag, sc.stat); st.ok {
				unit, has = st.unit, true
				break
			}
		}
		if has {
			cols = append(cols, column{tag: sc.tag, stat: sc.stat})
			t.Header = append(t.Header, withUnit(sc.name, unit))
		}
	}
	for i := range d.filters {
		f := d.filters[i]
		cols = append(cols, column{tag: f.Tag, stat: f.Stat, filter: &f})
		t.Header = append(t.Header, fmt.Sprintf("%s %s (SLA: %s %g)", f.Tag, f.Stat, f.Op, f.Threshold))
	}
	t.Header = append(t.Header, "Best", "Pareto-optimal")
	if len(d.filters) > 0 {
		t.Header = append(t.Header, "SLA")
	}
	for i := range d.cells {
		c := &d.cells[i]
		id := fmt.Sprintf("cell-%d-", i)
		var row []Cell
		for _, p := range d.params {
			row = append(row, Cell{Text: c.text[p], ID: id + p})
		}
		for _, col := range cols {
			if col.filter != nil {
				v := c.slaValue(*col.filter)
				class := "bad"
				if col.filter.Holds(v) {
					class = "good"
				}
				row = append(row, Cell{Text: number(v, !math.IsNaN(v)), ID: id + "sla-" + col.filter.Key(), Class: class})
				continue
			}
			st := c.stat(col.tag, col.stat)
			row = append(row, Cell{Text: number(st.v, st.ok), ID: id + col.tag + "_" + col.stat})
		}
		pareto := ""
		if c.pareto {
			pareto = "yes"
		}
		row = append(row, Cell{Text: strings.Join(c.best, ", "), ID: id + "best", Class: "text"}, Cell{Text: pareto, ID: id + "pareto"})
		if len(d.filters) > 0 {
			verdict, class := "pass", "good"
			for _, f := range d.filters {
				if !f.Holds(c.slaValue(f)) {
					verdict, class = "fail", "bad"
				}
			}
			row = append(row, Cell{Text: verdict, ID: id + "sla", Class: class})
		}
		t.Rows = append(t.Rows, row)
	}
	s.Tables = append(s.Tables, t)
	return s
}

func withUnit(name, unit string) string {
	if unit == "" {
		return name
	}
	return name + " (" + unit + ")"
}

// cellGroup is every cell's x and y statistics, labelled with its
// parameters.
func (d *sweepData) cellGroup(x, y func(*sweepCell) float64) []pointGroup {
	g := pointGroup{name: "Cells"}
	for i := range d.cells {
		c := &d.cells[i]
		g.x, g.y, g.labels = append(g.x, x(c)), append(g.y, y(c)), append(g.labels, d.label(c))
	}
	return []pointGroup{g}
}

func cellValue(tag, st string) func(*sweepCell) float64 {
	return func(c *sweepCell) float64 { return c.stat(tag, st).v }
}

// tradeoffSection draws output throughput against TTFT p95 and against
// throughput per user, every cell labelled and the Pareto frontier (the
// plot rule) joined; and AIPerf's per-GPU curves when the runs had GPU
// telemetry.
func tradeoffSection(d *sweepData) (Section, bool) {
	s := Section{ID: "tradeoff", Title: "Throughput and latency",
		Intro: "One point per cell, labelled with its parameters. The line joins the Pareto frontier: the cells no other beats on both axes (AIPerf's plot rule; ties stay)."}
	tput := cellValue("output_token_throughput", "avg")
	yAxis := chart.Axis{Label: "Output tokens/s (avg)"}
	// Without streaming there is no TTFT: request latency stands in.
	xTag, xName, id := "time_to_first_token", "TTFT", "pareto_throughput_vs_ttft_p95"
	if !slices.ContainsFunc(d.cells, func(c sweepCell) bool { return c.stat(xTag, "p95").ok }) {
		xTag, xName, id = "request_latency", "request latency", "pareto_throughput_vs_latency_p95"
	}
	if c, ok := paretoChart(id, "Output throughput against "+xName+" p95",
		chart.Axis{Label: strings.ToUpper(xName[:1]) + xName[1:] + " p95 (ms)"}, yAxis, d.cellGroup(cellValue(xTag, "p95"), tput), true, true); ok {
		s.Charts = append(s.Charts, c)
	}
	if c, ok := paretoChart("pareto_throughput_vs_interactivity", "Output throughput against output throughput per user",
		chart.Axis{Label: "Output tokens/s per user (avg)"}, yAxis,
		d.cellGroup(cellValue("output_token_throughput_per_user", "avg"), tput), false, true); ok {
		s.Charts = append(s.Charts, c)
	}
	if d.gpus > 0 {
		perGPU := func(c *sweepCell) float64 { return tput(c) / float64(d.gpus) }
		yGPU := chart.Axis{Label: "Output tokens/s per GPU (avg)"}
		if c, ok := paretoChart("pareto_curve_throughput_per_gpu_vs_latency", "Output throughput per GPU against request latency",
			chart.Axis{Label: "Request latency avg (ms)"}, yGPU, d.cellGroup(cellValue("request_latency", "avg"), perGPU), true, true); ok {
			c.Note = fmt.Sprintf("Per GPU: divided by the %d GPUs of the first cell's telemetry.", d.gpus)
			s.Charts = append(s.Charts, c)
		}
		if c, ok := paretoChart("pareto_curve_throughput_per_gpu_vs_interactivity", "Output throughput per GPU against output throughput per user",
			chart.Axis{Label: "Output tokens/s per user (avg)"}, yGPU,
			d.cellGroup(cellValue("output_token_throughput_per_user", "avg"), perGPU), false, true); ok {
			c.Note = fmt.Sprintf("Per GPU: divided by the %d GPUs of the first cell's telemetry.", d.gpus)
			s.Charts = append(s.Charts, c)
		}
	}
	return s, len(s.Charts) > 0
}

// logSpan says whether values are better drawn on a log axis: all
// positive and spanning more than 20×.
func logSpan(xs []float64) bool {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range xs {
		if !math.IsNaN(x) {
			lo, hi = min(lo, x), max(hi, x)
		}
	}
	return lo > 0 && hi/lo > 20
}

// snake makes a chart id part of a parameter name.
func snake(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return '_'
	}, s)
}

// loadSeries is a statistic against the primary parameter, one series per
// group of the other parameters, with the confidence band where cells
// have one.
func (d *sweepData) loadSeries(tag, st, label string, right bool) []chart.Series {
	var out []chart.Series
	index := map[string]int{}
	for i := range d.cells {
		c := &d.cells[i]
		g := d.group(c)
		k, ok := index[g]
		if !ok {
			k = len(out)
			index[g] = k
			l := label
			if g != "" {
				l += " · " + g
			}
			out = append(out, chart.Series{Label: l, Style: chart.LinePoints, Right: right})
		}
		v := c.stat(tag, st)
		se := &out[k]
		se.X, se.Y = append(se.X, c.num[d.primary]), append(se.Y, v.v)
		se.Low, se.High = append(se.Low, v.lo), append(se.High, v.hi)
	}
	has := func(xs []float64) bool {
		return slices.ContainsFunc(xs, func(x float64) bool { return !math.IsNaN(x) })
	}
	kept := out[:0]
	for _, se := range out {
		if !has(se.Low) {
			se.Low, se.High = nil, nil
		}
		if has(se.Y) {
			kept = append(kept, se)
		}
	}
	return kept
}

// loadSection draws TTFT and request latency (p50, p99) and throughput
// against the swept parameter, with each cell's confidence band.
func loadSection(d *sweepData) (Section, bool) {
	s := Section{ID: "load", Title: "Against " + d.primary,
		Intro: "Each cell's mean; the shaded bands are the confidence intervals of cells with several trials."}
	var xs []float64
	for _, c := range d.cells {
		xs = append(xs, c.num[d.primary])
	}
	if !slices.ContainsFunc(xs, func(x float64) bool { return !math.IsNaN(x) }) {
		return s, false
	}
	xAxis := chart.Axis{Label: d.primary, Log: logSpan(xs)}
	unit := func(tag string) string {
		for i := range d.cells {
			for _, st := range []string{"avg", "p50", "p99"} {
				if v := d.cells[i].stat(tag, st); v.ok {
					return v.unit
				}
			}
		}
		return ""
	}
	for _, m := range []requestMetric{latencyMetrics[0], latencyMetrics[2]} {
		id := "ttft_vs_" + snake(d.primary)
		if m.Tag == "request_latency" {
			id = "request_latency_vs_" + snake(d.primary)
		}
		c := chart.Chart{ID: id, Title: m.Name + " against " + d.primary, X: xAxis, Y: chart.Axis{Label: withUnit(m.Short, unit(m.Tag))}}
		for _, st := range []string{"p50", "p99"} {
			c.Series = append(c.Series, d.loadSeries(m.Tag, st, st, false)...)
		}
		if !c.Empty() {
			s.Charts = append(s.Charts, c)
		}
	}
	c := chart.Chart{ID: "throughput_vs_" + snake(d.primary), Title: "Throughput against " + d.primary, X: xAxis,
		Y: chart.Axis{Label: withUnit("Output token throughput", unit("output_token_throughput"))}, Y2: &chart.Axis{Label: withUnit("Request throughput", unit("request_throughput"))}}
	c.Series = append(d.loadSeries("output_token_throughput", "avg", "Output tokens/s", false), d.loadSeries("request_throughput", "avg", "Requests/s", true)...)
	if !c.Empty() {
		s.Charts = append(s.Charts, c)
	}
	return s, len(s.Charts) > 0
}

// kneeSection draws a concurrency ramp's degradation_knee.json: the
// swept statistic per concurrency, the cutoff (baseline × (1 +
// threshold)) and the knee, the first point above it.
func kneeSection(d *sweepData) (Section, Fact, bool) {
	b, err := os.ReadFile(filepath.Join(d.aggDir, "degradation_knee.json"))
	var raw map[string]json.RawMessage
	if err != nil || json.Unmarshal(b, &raw) != nil {
		return Section{}, Fact{}, false
	}
	str := func(k string) string { var s string; _ = json.Unmarshal(orNull(raw[k]), &s); return s }
	num := func(k string) (float64, bool) {
		var f *float64
		if json.Unmarshal(orNull(raw[k]), &f) != nil || f == nil {
			return math.NaN(), false
		}
		return *f, true
	}
	metric, st := str("swept_metric"), str("stat")
	var points []map[string]*float64
	_ = json.Unmarshal(orNull(raw["all_points"]), &points)
	series := chart.Series{Label: metric + " " + st, Style: chart.LinePoints}
	for _, pt := range points {
		if x, y := pt["concurrency"], pt[st]; x != nil {
			yv := math.NaN()
			if y != nil {
				yv = *y
			}
			series.X, series.Y = append(series.X, *x), append(series.Y, yv)
		}
	}
	if len(series.X) == 0 {
		return Section{}, Fact{}, false
	}
	threshold, _ := num("threshold_pct")
	c := chart.Chart{ID: "degradation_knee", Title: fmt.Sprintf("Degradation knee: %s %s against concurrency", metric, st),
		X: chart.Axis{Label: "Concurrency", Log: logSpan(series.X)}, Y: chart.Axis{Label: metric + " " + st}, Series: []chart.Series{series}}
	s := Section{ID: "knee", Title: "Degradation knee"}
	if base, ok := num("baseline_" + st); ok {
		cut := base * (1 + threshold)
		c.Series = append(c.Series, chart.Series{Label: fmt.Sprintf("Cutoff: baseline + %g%%", threshold*100), Style: chart.Dashed,
			X: []float64{slices.Min(series.X), slices.Max(series.X)}, Y: []float64{cut, cut}})
	}
	fact := Fact{"Knee", fmt.Sprintf("none: %s %s stayed within %g%% of the lowest concurrency's", metric, st, threshold*100)}
	kx, okx := num("knee_concurrency")
	ky, oky := num("knee_" + st)
	if okx && oky {
		c.Series = append(c.Series, chart.Series{Label: "Knee", Style: chart.Points, X: []float64{kx}, Y: []float64{ky}, PointLabels: []string{"knee"}, Color: "#d62728"})
		fact.Value = fmt.Sprintf("concurrency %g (%s %s %s, over %g%% above the baseline)", kx, metric, st, number(ky, true), threshold*100)
	}
	s.Intro = "The knee is the first concurrency whose " + metric + " " + st + " exceeds the lowest concurrency's by more than the threshold: " + fact.Value + "."
	s.Charts = append(s.Charts, c)
	return s, fact, true
}

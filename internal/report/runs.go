package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/llmbench/llmbench/internal/artifacts"
	"github.com/llmbench/llmbench/internal/chart"
)

// groupColors colour a chart's groups, a group's points and its frontier
// alike (report.js would otherwise give each series the next colour).
var groupColors = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"}

// runColumns are the metrics of the runs' table: tag, statistic, heading.
var runColumns = []struct{ tag, stat, name string }{
	{"request_throughput", "avg", "Request throughput"},
	{"output_token_throughput", "avg", "Output token throughput"},
	{"output_token_throughput_per_user", "avg", "Output token throughput per user"},
	{"time_to_first_token", "avg", "TTFT avg"},
	{"time_to_first_token", "p95", "TTFT p95"},
	{"inter_token_latency", "avg", "ITL avg"},
	{"request_latency", "avg", "Latency avg"},
	{"request_latency", "p99", "Latency p99"},
}

// Runs is the page of several unrelated runs set side by side (what
// `llmbench plot DIR1 DIR2 …` draws, and AIPerf's multi-run plot mode):
// a table of the runs, AIPerf's multi-run charts, and each run's
// distributions overlaid.
func Runs(runs []*artifacts.Run, generator string) *Page {
	p := &Page{Kind: "Runs side by side", Generator: generator, Title: fmt.Sprintf("%d runs side by side", len(runs))}
	names := runNames(runs)
	models := []string{}
	for _, r := range runs {
		if m := inputConfig(r).models(); m != "" && !slices.Contains(models, m) {
			models = append(models, m)
		}
	}
	if len(models) > 0 {
		p.Title = strings.Join(models, " vs ") + " · " + p.Title
		p.Facts = append(p.Facts, Fact{"Models", strings.Join(models, "; ")})
	}
	p.Facts = append(p.Facts, Fact{"Runs", strings.Join(names, ", ")})
	for i, r := range runs {
		for _, w := range runWarnings(r) {
			p.Warnings = append(p.Warnings, names[i]+": "+w)
		}
	}
	p.Sections = append(p.Sections, runsTableSection(runs, names))
	pts := make([]runPoint, len(runs))
	for i, r := range runs {
		pts[i] = newRunPoint(r, names[i])
	}
	if s, ok := runsChartsSection(pts); ok {
		p.Sections = append(p.Sections, s)
	}
	if s, ok := perRunCDFs(runs, names); ok {
		p.Sections = append(p.Sections, s)
	}
	return p
}

// runNames names each run by its folder, with as many parent folders as
// make the names unique.
func runNames(runs []*artifacts.Run) []string {
	names := make([]string, len(runs))
	for depth := 1; depth <= 8; depth++ {
		seen := map[string]bool{}
		unique := true
		for i, r := range runs {
			parts := strings.Split(filepath.ToSlash(filepath.Clean(r.Dir)), "/")
			names[i] = strings.Join(parts[max(0, len(parts)-depth):], "/")
			unique = unique && !seen[names[i]]
			seen[names[i]] = true
		}
		if unique {
			break
		}
	}
	return names
}

// runPoint is one run as the multi-run charts see it.
type runPoint struct {
	r           *artifacts.Run
	name, model string
	// label marks the run's point: its concurrency, else its request rate,
	// else its name.
	label string
	gpus  int
}

func newRunPoint(r *artifacts.Run, name string) runPoint {
	cfg := inputConfig(r)
	p := runPoint{r: r, name: name, model: cfg.models(), label: name, gpus: gpuCount(r.Export)}
	if c := loadValue(cfg, "concurrency"); c > 0 {
		p.label = strconv.FormatFloat(c, 'f', -1, 64)
	} else if rate := loadValue(cfg, "request_rate"); rate > 0 {
		p.label = strconv.FormatFloat(rate, 'f', -1, 64) + " req/s"
	}
	return p
}

// loadValue is a load setting of llmbench's and older AIPerf's loadgen,
// or of the newest AIPerf's profiling phase.
func loadValue(cfg runConfig, key string) float64 {
	return max(cfg.num("loadgen", key), cfg.num("phases", "profiling", key))
}

// stat is a statistic of the run's export, NaN when it has none.
func (p runPoint) stat(tag, stat string) float64 {
	if v, ok := p.r.Stat(tag, stat); ok {
		return v
	}
	return math.NaN()
}

// gpuCount is how many GPUs a run's export saw: the entries under
// telemetry_data.endpoints.*.gpus, as AIPerf counts them for its per-GPU
// throughput; 0 without telemetry.
func gpuCount(export map[string]json.RawMessage) int {
	var td struct {
		Endpoints map[string]struct {
			GPUs map[string]json.RawMessage `json:"gpus"`
		} `json:"endpoints"`
	}
	if json.Unmarshal(orNull(export["telemetry_data"]), &td) != nil {
		return 0
	}
	n := 0
	for _, e := range td.Endpoints {
		n += len(e.GPUs)
	}
	return n
}

func runsTableSection(runs []*artifacts.Run, names []string) Section {
	s := Section{ID: "runs", Title: "Runs"}
	t := Table{ID: "runs-table", Header: []string{"Run", "Model", "Concurrency"}}
	for _, c := range runColumns {
		unit := ""
		for _, r := range runs {
			if m, ok := r.Metrics[c.tag]; ok {
				unit = m.Unit
				break
			}
		}
		h := c.name
		if unit != "" {
			h += " (" + unit + ")"
		}
		t.Header = append(t.Header, h)
	}
	t.Header = append(t.Header, "GPUs")
	for i, r := range runs {
		cfg := inputConfig(r)
		conc := "–"
		if c := loadValue(cfg, "concurrency"); c > 0 {
			conc = strconv.FormatFloat(c, 'f', -1, 64)
		}
		row := []Cell{{Text: names[i], Class: "text"}, {Text: cfg.models(), Class: "text"}, {Text: conc, ID: fmt.Sprintf("run-%d-concurrency", i)}}
		for _, c := range runColumns {
			v, ok := r.Stat(c.tag, c.stat)
			row = append(row, Cell{Text: number(v, ok), ID: fmt.Sprintf("run-%d-%s-%s", i, c.tag, c.stat)})
		}
		gpus := "–"
		if n := gpuCount(r.Export); n > 0 {
			gpus = strconv.Itoa(n)
		}
		t.Rows = append(t.Rows, append(row, Cell{Text: gpus, ID: fmt.Sprintf("run-%d-gpus", i)}))
	}
	s.Tables = append(s.Tables, t)
	return s
}

// runsChartsSection draws AIPerf's multi-run charts: TTFT against
// request throughput, the per-GPU Pareto curves when the runs had GPU
// telemetry, and output throughput against TTFT p95 without it.
func runsChartsSection(pts []runPoint) (Section, bool) {
	s := Section{ID: "comparison", Title: "Throughput and latency",
		Intro: "One point per run, labelled with its concurrency; runs of one model are joined. A Pareto frontier joins the runs no other run of the model beats on both axes (AIPerf's plot rule: ties stay)."}
	groups := func(x, y func(runPoint) float64, keep func(runPoint) bool) []pointGroup {
		var out []pointGroup
		for _, p := range pts {
			if !keep(p) {
				continue
			}
			name := p.model
			if name == "" {
				name = "Runs"
			}
			k := slices.IndexFunc(out, func(g pointGroup) bool { return g.name == name })
			if k < 0 {
				out = append(out, pointGroup{name: name})
				k = len(out) - 1
			}
			g := &out[k]
			g.x, g.y, g.labels = append(g.x, x(p)), append(g.y, y(p)), append(g.labels, p.label)
		}
		return out
	}
	all := func(runPoint) bool { return true }
	stat := func(tag, st string) func(runPoint) float64 {
		return func(p runPoint) float64 { return p.stat(tag, st) }
	}

	ttft := chart.Chart{ID: "ttft_vs_throughput", Title: "Time to first token against request throughput",
		X: chart.Axis{Label: "TTFT avg (ms)"}, Y: chart.Axis{Label: "Requests/s (avg)"}}
	for k, g := range groups(stat("time_to_first_token", "avg"), stat("request_throughput", "avg"), all) {
		g.sortByX()
		ttft.Series = append(ttft.Series, chart.Series{Label: g.name, Style: chart.LinePoints, X: g.x, Y: g.y, PointLabels: g.labels, Color: groupColors[k%len(groupColors)]})
	}
	if !ttft.Empty() {
		s.Charts = append(s.Charts, ttft)
	}

	perGPU := func(p runPoint) float64 { return p.stat("output_token_throughput", "avg") / float64(p.gpus) }
	hasGPUs := func(p runPoint) bool { return p.gpus > 0 }
	yGPU := chart.Axis{Label: "Output tokens/s per GPU (avg)"}
	if c, ok := paretoChart("pareto_curve_throughput_per_gpu_vs_latency", "Output throughput per GPU against request latency",
		chart.Axis{Label: "Request latency avg (ms)"}, yGPU, groups(stat("request_latency", "avg"), perGPU, hasGPUs), true, true); ok {
		s.Charts = append(s.Charts, c)
	}
	if c, ok := paretoChart("pareto_curve_throughput_per_gpu_vs_interactivity", "Output throughput per GPU against output throughput per user",
		chart.Axis{Label: "Output tokens/s per user (avg)"}, yGPU, groups(stat("output_token_throughput_per_user", "avg"), perGPU, hasGPUs), false, true); ok {
		s.Charts = append(s.Charts, c)
	}

	// Without per-GPU numbers, the same trade-off per server: output
	// throughput against TTFT p95 (avg for runs whose export has no p95).
	ttftStat := "p95"
	if !slices.ContainsFunc(pts, func(p runPoint) bool { return !math.IsNaN(p.stat("time_to_first_token", "p95")) }) {
		ttftStat = "avg"
	}
	if c, ok := paretoChart("pareto_throughput_vs_ttft_"+ttftStat, "Output throughput against time to first token "+ttftStat,
		chart.Axis{Label: "TTFT " + ttftStat + " (ms)"}, chart.Axis{Label: "Output tokens/s (avg)"},
		groups(stat("time_to_first_token", ttftStat), stat("output_token_throughput", "avg"), all), true, true); ok {
		s.Charts = append(s.Charts, c)
	}
	return s, len(s.Charts) > 0
}

// pointGroup is one group's points of a chart: one model's runs, or a
// sweep's cells.
type pointGroup struct {
	name   string
	x, y   []float64
	labels []string
}

// sortByX orders the points by x, so a joining line reads left to right.
func (g *pointGroup) sortByX() {
	idx := make([]int, len(g.x))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(g.x[a], g.x[b]) })
	x, y, l := make([]float64, len(idx)), make([]float64, len(idx)), make([]string, len(idx))
	for k, i := range idx {
		x[k], y[k], l[k] = g.x[i], g.y[i], g.labels[i]
	}
	g.x, g.y, g.labels = x, y, l
}

// paretoChart draws each group's points, labelled, and its Pareto
// frontier (chart.Frontier, AIPerf's plot rule) as a line in the same
// colour. ok is false when no point has both values.
func paretoChart(id, title string, x, y chart.Axis, groups []pointGroup, lowerXBetter, higherYBetter bool) (chart.Chart, bool) {
	c := chart.Chart{ID: id, Title: title, X: x, Y: y}
	for k, g := range groups {
		color := groupColors[k%len(groupColors)]
		c.Series = append(c.Series, chart.Series{Label: g.name, Style: chart.Points, X: g.x, Y: g.y, PointLabels: g.labels, Color: color})
		front := chart.Frontier(g.x, g.y, lowerXBetter, higherYBetter)
		fx, fy := make([]float64, len(front)), make([]float64, len(front))
		for j, i := range front {
			fx[j], fy[j] = g.x[i], g.y[i]
		}
		if len(front) > 0 {
			c.Series = append(c.Series, chart.Series{Label: g.name + " Pareto frontier", Style: chart.Line, X: fx, Y: fy, Color: color})
		}
	}
	return c, !c.Empty()
}

// cdfGroup is one curve of an overlaid distribution: the successful
// requests of one or more runs, pooled.
type cdfGroup struct {
	label, color string
	views        []*runView
}

// overlaidCDFSection sets the groups' distributions of each metric over
// each other, one curve per group; idPrefix keeps the charts' ids apart
// from a single run's.
func overlaidCDFSection(groups []cdfGroup, metrics []requestMetric, idPrefix, intro string) (Section, bool) {
	s := Section{ID: "distributions", Title: "Distributions", Intro: intro}
	for _, m := range metrics {
		c := chart.Chart{ID: idPrefix + cdfID(m.Tag), Title: m.Name + " distributions", Y: chart.Axis{Label: "Requests at or below (%)", Range: []float64{0, 100}}}
		unit := ""
		for _, g := range groups {
			var values []float64
			for _, v := range g.views {
				_, ys := v.values(m.Tag)
				values = append(values, ys...)
				for _, rec := range v.records {
					if u := rec.Units[m.Tag]; u != "" && unit == "" {
						unit = u
					}
				}
			}
			if x, y, ok := chart.CDF(values, maxCDF); ok {
				c.Series = append(c.Series, chart.Series{Label: g.label, Style: chart.Step, X: x, Y: y, Color: g.color})
			}
		}
		c.X = chart.Axis{Label: fmt.Sprintf("%s (%s)", m.Short, unit)}
		if !c.Empty() {
			s.Charts = append(s.Charts, c)
		}
	}
	return s, len(s.Charts) > 0
}

// perRunCDFs overlays the runs' distributions of TTFT and latency, one
// curve per run, labelled by names.
func perRunCDFs(runs []*artifacts.Run, names []string) (Section, bool) {
	groups := make([]cdfGroup, len(runs))
	for i, r := range runs {
		groups[i] = cdfGroup{label: names[i], views: []*runView{newRunView(r)}}
	}
	return overlaidCDFSection(groups, ttftAndLatency(), "", "The share of each run's successful requests at or below each value (empirical CDF), one curve per run.")
}

// ttftAndLatency are the metrics whose distributions several runs'
// pages overlay.
func ttftAndLatency() []requestMetric {
	return []requestMetric{latencyMetrics[0], latencyMetrics[2]}
}

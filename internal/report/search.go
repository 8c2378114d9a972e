package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/llmbench/llmbench/internal/chart"
	"github.com/llmbench/llmbench/internal/sla"
)

// searchHistory is search_history.json as internal/search (History.JSON)
// and AIPerf write it.
type searchHistory struct {
	Config struct {
		Planner    string `json:"planner"`
		Objectives []struct {
			Metric    string `json:"metric"`
			Stat      string `json:"stat"`
			Direction string `json:"direction"`
		} `json:"objectives"`
		OutcomeConstraints []struct {
			Metric string   `json:"metric"`
			Op     string   `json:"op"`
			Bound  *float64 `json:"bound"`
		} `json:"outcome_constraints"`
		SearchSpace []struct {
			Path string   `json:"path"`
			Lo   *float64 `json:"lo"`
			Hi   *float64 `json:"hi"`
			Kind string   `json:"kind"`
		} `json:"search_space"`
		SLAFilters []sla.Filter `json:"sla_filters"`
	} `json:"config"`
	Iterations []struct {
		Index        int                        `json:"iteration_idx"`
		Values       map[string]json.RawMessage `json:"variation_values"`
		Objectives   []*float64                 `json:"objective_values"`
		Feasible     bool                       `json:"feasible"`
		NonMonotonic bool                       `json:"non_monotonic_warning"`
	} `json:"iterations"`
	Boundary *struct {
		Path        string `json:"swept_dim_path"`
		FeasibleMax *struct {
			Value     *float64 `json:"value"`
			Iteration int      `json:"iteration_idx"`
			Objective *float64 `json:"objective_value"`
		} `json:"feasible_max"`
		InfeasibleMin *struct {
			Value       *float64 `json:"value"`
			Iteration   int      `json:"iteration_idx"`
			FirstBreach *struct {
				MetricTag string   `json:"metric_tag"`
				Stat      string   `json:"stat"`
				Op        string   `json:"op"`
				Threshold *float64 `json:"threshold"`
				Observed  *float64 `json:"observed"`
			} `json:"first_breach"`
		} `json:"infeasible_min"`
		BoundaryType      string `json:"boundary_type"`
		BindingConstraint string `json:"binding_constraint"`
		CI                *struct {
			Lo *float64 `json:"lo"`
			Hi *float64 `json:"hi"`
		} `json:"boundary_ci"`
		UncertainValues []float64 `json:"uncertain_values"`
		ConfidenceLevel *float64  `json:"confidence_level"`
	} `json:"boundary_summary"`
	Recipe *string `json:"recipe"`
	Reason *string `json:"convergence_reason"`
}

// path is the searched dimension: the boundary's, else the first of the
// search space, else the first probe's first value.
func (h *searchHistory) path() string {
	if h.Boundary != nil && h.Boundary.Path != "" {
		return h.Boundary.Path
	}
	if len(h.Config.SearchSpace) > 0 {
		return h.Config.SearchSpace[0].Path
	}
	for _, it := range h.Iterations {
		keys := make([]string, 0, len(it.Values))
		for k := range it.Values {
			keys = append(keys, k)
		}
		if len(keys) > 0 {
			slices.Sort(keys)
			return keys[0]
		}
	}
	return ""
}

// plain writes a searched value as it was probed: 32, not 32.00.
func plain(v float64, ok bool) string {
	if !ok || math.IsNaN(v) {
		return "–"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// Search is the page of an adaptive search folder (search_history.json):
// the sweep page of its probes, when their sweep aggregate exists, and
// the probes in order with the boundary found.
func Search(dir, generator string) (*Page, error) {
	path := filepath.Join(dir, "search_history.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("search report: %w", err)
	}
	var h searchHistory
	if err := json.Unmarshal(b, &h); err != nil {
		return nil, fmt.Errorf("search report: read %s: %w", path, err)
	}
	d, err := loadSweep(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("search report: %w", err)
	}
	var p *Page
	at := 0 // where the search's section goes: after the cells
	if d != nil {
		p = sweepPage(d, generator)
		at = 1
	} else {
		p = &Page{Generator: generator, Facts: []Fact{{"Folder", dir}},
			Warnings: []string{"The search wrote no sweep aggregate (sweep_aggregate/" + sweepSummaryFile + "): only its probes are shown."}}
	}
	p.Kind = "Search"
	dim := h.path()
	what := "search over " + dim
	if h.Recipe != nil && *h.Recipe != "" {
		what = "search: " + *h.Recipe
	}
	p.Title = what
	if d != nil && d.run != nil {
		if m := inputConfig(d.run).models(); m != "" {
			p.Title = m + " · " + what
		}
	}
	p.Facts = slices.Insert(p.Facts, len(p.Facts)-1, searchFacts(&h, p.Facts)...)
	p.Sections = slices.Insert(p.Sections, min(at, len(p.Sections)), searchSection(dir, &h, d))
	return p, nil
}

func searchFacts(h *searchHistory, have []Fact) []Fact {
	var out []Fact
	add := func(name, value string) {
		if value != "" && !slices.ContainsFunc(have, func(f Fact) bool { return f.Name == name }) {
			out = append(out, Fact{name, value})
		}
	}
	if h.Recipe != nil {
		add("Recipe", *h.Recipe)
	}
	add("Planner", h.Config.Planner)
	var objs []string
	for _, o := range h.Config.Objectives {
		objs = append(objs, strings.ToLower(o.Direction)+" "+o.Metric+" "+o.Stat)
	}
	add("Objective", strings.Join(objs, "; "))
	var space []string
	for _, s := range h.Config.SearchSpace {
		lo, okl := val(s.Lo)
		hi, okh := val(s.Hi)
		space = append(space, fmt.Sprintf("%s in [%s, %s] (%s)", s.Path, plain(lo, okl), plain(hi, okh), s.Kind))
	}
	add("Search space", strings.Join(space, "; "))
	var fs []string
	for _, f := range h.Config.SLAFilters {
		fs = append(fs, f.String())
	}
	add("SLA", strings.Join(fs, ", "))
	feasible := 0
	for _, it := range h.Iterations {
		if it.Feasible {
			feasible++
		}
	}
	add("Iterations", fmt.Sprintf("%d, %d feasible", len(h.Iterations), feasible))
	if b := h.Boundary; b != nil && b.FeasibleMax != nil {
		v, ok := val(b.FeasibleMax.Value)
		s := plain(v, ok)
		if b.CI != nil {
			lo, okl := val(b.CI.Lo)
			hi, okh := val(b.CI.Hi)
			s += fmt.Sprintf(" (%s CI %s–%s)", levelText(b.ConfidenceLevel), plain(lo, okl), plain(hi, okh))
		}
		add("Boundary", s)
	}
	if h.Reason != nil {
		add("Stopped", *h.Reason)
	}
	return out
}

func levelText(level *float64) string {
	if l, ok := val(level); ok {
		return strconv.FormatFloat(l*100, 'f', -1, 64) + "%"
	}
	return "95%"
}

// probePoint is one iteration as the probes' chart draws it.
type probePoint struct {
	idx            int
	x, sla, obj    float64
	feasible, nonM bool
}

// probePoints reads the probes in order, with the first SLA filter's
// value of each: from the iteration's own aggregate
// (aggregate/search_iter_NNNN/), else from the sweep cell of its value.
func probePoints(dir string, h *searchHistory, d *sweepData, dim string) []probePoint {
	var f *sla.Filter
	if len(h.Config.SLAFilters) > 0 {
		f = &h.Config.SLAFilters[0]
	}
	out := make([]probePoint, 0, len(h.Iterations))
	for _, it := range h.Iterations {
		pt := probePoint{idx: it.Index, x: math.NaN(), sla: math.NaN(), obj: math.NaN(), feasible: it.Feasible, nonM: it.NonMonotonic}
		if raw, ok := it.Values[dim]; ok {
			_, pt.x = valueText(raw)
		}
		if len(it.Objectives) > 0 {
			pt.obj, _ = val(it.Objectives[0])
		}
		if f != nil {
			pt.sla = probeSLAValue(dir, it.Index, *f)
			if math.IsNaN(pt.sla) && d != nil {
				leaf := dim[strings.LastIndex(dim, ".")+1:]
				for i := range d.cells {
					c := &d.cells[i]
					n, ok := c.num[dim]
					if !ok {
						n, ok = c.num[leaf]
					}
					if ok && n == pt.x {
						pt.sla = c.slaValue(*f)
						break
					}
				}
			}
		}
		out = append(out, pt)
	}
	return out
}

// probeSLAValue is a filter's value in an iteration's own aggregate; NaN
// without it.
func probeSLAValue(dir string, idx int, f sla.Filter) float64 {
	b, err := os.ReadFile(filepath.Join(dir, "aggregate", fmt.Sprintf("search_iter_%04d", idx), confidenceFile))
	var agg confidenceAggregate
	if err != nil || json.Unmarshal(b, &agg) != nil {
		return math.NaN()
	}
	v, _ := val(agg.Metrics[f.Key()].Mean)
	return v
}

// vline is a vertical line at x from y0 to y1. report.js aligns every
// series on their shared x values, where two points at one x collapse
// into one; so the top end sits 2 millionths to the right, which the
// page's 7 significant digits keep apart and no eye sees.
func vline(label string, style chart.Style, color string, x, y0, y1 float64) chart.Series {
	x1 := x * (1 + 2e-6)
	if x == 0 {
		x1 = 1e-9
	}
	return chart.Series{Label: label, Style: style, Color: color, X: []float64{x, x1}, Y: []float64{y0, y1}}
}

// searchSection draws the probes in order (feasible and infeasible apart,
// the SLA threshold, the boundary and its confidence interval) and lists
// them with the boundary.
func searchSection(dir string, h *searchHistory, d *sweepData) Section {
	dim := h.path()
	pts := probePoints(dir, h, d, dim)
	var f *sla.Filter
	if len(h.Config.SLAFilters) > 0 {
		f = &h.Config.SLAFilters[0]
	}
	useSLA := f != nil && slices.ContainsFunc(pts, func(p probePoint) bool { return !math.IsNaN(p.sla) })
	objName := "objective"
	if len(h.Config.Objectives) > 0 {
		objName = h.Config.Objectives[0].Metric + " " + h.Config.Objectives[0].Stat
	}
	yName := objName
	if useSLA {
		yName = f.Tag + " " + f.Stat
	}
	s := Section{ID: "search", Title: "Probes and boundary",
		Intro: fmt.Sprintf("Each point is one probe of %s, labelled with its iteration; green met every SLA filter, red did not. The y axis is the probe's %s.", dim, yName)}

	var xs []float64
	feas := chart.Series{Label: "Feasible", Style: chart.Points, Color: "#2ca02c"}
	infeas := chart.Series{Label: "Infeasible", Style: chart.Points, Color: "#d62728"}
	ylo, yhi := math.Inf(1), math.Inf(-1)
	for _, p := range pts {
		y := p.obj
		if useSLA {
			y = p.sla
		}
		se := &infeas
		if p.feasible {
			se = &feas
		}
		se.X, se.Y, se.PointLabels = append(se.X, p.x), append(se.Y, y), append(se.PointLabels, "#"+strconv.Itoa(p.idx))
		if !math.IsNaN(p.x) {
			xs = append(xs, p.x)
		}
		if !math.IsNaN(y) {
			ylo, yhi = min(ylo, y), max(yhi, y)
		}
	}
	c := chart.Chart{ID: "search_probes", Title: "The probes of the search and its boundary",
		X: chart.Axis{Label: dim, Log: logSpan(xs)}, Y: chart.Axis{Label: yName}}
	for _, se := range []chart.Series{feas, infeas} {
		if len(se.X) > 0 {
			c.Series = append(c.Series, se)
		}
	}
	if len(xs) > 0 {
		x0, x1 := slices.Min(xs), slices.Max(xs)
		if useSLA {
			c.Series = append(c.Series, chart.Series{Label: "SLA threshold: " + f.String(), Style: chart.Dashed, Color: "#57606a",
				X: []float64{x0, x1}, Y: []float64{f.Threshold, f.Threshold}})
			ylo, yhi = min(ylo, f.Threshold), max(yhi, f.Threshold)
		}
		if !math.IsInf(ylo, 0) {
			if ylo == yhi {
				ylo, yhi = ylo-max(1, math.Abs(ylo)/10), yhi+max(1, math.Abs(yhi)/10)
			}
			if b := h.Boundary; b != nil {
				if b.FeasibleMax != nil {
					if v, ok := val(b.FeasibleMax.Value); ok {
						c.Series = append(c.Series, vline("Boundary: highest feasible "+plain(v, true), chart.Line, "#2ca02c", v, ylo, yhi))
					}
				}
				if b.CI != nil {
					if lo, ok := val(b.CI.Lo); ok {
						c.Series = append(c.Series, vline(levelText(b.ConfidenceLevel)+" CI low "+plain(lo, true), chart.Dashed, "#9467bd", lo, ylo, yhi))
					}
					if hi, ok := val(b.CI.Hi); ok {
						c.Series = append(c.Series, vline(levelText(b.ConfidenceLevel)+" CI high "+plain(hi, true), chart.Dashed, "#9467bd", hi, ylo, yhi))
					}
				} else if b.InfeasibleMin != nil {
					if v, ok := val(b.InfeasibleMin.Value); ok {
						c.Series = append(c.Series, vline("Lowest infeasible "+plain(v, true), chart.Dashed, "#d62728", v, ylo, yhi))
					}
				}
			}
		}
	}
	if !c.Empty() {
		s.Charts = append(s.Charts, c)
	}
	s.Tables = append(s.Tables, probesTable(pts, dim, objName, yName, useSLA))
	if t, ok := boundaryTable(h); ok {
		s.Tables = append(s.Tables, t)
	}
	return s
}

func probesTable(pts []probePoint, dim, objName, slaName string, useSLA bool) Table {
	t := Table{ID: "search-probes", Caption: "The probes in the order they ran.", Header: []string{"Iteration", dim}}
	if useSLA {
		t.Header = append(t.Header, slaName)
	}
	t.Header = append(t.Header, objName+" (objective)", "Feasible")
	nonMono := slices.ContainsFunc(pts, func(p probePoint) bool { return p.nonM })
	if nonMono {
		t.Header = append(t.Header, "Non-monotonic")
	}
	for _, p := range pts {
		id := fmt.Sprintf("probe-%d-", p.idx)
		row := []Cell{{Text: strconv.Itoa(p.idx)}, {Text: plain(p.x, true), ID: id + "value"}}
		if useSLA {
			row = append(row, Cell{Text: number(p.sla, true), ID: id + "sla"})
		}
		feasible, class := "no", "bad"
		if p.feasible {
			feasible, class = "yes", "good"
		}
		row = append(row, Cell{Text: number(p.obj, true), ID: id + "objective"}, Cell{Text: feasible, ID: id + "feasible", Class: class})
		if nonMono {
			mark := ""
			if p.nonM {
				mark = "yes"
			}
			row = append(row, Cell{Text: mark})
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// boundaryTable is boundary_summary: the highest feasible and lowest
// infeasible values, the confidence interval of the boundary, and the
// planner's notes.
func boundaryTable(h *searchHistory) (Table, bool) {
	b := h.Boundary
	if b == nil {
		return Table{}, false
	}
	t := Table{ID: "search-boundary", Caption: "The boundary between the values that met the SLA and those that did not.", Header: []string{"Boundary", "Value", "Detail"}}
	if f := b.FeasibleMax; f != nil {
		v, ok := val(f.Value)
		o, oko := val(f.Objective)
		t.Rows = append(t.Rows, []Cell{{Text: "Highest feasible value"}, {Text: plain(v, ok), ID: "boundary-feasible-max"},
			{Text: fmt.Sprintf("iteration %d; objective %s", f.Iteration, number(o, oko)), Class: "text"}})
	}
	if i := b.InfeasibleMin; i != nil {
		v, ok := val(i.Value)
		detail := fmt.Sprintf("iteration %d", i.Iteration)
		if br := i.FirstBreach; br != nil {
			obs, oko := val(br.Observed)
			thr, okt := val(br.Threshold)
			detail += fmt.Sprintf("; first breach: %s %s = %s, needed %s %s", br.MetricTag, br.Stat, number(obs, oko), br.Op, plain(thr, okt))
		}
		t.Rows = append(t.Rows, []Cell{{Text: "Lowest infeasible value"}, {Text: plain(v, ok), ID: "boundary-infeasible-min"}, {Text: detail, Class: "text"}})
	}
	if ci := b.CI; ci != nil {
		lo, okl := val(ci.Lo)
		hi, okh := val(ci.Hi)
		t.Rows = append(t.Rows, []Cell{{Text: "Confidence interval low (" + levelText(b.ConfidenceLevel) + ")"}, {Text: plain(lo, okl), ID: "boundary-ci-low"}, {Text: "", Class: "text"}},
			[]Cell{{Text: "Confidence interval high (" + levelText(b.ConfidenceLevel) + ")"}, {Text: plain(hi, okh), ID: "boundary-ci-high"}, {Text: "", Class: "text"}})
	}
	if len(b.UncertainValues) > 0 {
		vs := make([]string, len(b.UncertainValues))
		for i, v := range b.UncertainValues {
			vs[i] = plain(v, true)
		}
		t.Rows = append(t.Rows, []Cell{{Text: "Uncertain values"}, {Text: strings.Join(vs, ", "), ID: "boundary-uncertain"}, {Text: "probed values whose verdict stayed uncertain", Class: "text"}})
	}
	for _, kv := range [][2]string{{"Boundary type", b.BoundaryType}, {"Binding constraint", b.BindingConstraint}} {
		if kv[1] != "" {
			t.Rows = append(t.Rows, []Cell{{Text: kv[0]}, {Text: kv[1], Class: "text"}, {Text: "", Class: "text"}})
		}
	}
	if h.Reason != nil {
		t.Rows = append(t.Rows, []Cell{{Text: "Stopped because"}, {Text: *h.Reason, Class: "text"}, {Text: "", Class: "text"}})
	}
	return t, len(t.Rows) > 0
}

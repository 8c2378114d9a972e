package sweep

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/llmbench/llmbench/internal/export"
	"github.com/llmbench/llmbench/internal/metrics"
	"github.com/llmbench/llmbench/internal/multirun"
	"github.com/llmbench/llmbench/internal/sla"
	"github.com/llmbench/llmbench/internal/stats"
)

// FailedRun is a run that produced no results, and why.
type FailedRun = multirun.FailedRun

// CellOutcome is what one cell's trials produced.
type CellOutcome struct {
	Cell   Cell
	Runs   []metrics.Results // successful trials of this cell, in order
	Labels []string          // their run labels
	Failed []FailedRun
}

// Trials is how many runs the cell had, successful or not.
func (o CellOutcome) Trials() int { return len(o.Runs) + len(o.Failed) }

// Kind is how a sweep made its cells.
type Kind string

// Sweep kinds.
const (
	Grid          Kind = "grid" // the default
	Zip           Kind = "zip"
	ScenarioSweep Kind = "scenarios"
)

// ParetoAxes are the axes a search recipe declares for its Pareto view
// (AIPerf's ParetoAxesSpec), written as metadata.pareto_axes.
type ParetoAxes struct {
	XMetric    string   `json:"x_metric"`
	XStat      string   `json:"x_stat"`
	XMinimize  bool     `json:"x_minimize"`
	YMetric    string   `json:"y_metric"`
	YStat      string   `json:"y_stat"`
	YMaximize  bool     `json:"y_maximize"`
	SeriesKeys []string `json:"series_keys"`
}

// Meta is what the aggregates need to know about the sweep beyond its runs.
type Meta struct {
	Version         string
	Model           string // first model name, recorded per cell
	Kind            Kind   // "" counts as Grid
	Independent     bool   // --parameter-sweep-mode independent
	ConfidenceLevel float64
	CooldownSeconds float64      // recorded in each cell's aggregate
	Filters         []sla.Filter // SLA filters; none: every cell is feasible
	ParetoAxes      *ParetoAxes  // optional
}

// CellSummary is cell o's confidence aggregate, its
// profile_export_aiperf_aggregate.{json,csv} (multirun.AggregateJSON and
// AggregateCSV), with the cell's variation metadata. AIPerf writes it for
// every cell with at least one successful run, one trial or many.
func CellSummary(o CellOutcome, m Meta) multirun.Summary {
	vals := o.Cell.Values()
	vv := make(multirun.VariationValues, len(vals))
	for i, a := range vals {
		vv[i] = multirun.VariationValue{Path: a.Path, Value: a.Value}
	}
	return multirun.Summary{
		Version:         m.Version,
		NumRuns:         o.Trials(),
		RunLabels:       slices.Clone(o.Labels),
		FailedRuns:      slices.Clone(o.Failed),
		ConfidenceLevel: m.ConfidenceLevel,
		CooldownSeconds: m.CooldownSeconds,
		Stats:           multirun.Aggregate(o.Runs, m.ConfidenceLevel, export.Exported),
		VariationLabel:  o.Cell.Label,
		VariationValues: vv,
		SweepMode:       mode(m.Independent),
		Model:           m.Model,
	}
}

// Block is one entry of a cell's metrics in the sweep aggregate. A cell
// with several runs has flat blocks, keyed <tag>_<stat>, holding the
// confidence statistics of that statistic across the runs; a cell with
// exactly one run has bare blocks, keyed <tag>, holding the run's own
// statistics (Mean is its avg; Std and CV 0; the interval collapsed to
// the avg). NaN marks a value that does not exist.
type Block struct {
	Key  string
	Bare bool
	Unit string

	Mean, Std, Min, Max, CV, CILow, CIHigh float64

	// Bare blocks only: p1…p99 (stats.PercentileNames order; nil for a
	// single-valued metric), count and sum when the metric has them.
	P     []float64
	Count *int
	Sum   *float64
}

// field is the block's value named stat, as AIPerf reads block[stat].
func (b Block) field(stat string) (float64, bool) {
	switch stat {
	case "mean":
		return b.Mean, true
	case "avg":
		return b.Mean, b.Bare
	case "std":
		return b.Std, true
	case "min":
		return b.Min, true
	case "max":
		return b.Max, true
	case "cv":
		return b.CV, true
	case "ci_low":
		return b.CILow, true
	case "ci_high":
		return b.CIHigh, true
	case "count":
		if b.Count != nil {
			return float64(*b.Count), true
		}
	case "sum":
		if b.Sum != nil {
			return *b.Sum, true
		}
	default:
		if i := slices.Index(stats.PercentileNames[:], stat); i >= 0 && b.P != nil && finite(b.P[i]) {
			return b.P[i], true
		}
	}
	return math.NaN(), false
}

// Parameter is one swept value of a cell under its short name.
type Parameter struct {
	Name  string
	Value Value
}

// Parameters are a cell's values under their short names, in the order
// of their dotted paths.
type Parameters []Parameter

// CellResult is one cell that ran, as the sweep aggregate sees it.
type CellResult struct {
	Cell       Cell
	Params     Parameters
	Trials     int // runs, successful or not
	Successful int
	// Metrics are the cell's blocks, in the order of the runs' metrics;
	// nil when no run succeeded (the cell is then left out of
	// per_combination_metrics and of the selections).
	Metrics []Block
	// Feasible: every SLA filter passes (true without filters).
	Feasible bool
}

// block returns the block keyed key.
func (c CellResult) block(key string) (Block, bool) {
	for _, b := range c.Metrics {
		if b.Key == key {
			return b, true
		}
	}
	return Block{}, false
}

// Stat is the value of tag's statistic stat in the cell, with its unit:
// the mean of the flat block <tag>_<stat>, else the field stat of the
// bare block <tag>. This is what best_configurations, pareto_optimal and
// the console table read. AIPerf reads only the flat key for the first
// two, so a single-trial sweep gets none (issue 24 names it a plain bug of AIPerf's code);
// and only the bare block for the table, which so prints blanks for
// cells with several trials. llmbench reads both.
func (c CellResult) Stat(tag, stat string) (v float64, unit string, ok bool) {
	if b, ok := c.block(tag + "_" + stat); ok && !b.Bare {
		return b.Mean, b.Unit, finite(b.Mean)
	}
	if b, ok := c.block(tag); ok && b.Bare {
		v, ok := b.field(stat)
		return v, b.Unit, ok && finite(v)
	}
	return math.NaN(), "", false
}

// Feasible reports whether a cell's metrics meet every filter, by
// AIPerf's sweep rule: the flat block <tag>_<stat>'s mean, else the bare
// block <tag>'s field stat, else its mean; a missing value fails.
func Feasible(blocks []Block, filters []sla.Filter) bool {
	c := CellResult{Metrics: blocks}
	for _, f := range filters {
		v := math.NaN()
		if b, ok := c.block(f.Key()); ok && !b.Bare {
			v = b.Mean
		} else if b, ok := c.block(f.Tag); ok && b.Bare {
			if x, ok := b.field(f.Stat); ok {
				v = x
			} else {
				v = b.Mean
			}
		}
		if !f.Holds(v) {
			return false
		}
	}
	return true
}

// ParamValues is one entry of metadata.sweep_parameters.
type ParamValues struct {
	Name   string
	Values []Value // first-seen order
}

// Best is one of best_configurations.
type Best struct {
	Key    string // best_throughput or best_latency_p99
	Params Parameters
	Metric float64
	Unit   string
}

// SLAConstraints is metadata.sla_constraints.
type SLAConstraints struct {
	Filters              []sla.Filter
	Feasible, Infeasible int
}

// Summary is everything profile_export_aiperf_sweep.json holds, and what
// the console table shows.
type Summary struct {
	NumRuns, NumSuccessful int
	FailedRuns             []FailedRun
	Parameters             []ParamValues // metadata.sweep_parameters
	NumCombinations        int
	Mode                   string // "repeated" or "independent"
	ConfidenceLevel        float64
	TrialsPerValue         int // the most runs a cell had
	ParetoAxes             *ParetoAxes
	SLA                    *SLAConstraints // nil without filters
	Paths                  []string        // the swept dotted paths, sorted
	Cells                  []CellResult    // every cell that ran, in order
	Best                   []Best          // best_throughput, then best_latency_p99
	Pareto                 []Parameters    // pareto_optimal, sorted
}

// Aggregate computes the sweep aggregate of the cells' outcomes, given in
// expansion order (AIPerf's first-seen order); a cell with no run at all
// is left out. Callers write nothing when no cell has a successful run,
// as AIPerf does.
func Aggregate(cells []CellOutcome, m Meta) Summary {
	s := Summary{Mode: mode(m.Independent), ConfidenceLevel: m.ConfidenceLevel, ParetoAxes: m.ParetoAxes}
	var ran []CellOutcome
	var paths []string
	for _, o := range cells {
		if o.Trials() == 0 {
			continue
		}
		ran = append(ran, o)
		for _, a := range o.Cell.Values() {
			if !slices.Contains(paths, a.Path) {
				paths = append(paths, a.Path)
			}
		}
	}
	short := ShortNames(paths)
	s.Paths = slices.Sorted(slices.Values(paths))

	byName := map[string]int{}
	for _, o := range ran {
		s.NumRuns += o.Trials()
		s.NumSuccessful += len(o.Runs)
		s.FailedRuns = append(s.FailedRuns, o.Failed...)
		s.TrialsPerValue = max(s.TrialsPerValue, o.Trials())
		c := CellResult{Cell: o.Cell, Trials: o.Trials(), Successful: len(o.Runs), Feasible: true}
		for _, a := range o.Cell.Values() {
			name := short[a.Path]
			c.Params = append(c.Params, Parameter{name, a.Value})
			i, ok := byName[name]
			if !ok {
				i = len(s.Parameters)
				byName[name] = i
				s.Parameters = append(s.Parameters, ParamValues{Name: name})
			}
			if !slices.ContainsFunc(s.Parameters[i].Values, func(v Value) bool { return v.F == a.Value.F }) {
				s.Parameters[i].Values = append(s.Parameters[i].Values, a.Value)
			}
		}
		switch {
		case len(o.Runs) == 0:
		case o.Trials() == 1:
			c.Metrics = bareBlocks(o.Runs[0])
		default:
			c.Metrics = flatBlocks(multirun.Aggregate(o.Runs, m.ConfidenceLevel, export.Exported))
		}
		if c.Metrics != nil && len(m.Filters) > 0 {
			c.Feasible = Feasible(c.Metrics, m.Filters)
		}
		s.Cells = append(s.Cells, c)
	}

	if m.Kind == "" || m.Kind == Grid {
		s.NumCombinations = 1
		for _, p := range s.Parameters {
			s.NumCombinations *= len(p.Values)
		}
	} else {
		// AIPerf multiplies the distinct-value counts for every kind, so a
		// 3-cell zip reports 9 (issue 24 names it a plain bug of AIPerf's code); llmbench
		// counts the cells.
		s.NumCombinations = len(s.Cells)
	}

	var usable, feasible []CellResult
	for _, c := range s.Cells {
		if c.Metrics == nil {
			continue
		}
		usable = append(usable, c)
		if c.Feasible {
			feasible = append(feasible, c)
		}
	}
	bestPool, paretoPool := usable, usable
	if len(m.Filters) > 0 {
		s.SLA = &SLAConstraints{Filters: slices.Clone(m.Filters), Feasible: len(feasible), Infeasible: len(usable) - len(feasible)}
		// Best falls back to every cell when none is feasible; the
		// Pareto front does not.
		paretoPool = feasible
		if len(feasible) > 0 {
			bestPool = feasible
		}
	}
	s.Best = best(bestPool)
	s.Pareto = pareto(paretoPool)
	return s
}

// bareBlocks are a single run's metrics, one block per exported metric.
func bareBlocks(rs metrics.Results) []Block {
	var out []Block
	for _, r := range rs.Metrics {
		if !export.Exported(r.Def) {
			continue
		}
		b := Block{Key: r.Def.Tag, Bare: true, Unit: r.Def.Unit}
		switch {
		case r.Dist != nil:
			d := r.Dist
			b.Mean, b.Min, b.Max = d.Avg, d.Min, d.Max
			b.P = slices.Clone(d.P[:])
			if r.Def.Kind != metrics.TimeWeighted { // a curve has no count or sum
				n := d.Count
				b.Count = &n
				if finite(d.Sum) {
					sum := d.Sum
					b.Sum = &sum
				}
			}
		case r.Exact != nil:
			b.Mean = float64(*r.Exact)
			b.Min, b.Max = b.Mean, b.Mean
		default:
			b.Mean, b.Min, b.Max = r.Value, r.Value, r.Value
		}
		b.CILow, b.CIHigh = b.Mean, b.Mean
		out = append(out, b)
	}
	if out == nil {
		out = []Block{} // a successful run without metrics still counts
	}
	return out
}

// flatBlocks are the confidence statistics of a cell's runs.
func flatBlocks(sts []multirun.Stat) []Block {
	out := make([]Block, len(sts))
	for i, st := range sts {
		out[i] = Block{Key: st.Name, Unit: st.Unit, Mean: st.Mean, Std: st.Std, Min: st.Min, Max: st.Max, CV: st.CV, CILow: st.CILow, CIHigh: st.CIHigh}
	}
	return out
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// The objectives: throughput up; latency down, TTFT p99 when every cell
// has it (streaming), else request latency p99.
var (
	throughput = [2]string{"request_throughput", "avg"}
	latencies  = [][2]string{{"time_to_first_token", "p99"}, {"request_latency", "p99"}}
)

// everyHas reports whether every cell has tag's stat.
func everyHas(cells []CellResult, obj [2]string) bool {
	for _, c := range cells {
		if _, _, ok := c.Stat(obj[0], obj[1]); !ok {
			return false
		}
	}
	return true
}

// latencyObjective is the latency every cell has, if any.
func latencyObjective(cells []CellResult) ([2]string, bool) {
	for _, l := range latencies {
		if everyHas(cells, l) {
			return l, true
		}
	}
	return [2]string{}, false
}

// best picks the cell with the highest throughput and the one with the
// lowest latency; the first one on a tie, as Python's max and min do.
// Each is left out when some cell lacks its metric.
func best(cells []CellResult) []Best {
	if len(cells) == 0 {
		return nil
	}
	pick := func(key string, obj [2]string, better func(a, b float64) bool) Best {
		bi := 0
		bv, unit, _ := cells[0].Stat(obj[0], obj[1])
		for i, c := range cells[1:] {
			if v, u, _ := c.Stat(obj[0], obj[1]); better(v, bv) {
				bi, bv, unit = i+1, v, u
			}
		}
		return Best{Key: key, Params: cells[bi].Params, Metric: bv, Unit: unit}
	}
	var out []Best
	if everyHas(cells, throughput) {
		out = append(out, pick("best_throughput", throughput, func(a, b float64) bool { return a > b }))
	}
	if l, ok := latencyObjective(cells); ok {
		out = append(out, pick("best_latency_p99", l, func(a, b float64) bool { return a < b }))
	}
	return out
}

// pareto returns the parameters of the cells no other cell dominates on
// (throughput up, latency down), ties all kept, sorted by their
// (name, value) pairs; none when a cell lacks either metric.
func pareto(cells []CellResult) []Parameters {
	l, ok := latencyObjective(cells)
	if !ok || !everyHas(cells, throughput) {
		return nil
	}
	type point struct{ tp, lat float64 }
	pts := make([]point, len(cells))
	for i, c := range cells {
		pts[i].tp, _, _ = c.Stat(throughput[0], throughput[1])
		pts[i].lat, _, _ = c.Stat(l[0], l[1])
	}
	dominates := func(a, b point) bool {
		return a.tp >= b.tp && a.lat <= b.lat && (a.tp > b.tp || a.lat < b.lat)
	}
	var out []Parameters
	for i, p := range pts {
		dominated := false
		for j, q := range pts {
			if i != j && dominates(q, p) {
				dominated = true
				break
			}
		}
		if !dominated {
			out = append(out, cells[i].Params)
		}
	}
	slices.SortStableFunc(out, compareParams)
	return out
}

// compareParams orders parameter sets as Python orders the tuples of
// their sorted (name, value) pairs.
func compareParams(a, b Parameters) int {
	sa, sb := sortedParams(a), sortedParams(b)
	for i := range min(len(sa), len(sb)) {
		if c := strings.Compare(sa[i].Name, sb[i].Name); c != 0 {
			return c
		}
		if c := cmp.Compare(sa[i].Value.F, sb[i].Value.F); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(sa), len(sb))
}

func sortedParams(p Parameters) Parameters {
	out := slices.Clone(p)
	slices.SortStableFunc(out, func(a, b Parameter) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return cmp.Compare(a.Value.F, b.Value.F)
	})
	return out
}

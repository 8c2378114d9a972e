package sweep

import (
	"bytes"
	"encoding/json"
	"github.com/llmbench/llmbench/internal/goldentest"
	"math"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/llmbench/llmbench/internal/metrics"
	"github.com/llmbench/llmbench/internal/multirun"
	"github.com/llmbench/llmbench/internal/sla"
	"github.com/llmbench/llmbench/internal/stats"
)

// golden compares got with testdata/name (go test -update rewrites it).
func golden(t *testing.T, name string, got []byte) { t.Helper(); goldentest.Check(t, name, got) }

// dist is a distribution with the given avg and p99; its other
// percentiles are the avg, except p95 = (avg+p99)/2.
func dist(avg, p99 float64) *stats.Summary {
	d := &stats.Summary{Count: 100, Sum: avg * 100, Avg: avg, Min: avg / 2, Max: p99 + 1, Std: 1}
	for i := range d.P {
		d.P[i] = avg
	}
	d.P[7], d.P[8] = (avg+p99)/2, p99
	return d
}

// run is one run's results: request_throughput tp, TTFT with p99 ttft
// (avg ttft/2), request latency avg 500 and p99 5·ttft, ITL avg 10 p99 20,
// output token throughput 10·tp, and total_reasoning_tokens 0 (a mean of
// 0 makes a multi-run CV infinite).
func run(tp, ttft float64) metrics.Results {
	return metrics.Results{Metrics: []metrics.Result{
		{Def: metrics.DefRequestThroughput, Value: tp},
		{Def: metrics.RecordDefs[metrics.RequestLatency], Dist: dist(500, 5*ttft)},
		{Def: metrics.RecordDefs[metrics.TimeToFirstToken], Dist: dist(ttft/2, ttft)},
		{Def: metrics.RecordDefs[metrics.InterTokenLatency], Dist: dist(10, 20)},
		{Def: metrics.DefOutputTokenThroughput, Value: 10 * tp},
		{Def: metrics.DefTotalReasoningTokens, Value: 0},
	}}
}

// nonStreaming is a run without TTFT: latency falls back to request latency.
func nonStreaming(tp, lat float64) metrics.Results {
	return metrics.Results{Metrics: []metrics.Result{
		{Def: metrics.DefRequestThroughput, Value: tp},
		{Def: metrics.RecordDefs[metrics.RequestLatency], Dist: dist(lat/2, lat)},
	}}
}

func params(kv ...any) Parameters {
	var p Parameters
	for i := 0; i < len(kv); i += 2 {
		p = append(p, Parameter{kv[i].(string), kv[i+1].(Value)})
	}
	return p
}

func outcomes(t *testing.T, cells []Cell, runs [][]metrics.Results, failed [][]FailedRun) []CellOutcome {
	t.Helper()
	out := make([]CellOutcome, len(cells))
	for i, c := range cells {
		out[i] = CellOutcome{Cell: c, Runs: runs[i]}
		for j := range runs[i] {
			out[i].Labels = append(out[i].Labels, TrialLabel(j)+"/"+c.Dir)
		}
		if failed != nil {
			out[i].Failed = failed[i]
		}
	}
	return out
}

func mustExpand(t *testing.T, params []Param, zip bool) []Cell {
	t.Helper()
	cells, err := Expand(params, zip)
	if err != nil {
		t.Fatal(err)
	}
	return cells
}

var meta = Meta{Version: "test", Model: "m", ConfidenceLevel: 0.95, CooldownSeconds: 0}

// twoByTwo: --concurrency 10,20 with two trials, repeated. Cell 10 runs
// throughput 10 and 12 with TTFT p99 100 and 120 (means 11 and 110); cell
// 20 runs throughput 20 with TTFT p99 90, its second trial failed (one
// success: flat keys, std 0). Cell 20 is better on both objectives, so it
// is both bests and the only Pareto point; cell 10 is dominated.
func twoByTwo(t *testing.T) Summary {
	cells := mustExpand(t, []Param{{conc, ints(10, 20)}}, false)
	return Aggregate(outcomes(t, cells,
		[][]metrics.Results{{run(10, 100), run(12, 120)}, {run(20, 90)}},
		[][]FailedRun{nil, {{Label: "trial_0002/concurrency_20", Error: "every request failed (4 errors)"}}}), meta)
}

// singleTrial: --concurrency 4,1,2, one trial each. Throughput 20, 10, 20
// with TTFT p99 100 each: cell 1 is dominated, cells 4 and 2 tie and are
// both kept, sorted 2 then 4; the first of a tie is best (cell 4 for both).
func singleTrial(t *testing.T) Summary {
	cells := mustExpand(t, []Param{{conc, ints(4, 1, 2)}}, false)
	return Aggregate(outcomes(t, cells, [][]metrics.Results{{run(20, 100)}, {run(10, 100)}, {run(20, 100)}}, nil), meta)
}

func TestAggregateTwoByTwo(t *testing.T) {
	s := twoByTwo(t)
	if s.NumRuns != 4 || s.NumSuccessful != 3 || s.TrialsPerValue != 2 || s.NumCombinations != 2 || s.Mode != "repeated" {
		t.Errorf("counts: runs %d ok %d trials %d combos %d mode %s", s.NumRuns, s.NumSuccessful, s.TrialsPerValue, s.NumCombinations, s.Mode)
	}
	if len(s.FailedRuns) != 1 || s.FailedRuns[0].Label != "trial_0002/concurrency_20" {
		t.Errorf("failed runs %+v", s.FailedRuns)
	}
	c10 := s.Cells[0]
	if v, unit, ok := c10.Stat("request_throughput", "avg"); !ok || v != 11 || unit != "requests/sec" {
		t.Errorf("cell 10 throughput %v %q %v, want 11", v, unit, ok)
	}
	b, _ := c10.block("request_throughput_avg")
	if b.Bare || math.Abs(b.Std-math.Sqrt2) > 1e-12 || math.Abs(b.CV-math.Sqrt2/11) > 1e-12 {
		t.Errorf("cell 10 throughput block %+v, want std √2", b)
	}
	if b, _ := s.Cells[1].block("request_throughput_avg"); b.Std != 0 || b.Mean != 20 || b.CILow != 20 {
		t.Errorf("cell 20 (one success of two) %+v, want std 0 and the interval collapsed", b)
	}
	wantBest := []Best{
		{"best_throughput", params("concurrency", Int(20)), 20, "requests/sec"},
		{"best_latency_p99", params("concurrency", Int(20)), 90, "ms"},
	}
	if !reflect.DeepEqual(s.Best, wantBest) {
		t.Errorf("best %+v\nwant %+v", s.Best, wantBest)
	}
	if want := []Parameters{params("concurrency", Int(20))}; !reflect.DeepEqual(s.Pareto, want) {
		t.Errorf("pareto %+v, want %+v", s.Pareto, want)
	}
	j, err := SummaryJSON(s)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "sweep_2x2.json", j)
	golden(t, "sweep_2x2.csv", SummaryCSV(s))
	golden(t, "table_2x2.txt", []byte(Table(s, 0)))
}

func TestAggregateSingleTrial(t *testing.T) {
	s := singleTrial(t)
	if s.NumRuns != 3 || s.NumSuccessful != 3 || s.TrialsPerValue != 1 || s.NumCombinations != 3 {
		t.Errorf("counts: runs %d ok %d trials %d combos %d", s.NumRuns, s.NumSuccessful, s.TrialsPerValue, s.NumCombinations)
	}
	if want := []ParamValues{{"concurrency", ints(4, 1, 2)}}; !reflect.DeepEqual(s.Parameters, want) {
		t.Errorf("sweep parameters %+v, want %+v (first-seen order)", s.Parameters, want)
	}
	// AIPerf's code gives a single-trial sweep no bests and no front; the
	// bare blocks' avg and p99 give them here.
	wantBest := []Best{
		{"best_throughput", params("concurrency", Int(4)), 20, "requests/sec"},
		{"best_latency_p99", params("concurrency", Int(4)), 100, "ms"},
	}
	if !reflect.DeepEqual(s.Best, wantBest) {
		t.Errorf("best %+v\nwant %+v", s.Best, wantBest)
	}
	if want := []Parameters{params("concurrency", Int(2)), params("concurrency", Int(4))}; !reflect.DeepEqual(s.Pareto, want) {
		t.Errorf("pareto %+v, want %+v", s.Pareto, want)
	}
	b, _ := s.Cells[0].block("time_to_first_token")
	if !b.Bare || b.Mean != 50 || b.Std != 0 || b.CV != 0 || b.CILow != 50 || b.P[8] != 100 || *b.Count != 100 {
		t.Errorf("bare TTFT block %+v", b)
	}
	j, err := SummaryJSON(s)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "sweep_single.json", j)
	golden(t, "sweep_single.csv", SummaryCSV(s))
}

// TestAggregateLatencyFallback: without TTFT in every cell, the latency
// objective is request_latency p99.
func TestAggregateLatencyFallback(t *testing.T) {
	cells := mustExpand(t, []Param{{conc, ints(1, 2)}}, false)
	s := Aggregate(outcomes(t, cells, [][]metrics.Results{{run(10, 100)}, {nonStreaming(20, 300)}}, nil), meta)
	want := []Best{
		{"best_throughput", params("concurrency", Int(2)), 20, "requests/sec"},
		{"best_latency_p99", params("concurrency", Int(2)), 300, "ms"}, // cell 1's request latency p99 is 500
	}
	if !reflect.DeepEqual(s.Best, want) {
		t.Errorf("best %+v\nwant %+v", s.Best, want)
	}
}

// TestAggregateSLA: cells 1, 2, 4 with throughput 10, 20, 30 and TTFT p99
// 50, 100, 300.
func TestAggregateSLA(t *testing.T) {
	cells := mustExpand(t, []Param{{conc, ints(1, 2, 4)}}, false)
	outs := outcomes(t, cells, [][]metrics.Results{{run(10, 50)}, {run(20, 100)}, {run(30, 300)}}, nil)
	for _, tc := range []struct {
		name                 string
		filter               string
		feasible, infeasible int
		best                 []Best
		pareto               []Parameters
		golden               string
	}{
		{"no filter", "", 3, 0,
			[]Best{{"best_throughput", params("concurrency", Int(4)), 30, "requests/sec"}, {"best_latency_p99", params("concurrency", Int(1)), 50, "ms"}},
			[]Parameters{params("concurrency", Int(1)), params("concurrency", Int(2)), params("concurrency", Int(4))}, ""},
		// Cell 4 breaks the SLA: best throughput is cell 2, and cell 4
		// leaves the front although nothing dominates it.
		{"two feasible", "time_to_first_token:p99:lt:150", 2, 1,
			[]Best{{"best_throughput", params("concurrency", Int(2)), 20, "requests/sec"}, {"best_latency_p99", params("concurrency", Int(1)), 50, "ms"}},
			[]Parameters{params("concurrency", Int(1)), params("concurrency", Int(2))}, "sweep_sla.json"},
		// None feasible: best falls back to every cell; the front is empty.
		{"none feasible", "time_to_first_token:p99:lt:10", 0, 3,
			[]Best{{"best_throughput", params("concurrency", Int(4)), 30, "requests/sec"}, {"best_latency_p99", params("concurrency", Int(1)), 50, "ms"}},
			nil, "sweep_sla_none.csv"},
		// A strict filter fails on equality: 100 is not < 100.
		{"strict edge", "time_to_first_token:p99:lt:100", 1, 2,
			[]Best{{"best_throughput", params("concurrency", Int(1)), 10, "requests/sec"}, {"best_latency_p99", params("concurrency", Int(1)), 50, "ms"}},
			[]Parameters{params("concurrency", Int(1))}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := meta
			if tc.filter != "" {
				f, err := sla.Parse(tc.filter)
				if err != nil {
					t.Fatal(err)
				}
				m.Filters = []sla.Filter{f}
			}
			s := Aggregate(outs, m)
			if tc.filter == "" {
				if s.SLA != nil {
					t.Error("sla_constraints without filters")
				}
			} else if s.SLA == nil || s.SLA.Feasible != tc.feasible || s.SLA.Infeasible != tc.infeasible {
				t.Errorf("sla %+v, want %d feasible %d not", s.SLA, tc.feasible, tc.infeasible)
			}
			if !reflect.DeepEqual(s.Best, tc.best) {
				t.Errorf("best %+v\nwant %+v", s.Best, tc.best)
			}
			if !reflect.DeepEqual(s.Pareto, tc.pareto) {
				t.Errorf("pareto %+v\nwant %+v", s.Pareto, tc.pareto)
			}
			switch {
			case strings.HasSuffix(tc.golden, ".json"):
				j, _ := SummaryJSON(s)
				golden(t, tc.golden, j)
			case strings.HasSuffix(tc.golden, ".csv"):
				golden(t, tc.golden, SummaryCSV(s))
			}
		})
	}
}

// TestFeasible: the a3 lookup rule on both block shapes.
func TestFeasible(t *testing.T) {
	flat := flatBlocks([]multirun.Stat{{Name: "time_to_first_token_p95", Unit: "ms", Mean: 120}, {Name: "request_latency_avg", Mean: math.NaN()}})
	bare := bareBlocks(run(10, 100)) // TTFT avg 50, p95 75, p99 100; throughput 10
	for _, tc := range []struct {
		blocks []Block
		filter string
		want   bool
	}{
		{flat, "time_to_first_token:p95:lt:130", true},
		{flat, "time_to_first_token:p95:lt:120", false},
		{flat, "time_to_first_token:p99:lt:1000", false}, // no such key: missing fails
		{flat, "request_latency:avg:lt:1000", false},     // NaN fails
		{bare, "time_to_first_token:p95:le:75", true},    // the block's p95
		{bare, "time_to_first_token:p95:lt:75", false},
		{bare, "time_to_first_token:avg:lt:51", true},
		{bare, "request_throughput:p99:ge:10", true}, // no p99: the mean
		{bare, "request_throughput:p99:gt:10", false},
		{bare, "goodput:avg:gt:0", false},
	} {
		f, err := sla.Parse(tc.filter)
		if err != nil {
			t.Fatal(err)
		}
		if got := Feasible(tc.blocks, []sla.Filter{f}); got != tc.want {
			t.Errorf("%s on %s blocks: %v, want %v", tc.filter, map[bool]string{true: "bare", false: "flat"}[tc.blocks[0].Bare], got, tc.want)
		}
	}
	if !Feasible(bare, nil) {
		t.Error("no filters must be feasible")
	}
}

// TestNonFinite: NaN and ±Inf become null in the JSON and empty in the
// CSV; a throughput that is not a number leaves best_throughput out.
func TestNonFinite(t *testing.T) {
	cells := mustExpand(t, []Param{{rate, floats(2.5, 5)}}, false)
	nan := run(10, 100)
	nan.Metrics[0].Value = math.NaN()
	inf := run(20, 100)
	inf.Metrics[4].Value = math.Inf(1)
	s := Aggregate(outcomes(t, cells, [][]metrics.Results{{nan}, {inf}}, nil), meta)
	j, err := SummaryJSON(s)
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(j) {
		t.Fatalf("invalid JSON:\n%s", j)
	}
	var doc struct {
		Cells []struct {
			Parameters map[string]float64
			Metrics    map[string]map[string]any
		} `json:"per_combination_metrics"`
		Best map[string]any `json:"best_configurations"`
	}
	if err := json.Unmarshal(j, &doc); err != nil {
		t.Fatal(err)
	}
	if v, ok := doc.Cells[0].Metrics["request_throughput"]["mean"]; !ok || v != nil {
		t.Errorf("NaN throughput mean = %v (present %v), want null", v, ok)
	}
	if v := doc.Cells[1].Metrics["output_token_throughput"]["ci_high"]; v != nil {
		t.Errorf("+Inf ci_high = %v, want null", v)
	}
	if _, ok := doc.Best["best_throughput"]; ok {
		t.Error("best_throughput chosen although one cell's throughput is NaN")
	}
	if !bytes.Contains(j, []byte(`"rate": 2.5`)) {
		t.Errorf("float parameter not written as 2.5:\n%s", j)
	}
	csv := string(SummaryCSV(s))
	lines := strings.Split(csv, "\n")
	header := strings.Split(lines[0], ",")
	row := strings.Split(lines[1], ",")
	for i, h := range header {
		if h == "request_throughput_mean" && row[i] != "" {
			t.Errorf("NaN mean in the CSV: %q", row[i])
		}
		if h == "request_throughput_cv" && row[i] != "0.0000" {
			t.Errorf("bare cv %q, want 0.0000", row[i])
		}
	}
	row2 := strings.Split(lines[2], ",")
	for i, h := range header {
		if h == "output_token_throughput_max" && row2[i] != "" {
			t.Errorf("+Inf max in the CSV: %q", row2[i])
		}
	}
	if row[0] != "2.5" || row2[0] != "5.0" {
		t.Errorf("rate columns %q %q, want 2.5 and 5.0", row[0], row2[0])
	}
}

// TestNumCombinations: the product of distinct values for a grid; the
// number of cells for zip and scenarios (AIPerf multiplies for every kind).
func TestNumCombinations(t *testing.T) {
	grid := mustExpand(t, []Param{{conc, ints(1, 2, 3)}, {isl, ints(10, 20, 30)}}, false)
	zip := mustExpand(t, []Param{{conc, ints(1, 2, 3)}, {isl, ints(10, 20, 30)}}, true)
	one := func(cells []Cell) []CellOutcome {
		rs := make([][]metrics.Results, len(cells))
		for i := range rs {
			rs[i] = []metrics.Results{run(1, 1)}
		}
		return outcomes(t, cells, rs, nil)
	}
	for _, tc := range []struct {
		name  string
		cells []CellOutcome
		kind  Kind
		want  int
	}{
		{"grid", one(grid), Grid, 9},
		{"default kind is grid", one(grid), "", 9},
		{"zip", one(zip), Zip, 3},
		{"grid with one cell not run", one(grid)[:8], Grid, 9},
	} {
		m := meta
		m.Kind = tc.kind
		if got := Aggregate(tc.cells, m).NumCombinations; got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestSweepParameterNames: --isl and --osl share the leaf "mean" and keep
// their dotted paths; concurrency is shortened; parameters follow the
// dotted-path order.
func TestSweepParameterNames(t *testing.T) {
	cells := mustExpand(t, []Param{{conc, ints(1)}, {isl, ints(128, 512)}, {osl, ints(64)}}, false)
	s := Aggregate(outcomes(t, cells, [][]metrics.Results{{run(1, 1)}, {run(2, 1)}}, nil), meta)
	names := []string{}
	for _, p := range s.Parameters {
		names = append(names, p.Name)
	}
	if want := []string{isl, osl, "concurrency"}; !reflect.DeepEqual(names, want) {
		t.Errorf("names %v, want %v", names, want)
	}
	if want := params(isl, Int(512), osl, Int(64), "concurrency", Int(1)); !reflect.DeepEqual(s.Cells[1].Params, want) {
		t.Errorf("cell params %+v", s.Cells[1].Params)
	}
}

// TestCellSummary: the per-cell aggregate carries the variation metadata.
func TestCellSummary(t *testing.T) {
	cells := mustExpand(t, []Param{{conc, ints(10)}, {rate, floats(5)}}, false)
	o := outcomes(t, cells, [][]metrics.Results{{run(10, 100), run(12, 120)}},
		[][]FailedRun{{{Label: "trial_0003/concurrency_10__rate_5.0", Error: "interrupted"}}})[0]
	m := meta
	m.Independent = true
	m.CooldownSeconds = 2.5
	s := CellSummary(o, m)
	if s.NumRuns != 3 || len(s.RunLabels) != 2 || s.SweepMode != "independent" || s.Model != "m" ||
		s.VariationLabel != "phases.profiling.concurrency=10, phases.profiling.rate=5.0" {
		t.Errorf("summary %+v", s)
	}
	j, err := multirun.AggregateJSON(s)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "cell_aggregate.json", j)
	golden(t, "cell_aggregate.csv", multirun.AggregateCSV(s))
}

// TestTableWithParetoAxes: a pareto-sweep-like table (x TTFT p95 down,
// y output token throughput up) fitted to 72 columns. Cells: 4 (tp 20,
// TTFT p95 75), 1 (tp 10, p95 75: dominated), 2 (tp 20, p95 75: a tie,
// marked too), and a cell whose only run failed (blank, never marked).
func TestTableWithParetoAxes(t *testing.T) {
	cells := mustExpand(t, []Param{{conc, ints(4, 1, 2, 8)}, {isl, ints(128)}}, false)
	outs := outcomes(t, cells, [][]metrics.Results{{run(20, 100)}, {run(10, 100)}, {run(20, 100)}, nil},
		[][]FailedRun{nil, nil, nil, {{Label: "c8", Error: "boom"}}})
	m := meta
	m.ParetoAxes = &ParetoAxes{XMetric: "time_to_first_token", XStat: "p95", XMinimize: true, YMetric: "output_token_throughput", YStat: "avg", YMaximize: true}
	s := Aggregate(outs, m)
	if got, want := paretoMarks(s), []bool{true, false, true, false}; !reflect.DeepEqual(got, want) {
		t.Errorf("marks %v, want %v", got, want)
	}
	out := Table(s, 72)
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if n := utf8.RuneCountInString(l); n > 72 {
			t.Errorf("line of %d > 72 runes: %q", n, l)
		}
	}
	golden(t, "table_pareto.txt", []byte(out))
	j, _ := SummaryJSON(s)
	golden(t, "sweep_pareto_axes.json", j)
}

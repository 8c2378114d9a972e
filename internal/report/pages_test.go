package report

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/internal/artifacts"
	"github.com/llmbench/llmbench/internal/chart"
)

// jsonObj is a JSON object of a hand-written test file.
type jsonObj = map[string]any

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func pageChart(t *testing.T, p *Page, id string) chart.Chart {
	t.Helper()
	for _, c := range p.Charts() {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("no chart %s; the page has %v", id, chartIDs(p))
	return chart.Chart{}
}

func chartIDs(p *Page) []string {
	var ids []string
	for _, c := range p.Charts() {
		ids = append(ids, c.ID)
	}
	return ids
}

func seriesOf(t *testing.T, c chart.Chart, label string) chart.Series {
	t.Helper()
	for _, s := range c.Series {
		if s.Label == label {
			return s
		}
	}
	t.Fatalf("chart %s has no series %q", c.ID, label)
	return chart.Series{}
}

// cellTexts are the page's table cells with an id, by id.
func cellTexts(p *Page) map[string]string {
	got := map[string]string{}
	for _, s := range p.Sections {
		for _, tb := range s.Tables {
			for _, row := range tb.Rows {
				for _, c := range row {
					if c.ID != "" {
						got[c.ID] = c.Text
					}
				}
			}
		}
	}
	return got
}

// wantCells checks table cells by id; "" wants a cell with no text.
func wantCells(t *testing.T, p *Page, want map[string]string) {
	t.Helper()
	got := cellTexts(p)
	for id, w := range want {
		if g, ok := got[id]; !ok || g != w {
			t.Errorf("cell %s = %q (present %v), want %q", id, g, ok, w)
		}
	}
}

func sameFloats(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return x == y || math.IsNaN(x) && math.IsNaN(y) })
}

// conf is a confidence block of an aggregate file.
func conf(mean, lo, hi, cv float64, unit string) jsonObj {
	return jsonObj{"mean": mean, "std": 1, "min": lo, "max": hi, "cv": cv, "se": 0.5, "ci_low": lo, "ci_high": hi, "t_critical": 2.9, "unit": unit}
}

func runExport(ttftAvg, rps float64) jsonObj {
	return jsonObj{
		"time_to_first_token": jsonObj{"unit": "ms", "avg": ttftAvg, "p99": ttftAvg * 2},
		"request_throughput":  jsonObj{"unit": "requests/sec", "avg": rps},
		"input_config": jsonObj{"endpoint": jsonObj{"model_names": []string{"m1"}, "type": "chat", "streaming": true},
			"loadgen": jsonObj{"concurrency": 4}},
	}
}

func TestMultiRunPage(t *testing.T) {
	dir := t.TempDir()
	writeJSON(t, filepath.Join(dir, "aggregate", confidenceFile), jsonObj{
		"metadata": jsonObj{"aggregation_type": "confidence", "num_profile_runs": 3, "num_successful_runs": 2,
			"failed_runs": []jsonObj{{"label": "run_0002", "error": "All 5 requests failed"}}, "confidence_level": 0.9,
			"run_labels": []string{"run_0001", "run_0003"}},
		"metrics": jsonObj{
			"time_to_first_token_avg": conf(15, 12.5, 17.5, 0.1, "ms"),
			"request_throughput_avg":  conf(3, 2, 4, 0.05, "requests/sec"),
		},
	})
	writeJSON(t, filepath.Join(dir, "profile_runs", "run_0001", artifacts.ExportFile), runExport(14, 2.9))
	writeJSON(t, filepath.Join(dir, "profile_runs", "run_0003", artifacts.ExportFile), runExport(16, 3.1))
	if err := os.MkdirAll(filepath.Join(dir, "profile_runs", "run_0002"), 0o755); err != nil { // the failed run's
		t.Fatal(err)
	}

	p, err := MultiRun(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	wantCells(t, p, map[string]string{
		"mr-time_to_first_token_avg-mean": "15.00", "mr-time_to_first_token_avg-ci_low": "12.50", "mr-time_to_first_token_avg-ci_high": "17.50",
		"mr-time_to_first_token_avg-cv": "10.00%", "mr-time_to_first_token_avg-run_0001": "14.00", "mr-time_to_first_token_avg-run_0003": "16.00",
		"mr-request_throughput_avg-mean": "3.00", "mr-request_throughput_avg-run_0003": "3.10",
	})
	if c, ok := cellTexts(p)["mr-time_to_first_token_p50-mean"]; ok {
		t.Errorf("a metric the aggregate lacks has a row: %q", c)
	}
	if !strings.Contains(strings.Join(p.Warnings, "\n"), "run_0002 failed: All 5 requests failed") {
		t.Errorf("warnings %q do not name the failed run", p.Warnings)
	}
	if !strings.Contains(p.Title, "m1") || !strings.Contains(p.Title, "concurrency 4") {
		t.Errorf("title %q is not the first run's", p.Title)
	}
	c := pageChart(t, p, "time_to_first_token_avg_across_runs")
	runs, mean := seriesOf(t, c, "Runs"), seriesOf(t, c, "Mean")
	if !sameFloats(runs.X, []float64{1, 3}) || !sameFloats(runs.Y, []float64{14, 16}) {
		t.Errorf("runs series %v %v, want runs 1 and 3 at 14 and 16", runs.X, runs.Y)
	}
	if !sameFloats(mean.X, []float64{0.5, 3.5}) || !sameFloats(mean.Y, []float64{15, 15}) || !sameFloats(mean.Low, []float64{12.5, 12.5}) || !sameFloats(mean.High, []float64{17.5, 17.5}) {
		t.Errorf("mean series x %v y %v band %v–%v", mean.X, mean.Y, mean.Low, mean.High)
	}
}

// TestMultiRunPageOfASweepCell: an independent sweep's cell keeps its
// trials in profile_runs/trial_NNNN/; they are its runs.
func TestMultiRunPageOfASweepCell(t *testing.T) {
	dir := t.TempDir()
	writeJSON(t, filepath.Join(dir, "aggregate", confidenceFile), jsonObj{
		"metadata": jsonObj{"aggregation_type": "confidence", "num_profile_runs": 2, "num_successful_runs": 2, "confidence_level": 0.95},
		"metrics":  jsonObj{"time_to_first_token_avg": conf(15, 12.5, 17.5, 0.1, "ms")},
	})
	writeJSON(t, filepath.Join(dir, "profile_runs", "trial_0001", artifacts.ExportFile), runExport(14, 2.9))
	writeJSON(t, filepath.Join(dir, "profile_runs", "trial_0002", artifacts.ExportFile), runExport(16, 3.1))
	p, err := MultiRun(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	wantCells(t, p, map[string]string{"mr-time_to_first_token_avg-trial_0001": "14.00", "mr-time_to_first_token_avg-trial_0002": "16.00"})
	runs := seriesOf(t, pageChart(t, p, "time_to_first_token_avg_across_runs"), "Runs")
	if !sameFloats(runs.X, []float64{1, 2}) || !sameFloats(runs.Y, []float64{14, 16}) {
		t.Errorf("runs series %v %v, want trials 1 and 2 at 14 and 16", runs.X, runs.Y)
	}
}

// sweepCellJSON is a cell of several trials: flat blocks.
func sweepCellJSON(conc int, ttftP95, ttftP99, tput, perUser, latAvg float64) jsonObj {
	return jsonObj{"parameters": jsonObj{"concurrency": conc}, "metrics": jsonObj{
		"time_to_first_token_p95":              conf(ttftP95, ttftP95-1, ttftP95+1, 0.01, "ms"),
		"time_to_first_token_p99":              conf(ttftP99, ttftP99-2, ttftP99+3, 0.01, "ms"),
		"output_token_throughput_avg":          conf(tput, tput-10, tput+10, 0.01, "tokens/sec"),
		"output_token_throughput_per_user_avg": conf(perUser, perUser-1, perUser+1, 0.01, "tokens/sec/user"),
		"request_latency_avg":                  conf(latAvg, latAvg-5, latAvg+5, 0.01, "ms"),
	}}
}

// multiTrialSweep is a two-trial sweep over concurrency 1, 2, 4, 8 (the
// file lists the cells out of order), with an SLA on TTFT p95 < 35 and a
// run export seeing 2 GPUs.
func multiTrialSweep(t *testing.T) string {
	dir := t.TempDir()
	writeJSON(t, filepath.Join(dir, "aggregate", "sweep_aggregate", sweepSummaryFile), jsonObj{
		"aggregation_type": "sweep", "num_profile_runs": 9, "num_successful_runs": 8,
		"failed_runs": []jsonObj{{"label": "trial_0002/concurrency_8", "error": "No requests completed"}},
		"metadata": jsonObj{"sweep_parameters": []jsonObj{{"name": "concurrency", "values": []int{4, 1, 8, 2}}}, "num_combinations": 4,
			"aggregation_type": "sweep", "sweep_mode": "repeated", "confidence_level": 0.95, "num_trials_per_value": 2,
			"sla_constraints": jsonObj{"active_filters": []jsonObj{{"metric_tag": "time_to_first_token", "stat": "p95", "op": "lt", "threshold": 35}},
				"feasible_count": 3, "infeasible_count": 1}},
		"per_combination_metrics": []jsonObj{
			sweepCellJSON(4, 30, 33, 170, 44, 150),
			sweepCellJSON(1, 10, 11, 100, 50, 100),
			sweepCellJSON(8, 40, 45, 300, 20, 400),
			sweepCellJSON(2, 12, 13, 180, 45, 120),
		},
		"best_configurations": jsonObj{
			"best_throughput":  jsonObj{"parameters": jsonObj{"concurrency": 8}, "metric": 3, "unit": "requests/sec"},
			"best_latency_p99": jsonObj{"parameters": jsonObj{"concurrency": 1}, "metric": 11, "unit": "ms"},
		},
		"pareto_optimal": []jsonObj{{"concurrency": 1}, {"concurrency": 2}, {"concurrency": 8}},
	})
	export := runExport(10, 1)
	export["telemetry_data"] = jsonObj{"endpoints": jsonObj{"localhost:9400": jsonObj{"gpus": jsonObj{"gpu_0": jsonObj{}, "gpu_1": jsonObj{}}}}}
	writeJSON(t, filepath.Join(dir, "profile_runs", "trial_0001", "concurrency_1", artifacts.ExportFile), export)
	return dir
}

func TestSweepPage(t *testing.T) {
	p, err := Sweep(multiTrialSweep(t), "test")
	if err != nil {
		t.Fatal(err)
	}
	// Rows in order of concurrency: 1, 2, 4, 8.
	wantCells(t, p, map[string]string{
		"cell-0-concurrency": "1", "cell-3-concurrency": "8",
		"cell-0-output_token_throughput_avg": "100.00", "cell-2-time_to_first_token_p95": "30.00",
		"cell-0-best": "latency p99", "cell-3-best": "throughput", "cell-1-best": "",
		"cell-1-pareto": "yes", "cell-2-pareto": "",
		"cell-2-sla": "pass", "cell-3-sla": "fail", "cell-3-sla-time_to_first_token_p95": "40.00",
	})
	if !strings.Contains(strings.Join(p.Warnings, "\n"), "trial_0002/concurrency_8 failed") {
		t.Errorf("warnings %q", p.Warnings)
	}
	tests := []struct {
		id             string
		frontX, frontY []float64
	}{
		// TTFT p95 (lower better) against throughput: (30, 170) is beaten
		// by (12, 180).
		{"pareto_throughput_vs_ttft_p95", []float64{10, 12, 40}, []float64{100, 180, 300}},
		// Per-user throughput (higher better): from the right, 50/100,
		// 45/180, 44/170 is beaten, 20/300.
		{"pareto_throughput_vs_interactivity", []float64{20, 45, 50}, []float64{300, 180, 100}},
		// Per GPU (2 GPUs) against request latency avg.
		{"pareto_curve_throughput_per_gpu_vs_latency", []float64{100, 120, 400}, []float64{50, 90, 150}},
		{"pareto_curve_throughput_per_gpu_vs_interactivity", []float64{20, 45, 50}, []float64{150, 90, 50}},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			c := pageChart(t, p, tt.id)
			front := seriesOf(t, c, "Cells Pareto frontier")
			if !sameFloats(front.X, tt.frontX) || !sameFloats(front.Y, tt.frontY) {
				t.Errorf("frontier %v %v, want %v %v", front.X, front.Y, tt.frontX, tt.frontY)
			}
			if pts := seriesOf(t, c, "Cells"); !slices.Equal(pts.PointLabels, []string{"1", "2", "4", "8"}) {
				t.Errorf("point labels %v", pts.PointLabels)
			}
		})
	}
	// The TTFT p99 band is each cell's confidence interval.
	p99 := seriesOf(t, pageChart(t, p, "ttft_vs_concurrency"), "p99")
	if !sameFloats(p99.X, []float64{1, 2, 4, 8}) || !sameFloats(p99.Y, []float64{11, 13, 33, 45}) ||
		!sameFloats(p99.Low, []float64{9, 11, 31, 43}) || !sameFloats(p99.High, []float64{14, 16, 36, 48}) {
		t.Errorf("p99 series %v %v band %v–%v", p99.X, p99.Y, p99.Low, p99.High)
	}
	if c := pageChart(t, p, "ttft_vs_concurrency"); len(c.Series) != 1 || c.X.Log {
		t.Errorf("ttft_vs_concurrency: %d series (no p50 in the file), log x %v", len(c.Series), c.X.Log)
	}
}

// TestSweepSingleTrialRamp: a single-trial ramp has bare blocks (the run's
// own statistics, no interval) and a degradation knee.
func TestSweepSingleTrialRamp(t *testing.T) {
	dir := t.TempDir()
	bare := func(conc int, p99, tput float64) jsonObj {
		return jsonObj{"parameters": jsonObj{"concurrency": conc}, "metrics": jsonObj{
			"request_latency": jsonObj{"mean": p99 - 20, "avg": p99 - 20, "std": 0, "min": 1, "max": p99 + 1, "cv": 0, "ci_low": p99 - 20, "ci_high": p99 - 20,
				"unit": "ms", "p50": p99 - 15, "p99": p99, "count": 10, "sum": 10 * (p99 - 20)},
			"output_token_throughput": jsonObj{"mean": tput, "avg": tput, "std": 0, "min": tput, "max": tput, "cv": 0, "ci_low": tput, "ci_high": tput, "unit": "tokens/sec"},
		}}
	}
	writeJSON(t, filepath.Join(dir, "sweep_aggregate", sweepSummaryFile), jsonObj{
		"aggregation_type": "sweep", "num_profile_runs": 3, "num_successful_runs": 3, "failed_runs": []jsonObj{},
		"metadata": jsonObj{"sweep_parameters": []jsonObj{{"name": "concurrency", "values": []int{1, 10, 100}}}, "num_combinations": 3,
			"sweep_mode": "repeated", "confidence_level": 0.95, "num_trials_per_value": 1},
		"per_combination_metrics": []jsonObj{bare(1, 200, 50), bare(10, 230, 400), bare(100, 260, 2000)},
		"best_configurations":     jsonObj{}, "pareto_optimal": []jsonObj{},
	})
	writeJSON(t, filepath.Join(dir, "sweep_aggregate", "degradation_knee.json"), jsonObj{
		"baseline_concurrency": 1, "baseline_p99": 200, "knee_concurrency": 100, "knee_p99": 260, "threshold_pct": 0.2,
		"swept_metric": "request_latency", "stat": "p99", "swept_param": "phases.profiling.concurrency",
		"all_points": []jsonObj{{"concurrency": 1, "p99": 200}, {"concurrency": 10, "p99": 230}, {"concurrency": 100, "p99": 260}},
	})
	p, err := Sweep(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	wantCells(t, p, map[string]string{"cell-1-request_latency_p99": "230.00", "cell-1-request_latency_p50": "215.00",
		"cell-2-output_token_throughput_avg": "2,000.00", "cell-0-best": "", "cell-0-pareto": ""})
	lat := pageChart(t, p, "request_latency_vs_concurrency")
	if s := seriesOf(t, lat, "p99"); s.Low != nil || !sameFloats(s.Y, []float64{200, 230, 260}) || !lat.X.Log {
		t.Errorf("single-trial p99 %v band %v (want none), log x %v", s.Y, s.Low, lat.X.Log)
	}
	knee := pageChart(t, p, "degradation_knee")
	k := seriesOf(t, knee, "Knee")
	if !sameFloats(k.X, []float64{100}) || !sameFloats(k.Y, []float64{260}) || !slices.Equal(k.PointLabels, []string{"knee"}) {
		t.Errorf("knee %v %v %v, want at concurrency 100", k.X, k.Y, k.PointLabels)
	}
	if cut := seriesOf(t, knee, "Cutoff: baseline + 20%"); !sameFloats(cut.Y, []float64{240, 240}) || !sameFloats(cut.X, []float64{1, 100}) {
		t.Errorf("cutoff %v %v, want 240 over 1..100", cut.X, cut.Y)
	}
	if !slices.ContainsFunc(p.Facts, func(f Fact) bool { return f.Name == "Knee" && strings.HasPrefix(f.Value, "concurrency 100") }) {
		t.Errorf("facts %v lack the knee", p.Facts)
	}
}

// searchFolder is a search over concurrency with an SLA on TTFT p95 < 60:
// 1, 2 and 4 pass, 8 and 6 fail, 5 passes (its value only in its own
// aggregate); the boundary is 5, CI 5–6.
func searchFolder(t *testing.T, withSweep bool) string {
	dir := t.TempDir()
	probe := func(i, v int, objective float64, ok bool) jsonObj {
		return jsonObj{"iteration_idx": i, "variation_values": jsonObj{"phases.profiling.concurrency": v},
			"objective_values": []float64{objective}, "feasible": ok, "non_monotonic_warning": false}
	}
	writeJSON(t, filepath.Join(dir, "search_history.json"), jsonObj{
		"config": jsonObj{"planner": "monotonic_sla",
			"objectives":   []jsonObj{{"metric": "output_token_throughput", "stat": "avg", "direction": "MAXIMIZE", "threshold": nil}},
			"search_space": []jsonObj{{"path": "phases.profiling.concurrency", "lo": 1, "hi": 64, "kind": "int"}},
			"sla_filters":  []jsonObj{{"metric_tag": "time_to_first_token", "stat": "p95", "op": "lt", "threshold": 60}}},
		"iterations": []jsonObj{probe(0, 1, 100, true), probe(1, 2, 190, true), probe(2, 4, 350, true), probe(3, 64, 900, false),
			probe(4, 6, 480, false), probe(5, 5, 440, true)},
		"boundary_summary": jsonObj{"swept_dim_path": "phases.profiling.concurrency",
			"feasible_max":   jsonObj{"value": 5, "iteration_idx": 5, "objective_value": 440},
			"infeasible_min": jsonObj{"value": 6, "iteration_idx": 4, "first_breach": jsonObj{"metric_tag": "time_to_first_token", "stat": "p95", "op": "lt", "threshold": 60, "observed": 65}},
			"boundary_ci":    jsonObj{"lo": 5, "hi": 6}, "confidence_level": 0.95},
		"recipe": "max-concurrency-under-sla", "convergence_reason": "monotonic_precision_reached",
	})
	if withSweep {
		cell := func(conc int, p95 float64) jsonObj {
			return jsonObj{"parameters": jsonObj{"concurrency": conc}, "metrics": jsonObj{
				"time_to_first_token": jsonObj{"mean": p95 - 5, "avg": p95 - 5, "std": 0, "min": 1, "max": 99, "cv": 0, "ci_low": p95 - 5, "ci_high": p95 - 5, "unit": "ms", "p95": p95}}}
		}
		writeJSON(t, filepath.Join(dir, "sweep_aggregate", sweepSummaryFile), jsonObj{
			"num_profile_runs": 6, "num_successful_runs": 6, "failed_runs": []jsonObj{},
			"metadata": jsonObj{"sweep_parameters": []jsonObj{{"name": "concurrency", "values": []int{1, 2, 4, 64, 6, 5}}}, "num_combinations": 6, "num_trials_per_value": 1,
				"sla_constraints": jsonObj{"active_filters": []jsonObj{{"metric_tag": "time_to_first_token", "stat": "p95", "op": "lt", "threshold": 60}}}},
			"per_combination_metrics": []jsonObj{cell(1, 50), cell(2, 55), cell(4, 58), cell(64, 70), cell(6, 65)},
		})
		writeJSON(t, filepath.Join(dir, "aggregate", "search_iter_0005", confidenceFile), jsonObj{
			"metadata": jsonObj{"num_profile_runs": 1}, "metrics": jsonObj{"time_to_first_token_p95": conf(59, 59, 59, 0, "ms")}})
	}
	return dir
}

func TestSearchPage(t *testing.T) {
	p, err := Search(searchFolder(t, true), "test")
	if err != nil {
		t.Fatal(err)
	}
	if p.Kind != "Search" || len(p.Sections) < 2 || p.Sections[0].ID != "summary" || p.Sections[1].ID != "search" {
		t.Fatalf("kind %q, sections %v", p.Kind, p.Sections)
	}
	c := pageChart(t, p, "search_probes")
	feas, infeas := seriesOf(t, c, "Feasible"), seriesOf(t, c, "Infeasible")
	if !sameFloats(feas.X, []float64{1, 2, 4, 5}) || !sameFloats(feas.Y, []float64{50, 55, 58, 59}) {
		t.Errorf("feasible probes %v %v", feas.X, feas.Y)
	}
	if !sameFloats(infeas.X, []float64{64, 6}) || !sameFloats(infeas.Y, []float64{70, 65}) || !slices.Equal(infeas.PointLabels, []string{"#3", "#4"}) {
		t.Errorf("infeasible probes %v %v %v", infeas.X, infeas.Y, infeas.PointLabels)
	}
	if th := seriesOf(t, c, "SLA threshold: time_to_first_token:p95:lt:60"); th.Style != chart.Dashed || !sameFloats(th.Y, []float64{60, 60}) || !sameFloats(th.X, []float64{1, 64}) {
		t.Errorf("threshold %+v", th)
	}
	if lo, hi := seriesOf(t, c, "95% CI low 5"), seriesOf(t, c, "95% CI high 6"); lo.X[0] != 5 || hi.X[0] != 6 || lo.Y[0] != 50 || lo.Y[1] != 70 {
		t.Errorf("boundary CI lines %v %v / %v %v", lo.X, lo.Y, hi.X, hi.Y)
	}
	if !c.X.Log {
		t.Error("probes from 1 to 64 are not on a log axis")
	}
	wantCells(t, p, map[string]string{
		"probe-3-feasible": "no", "probe-4-feasible": "no", "probe-0-feasible": "yes", "probe-5-sla": "59.00", "probe-3-sla": "70.00",
		"probe-2-objective": "350.00", "probe-3-value": "64",
		"boundary-feasible-max": "5", "boundary-infeasible-min": "6", "boundary-ci-low": "5", "boundary-ci-high": "6",
	})
}

// TestSearchWithoutSweep: without a sweep aggregate the probes are drawn
// on their objective.
func TestSearchWithoutSweep(t *testing.T) {
	p, err := Search(searchFolder(t, false), "test")
	if err != nil {
		t.Fatal(err)
	}
	c := pageChart(t, p, "search_probes")
	if infeas := seriesOf(t, c, "Infeasible"); !sameFloats(infeas.Y, []float64{900, 480}) || c.Y.Label != "output_token_throughput avg" {
		t.Errorf("infeasible %v on %q, want the objectives", infeas.Y, c.Y.Label)
	}
	for _, s := range c.Series {
		if strings.HasPrefix(s.Label, "SLA threshold") {
			t.Error("a threshold is drawn on the objective's axis")
		}
	}
	if len(p.Warnings) == 0 {
		t.Error("no warning that the sweep aggregate is missing")
	}
}

func TestParetoChartGroups(t *testing.T) {
	groups := []pointGroup{
		{name: "a", x: []float64{1, 2, 3}, y: []float64{10, 5, 20}, labels: []string{"1", "2", "4"}},
		{name: "b", x: []float64{4, math.NaN(), 1}, y: []float64{8, 9, 8}, labels: []string{"1", "2", "4"}},
	}
	c, ok := paretoChart("p", "t", chart.Axis{}, chart.Axis{}, groups, true, true)
	if !ok || len(c.Series) != 4 {
		t.Fatalf("ok %v, %d series", ok, len(c.Series))
	}
	tests := []struct {
		label  string
		wx, wy []float64
	}{
		{"a Pareto frontier", []float64{1, 3}, []float64{10, 20}},
		// Equal y: both stay (ties); the NaN point is left out.
		{"b Pareto frontier", []float64{1, 4}, []float64{8, 8}},
	}
	for _, tt := range tests {
		s := seriesOf(t, c, tt.label)
		if !sameFloats(s.X, tt.wx) || !sameFloats(s.Y, tt.wy) || s.Color != seriesOf(t, c, strings.TrimSuffix(tt.label, " Pareto frontier")).Color {
			t.Errorf("%s: %v %v colour %s", tt.label, s.X, s.Y, s.Color)
		}
	}
}

// TestRunsFixtures draws AIPerf's own three runs (concurrency 1, 2, 4,
// two GPUs of telemetry each) and checks the charts against the exports,
// read here independently.
func TestRunsFixtures(t *testing.T) {
	var runs []*artifacts.Run
	var ttft, rps, perGPU []float64
	for _, c := range []string{"1", "2", "4"} {
		dir := "../../../shared/fixtures/aiperf-exports/qwen_concurrency" + c
		r, err := artifacts.LoadRun(dir, artifacts.DefaultNames, RecordTags...)
		if err != nil {
			t.Skipf("fixture: %v", err)
		}
		runs = append(runs, r)
		b, err := os.ReadFile(filepath.Join(dir, artifacts.ExportFile))
		if err != nil {
			t.Fatal(err)
		}
		var ex struct {
			TTFT struct {
				Avg float64 `json:"avg"`
			} `json:"time_to_first_token"`
			RPS struct {
				Avg float64 `json:"avg"`
			} `json:"request_throughput"`
			OTPS struct {
				Avg float64 `json:"avg"`
			} `json:"output_token_throughput"`
			Telemetry struct {
				Endpoints map[string]struct {
					GPUs map[string]any `json:"gpus"`
				} `json:"endpoints"`
			} `json:"telemetry_data"`
		}
		if err := json.Unmarshal(b, &ex); err != nil {
			t.Fatal(err)
		}
		gpus := 0
		for _, e := range ex.Telemetry.Endpoints {
			gpus += len(e.GPUs)
		}
		ttft, rps, perGPU = append(ttft, ex.TTFT.Avg), append(rps, ex.RPS.Avg), append(perGPU, ex.OTPS.Avg/float64(gpus))
	}
	p := Runs(runs, "test")
	c := pageChart(t, p, "ttft_vs_throughput")
	if len(c.Series) != 1 {
		t.Fatalf("one model, %d series", len(c.Series))
	}
	s := c.Series[0]
	if s.Label != "Qwen/Qwen3-0.6B" || !sameFloats(s.X, ttft) || !sameFloats(s.Y, rps) || !slices.Equal(s.PointLabels, []string{"1", "2", "4"}) || s.Style != chart.LinePoints {
		t.Errorf("ttft_vs_throughput %q %v %v %v, want %v %v", s.Label, s.X, s.Y, s.PointLabels, ttft, rps)
	}
	if pts := seriesOf(t, pageChart(t, p, "pareto_curve_throughput_per_gpu_vs_latency"), "Qwen/Qwen3-0.6B"); !sameFloats(pts.Y, perGPU) {
		t.Errorf("per-GPU throughput %v, want %v", pts.Y, perGPU)
	}
	pageChart(t, p, "pareto_curve_throughput_per_gpu_vs_interactivity")
	pageChart(t, p, "pareto_throughput_vs_ttft_p95")
	for _, id := range []string{"ttft_cdf", "latency_cdf"} {
		if n := len(pageChart(t, p, id).Series); n != 3 {
			t.Errorf("%s: %d curves, want one per run", id, n)
		}
	}
	wantCells(t, p, map[string]string{"run-0-concurrency": "1", "run-2-concurrency": "4", "run-1-gpus": "2"})
}

// TestPagesRender: every page renders, with its tables.
func TestPagesRender(t *testing.T) {
	build := func(f func(string, string) (*Page, error), dir string) func() (*Page, error) {
		return func() (*Page, error) { return f(dir, "test") }
	}
	mr := t.TempDir()
	writeJSON(t, filepath.Join(mr, "aggregate", confidenceFile), jsonObj{"metadata": jsonObj{"num_profile_runs": 2, "num_successful_runs": 2, "confidence_level": 0.95},
		"metrics": jsonObj{"request_latency_p99": conf(100, 90, 110, 0.1, "ms")}})
	tests := []struct {
		name   string
		page   func() (*Page, error)
		tables []string
	}{
		{"multi-run", build(MultiRun, mr), []string{"multirun-metrics"}},
		{"sweep", build(Sweep, multiTrialSweep(t)), []string{"sweep-cells"}},
		{"search", build(Search, searchFolder(t, true)), []string{"sweep-cells", "search-probes", "search-boundary"}},
		{"runs", func() (*Page, error) {
			r := &artifacts.Run{Dir: "/x/a", Metrics: map[string]artifacts.Metric{"time_to_first_token": {Unit: "ms", Stats: map[string]float64{"avg": 3}}}}
			return Runs([]*artifacts.Run{r, {Dir: "/y/a"}}, "test"), nil
		}, []string{"runs-table"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := tt.page()
			if err != nil {
				t.Fatal(err)
			}
			html, err := Render(p)
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range tt.tables {
				if !strings.Contains(string(html), `id="`+id+`"`) {
					t.Errorf("no table %s", id)
				}
			}
			seen := map[string]bool{}
			for _, c := range p.Charts() {
				if seen[c.ID] {
					t.Errorf("chart id %s twice", c.ID)
				}
				seen[c.ID] = true
			}
		})
	}
}

func TestMissingFolders(t *testing.T) {
	dir := t.TempDir()
	if _, err := MultiRun(dir, "t"); err == nil {
		t.Error("MultiRun of an empty folder")
	}
	if _, err := Sweep(dir, "t"); err == nil {
		t.Error("Sweep of an empty folder")
	}
	if _, err := Search(dir, "t"); err == nil {
		t.Error("Search of an empty folder")
	}
}

package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"

	"github.com/llmbench/llmbench/internal/artifacts"
	"github.com/llmbench/llmbench/internal/chart"
)

// confidenceAggregate is profile_export_aiperf_aggregate.json: the
// confidence statistics, across runs, of every run's statistics.
type confidenceAggregate struct {
	Metadata struct {
		NumProfileRuns    int         `json:"num_profile_runs"`
		NumSuccessfulRuns int         `json:"num_successful_runs"`
		FailedRuns        []failedRun `json:"failed_runs"`
		ConfidenceLevel   float64     `json:"confidence_level"`
		RunLabels         []string    `json:"run_labels"`
	} `json:"metadata"`
	// Metrics are keyed <tag>_<stat>; a value that was not finite is
	// left out of the file (nil here).
	Metrics map[string]confidenceStat `json:"metrics"`
}

type failedRun struct {
	Label string `json:"label"`
	Error string `json:"error"`
}

type confidenceStat struct {
	Mean   *float64 `json:"mean"`
	CV     *float64 `json:"cv"`
	CILow  *float64 `json:"ci_low"`
	CIHigh *float64 `json:"ci_high"`
	Unit   string   `json:"unit"`
}

// val is a number of the file: ok is false when it is absent.
func val(p *float64) (float64, bool) {
	if p == nil {
		return math.NaN(), false
	}
	return *p, true
}

// keyMetric is one statistic a multi-run page sets out run by run.
type keyMetric struct {
	tag, stat, name, unit string
}

func (k keyMetric) key() string { return k.tag + "_" + k.stat }

// multiRunKeys are TTFT, ITL and request latency (avg, p50, p99), then
// output token and request throughput.
func multiRunKeys() []keyMetric {
	var out []keyMetric
	for _, m := range latencyMetrics {
		for _, st := range []string{"avg", "p50", "p99"} {
			out = append(out, keyMetric{tag: m.Tag, stat: st, name: m.Short + " " + st})
		}
	}
	return append(out, keyMetric{tag: "output_token_throughput", stat: "avg", name: "Output token throughput"},
		keyMetric{tag: "request_throughput", stat: "avg", name: "Request throughput"})
}

// confidenceFile is a multi-run's (or a sweep cell's) confidence
// aggregate, in aggregate/.
const confidenceFile = "profile_export_aiperf_aggregate.json"

// runDirName is a run's folder under profile_runs/: run_NNNN, or a
// sweep cell's trial_NNNN (--parameter-sweep-mode independent).
var runDirName = regexp.MustCompile(`^(?:run|trial)_(\d+)$`)

// MultiRun is the page of a --num-profile-runs folder: its confidence
// aggregate (dir/aggregate/) beside each run's own numbers
// (dir/profile_runs/run_NNNN/, or a sweep cell's trial_NNNN/).
func MultiRun(dir, generator string) (*Page, error) {
	path := filepath.Join(dir, "aggregate", confidenceFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("multi-run report: %w", err)
	}
	var agg confidenceAggregate
	if err := json.Unmarshal(b, &agg); err != nil {
		return nil, fmt.Errorf("multi-run report: read %s: %w", path, err)
	}
	p := &Page{Kind: "Multi-run", Title: "Multi-run benchmark", Generator: generator}
	runs, nums, warnings := loadProfileRuns(filepath.Join(dir, "profile_runs"))
	p.Warnings = append(p.Warnings, warnings...)
	for _, f := range agg.Metadata.FailedRuns {
		p.Warnings = append(p.Warnings, fmt.Sprintf("%s failed: %s. It is left out of the aggregate.", f.Label, f.Error))
	}
	if n := agg.Metadata.NumSuccessfulRuns; agg.Metadata.NumProfileRuns > 0 && n < 2 {
		p.Warnings = append(p.Warnings, fmt.Sprintf("Only %d run succeeded: the confidence intervals need at least two.", n))
	}
	level := agg.Metadata.ConfidenceLevel
	if level <= 0 {
		level = 0.95
	}
	p.Facts = multiRunFacts(dir, &agg, runs, level)
	if len(runs) > 0 {
		p.Title = runTitle(runs[0])
	}
	labels := make([]string, len(runs))
	for i, r := range runs {
		labels[i] = filepath.Base(r.Dir)
	}
	keys := multiRunKeys()
	p.Sections = append(p.Sections, multiRunTable(&agg, keys, runs, labels, level))
	if s, ok := multiRunCharts(&agg, keys, runs, nums, level); ok {
		p.Sections = append(p.Sections, s)
	}
	if s, ok := perRunCDFs(runs, labels); ok {
		p.Sections = append(p.Sections, s)
	}
	if len(runs) > 0 {
		p.Sections = append(p.Sections, configSection(runs[0]))
	}
	return p, nil
}

// loadProfileRuns reads every run_NNNN folder of dir in number order, with
// its number; a folder that cannot be read becomes a warning (a failed run
// leaves one without results).
func loadProfileRuns(dir string) (runs []*artifacts.Run, nums []float64, warnings []string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			warnings = append(warnings, fmt.Sprintf("The runs' folders could not be read: %v", err))
		}
		return nil, nil, warnings
	}
	type numbered struct {
		name string
		n    int
	}
	var found []numbered
	for _, e := range entries {
		if m := runDirName.FindStringSubmatch(e.Name()); m != nil && e.IsDir() {
			n, _ := strconv.Atoi(m[1])
			found = append(found, numbered{e.Name(), n})
		}
	}
	slices.SortFunc(found, func(a, b numbered) int { return a.n - b.n })
	for _, f := range found {
		r, err := artifacts.LoadRun(filepath.Join(dir, f.name), artifacts.DefaultNames, RecordTags...)
		switch {
		case errors.Is(err, artifacts.ErrNotARun):
			continue
		case err != nil:
			warnings = append(warnings, fmt.Sprintf("%s could not be read: %v", f.name, err))
			continue
		}
		runs, nums = append(runs, r), append(nums, float64(f.n))
	}
	return runs, nums, warnings
}

func multiRunFacts(dir string, agg *confidenceAggregate, runs []*artifacts.Run, level float64) []Fact {
	var out []Fact
	if len(runs) > 0 {
		for _, f := range runFacts(runs[0]) {
			switch f.Name {
			case "Model", "Endpoint", "Load", "Seed", "Written by":
				out = append(out, f)
			case "Started":
				out = append(out, Fact{"First run started", f.Value})
			}
		}
		if end := humanTime(runs[len(runs)-1].String("end_time")); end != "" {
			out = append(out, Fact{"Last run ended", end})
		}
	}
	md := agg.Metadata
	out = append(out, Fact{"Runs", fmt.Sprintf("%d of %d succeeded", md.NumSuccessfulRuns, md.NumProfileRuns)},
		Fact{"Confidence level", strconv.FormatFloat(level*100, 'f', -1, 64) + "%"},
		Fact{"Folder", dir})
	return out
}

// multiRunTable sets each key metric's mean, confidence interval and CV
// beside every run's own value.
func multiRunTable(agg *confidenceAggregate, keys []keyMetric, runs []*artifacts.Run, labels []string, level float64) Section {
	s := Section{ID: "summary", Title: "Summary"}
	pct := strconv.FormatFloat(level*100, 'f', -1, 64)
	t := Table{ID: "multirun-metrics",
		Caption: fmt.Sprintf("The mean over the successful runs, the %s%% confidence interval of the mean (Student's t), the coefficient of variation, and each run's value.", pct),
		Header:  []string{"Metric", "Mean", "CI low (" + pct + "%)", "CI high (" + pct + "%)", "CV"}}
	t.Header = append(t.Header, labels...)
	for _, k := range keys {
		st, ok := agg.Metrics[k.key()]
		if !ok {
			continue
		}
		name := k.name
		if st.Unit != "" {
			name += " (" + st.Unit + ")"
		}
		id := "mr-" + k.key()
		mean, okm := val(st.Mean)
		lo, okl := val(st.CILow)
		hi, okh := val(st.CIHigh)
		cv, okc := val(st.CV)
		cvText := "–"
		if okc {
			cvText = fmt.Sprintf("%.2f%%", 100*cv)
		}
		row := []Cell{{Text: name}, {Text: number(mean, okm), ID: id + "-mean"}, {Text: number(lo, okl), ID: id + "-ci_low"},
			{Text: number(hi, okh), ID: id + "-ci_high"}, {Text: cvText, ID: id + "-cv"}}
		for i, r := range runs {
			v, ok := r.Stat(k.tag, k.stat)
			row = append(row, Cell{Text: number(v, ok), ID: id + "-" + labels[i]})
		}
		t.Rows = append(t.Rows, row)
	}
	s.Tables = append(s.Tables, t)
	return s
}

// multiRunCharts draws, for each key metric, every run's value with the
// mean as a line and its confidence interval shaded over the runs' span.
func multiRunCharts(agg *confidenceAggregate, keys []keyMetric, runs []*artifacts.Run, nums []float64, level float64) (Section, bool) {
	pct := strconv.FormatFloat(level*100, 'f', -1, 64)
	s := Section{ID: "runs", Title: "Each metric's runs",
		Intro: fmt.Sprintf("Each point is one run's value; the line is the mean over the runs and the shaded band its %s%% confidence interval.", pct)}
	// The band spans the runs, half a run beyond the first and the last,
	// so that no point sits on the chart's edge.
	x0, x1 := 1.0, float64(max(1, agg.Metadata.NumProfileRuns))
	if len(nums) > 0 {
		x0, x1 = nums[0], nums[len(nums)-1]
	}
	x0, x1 = x0-0.5, x1+0.5
	for _, k := range keys {
		st, ok := agg.Metrics[k.key()]
		if !ok {
			continue
		}
		c := chart.Chart{ID: k.key() + "_across_runs", Title: fmt.Sprintf("%s of each run, with the mean and its %s%% confidence interval", k.name, pct),
			X: chart.Axis{Label: "Run"}, Y: chart.Axis{Label: k.name}}
		if st.Unit != "" {
			c.Y.Label += " (" + st.Unit + ")"
		}
		ys := make([]float64, len(runs))
		for i, r := range runs {
			if v, ok := r.Stat(k.tag, k.stat); ok {
				ys[i] = v
			} else {
				ys[i] = math.NaN()
			}
		}
		if len(runs) > 0 {
			c.Series = append(c.Series, chart.Series{Label: "Runs", Style: chart.Points, X: slices.Clone(nums), Y: ys})
		}
		if mean, ok := val(st.Mean); ok {
			ms := chart.Series{Label: "Mean", Style: chart.Line, X: []float64{x0, x1}, Y: []float64{mean, mean}}
			lo, okl := val(st.CILow)
			hi, okh := val(st.CIHigh)
			if okl && okh {
				ms.Low, ms.High = []float64{lo, lo}, []float64{hi, hi}
			}
			c.Series = append(c.Series, ms)
		}
		if !c.Empty() {
			s.Charts = append(s.Charts, c)
		}
	}
	return s, len(s.Charts) > 0
}

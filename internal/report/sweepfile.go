package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/llmbench/llmbench/internal/artifacts"
	"github.com/llmbench/llmbench/internal/sla"
)

// sweepSummary is profile_export_aiperf_sweep.json as llmbench and AIPerf
// write it.
type sweepSummary struct {
	NumProfileRuns    int         `json:"num_profile_runs"`
	NumSuccessfulRuns int         `json:"num_successful_runs"`
	FailedRuns        []failedRun `json:"failed_runs"`
	Metadata          struct {
		SweepParameters []struct {
			Name   string            `json:"name"`
			Values []json.RawMessage `json:"values"`
		} `json:"sweep_parameters"`
		NumCombinations   int             `json:"num_combinations"`
		SweepMode         string          `json:"sweep_mode"`
		ConfidenceLevel   float64         `json:"confidence_level"`
		NumTrialsPerValue int             `json:"num_trials_per_value"`
		SLAConstraints    *slaConstraints `json:"sla_constraints"`
	} `json:"metadata"`
	Cells []struct {
		Parameters map[string]json.RawMessage            `json:"parameters"`
		Metrics    map[string]map[string]json.RawMessage `json:"metrics"`
	} `json:"per_combination_metrics"`
	Best map[string]struct {
		Parameters map[string]json.RawMessage `json:"parameters"`
	} `json:"best_configurations"`
	Pareto []map[string]json.RawMessage `json:"pareto_optimal"`
	// SLAConstraints at the top level: the files write them under
	// metadata; read here too for a writer that puts them beside it.
	SLAConstraints *slaConstraints `json:"sla_constraints"`
}

type slaConstraints struct {
	ActiveFilters   []sla.Filter `json:"active_filters"`
	FeasibleCount   int          `json:"feasible_count"`
	InfeasibleCount int          `json:"infeasible_count"`
}

// sweepData is a sweep folder as its page draws it.
type sweepData struct {
	dir, aggDir string // the folder; the sweep aggregate's folder
	sum         sweepSummary
	params      []string // the parameters' names, in the file's order
	primary     string   // the parameter drawn on the x axes
	cells       []sweepCell
	filters     []sla.Filter
	// run is a cell's run export (configuration, GPU count); nil when no
	// run folder was found.
	run  *artifacts.Run
	gpus int
}

// sweepCell is one entry of per_combination_metrics.
type sweepCell struct {
	text   map[string]string  // parameter values as written
	num    map[string]float64 // and as numbers (NaN when not one)
	blocks map[string]block
	best   []string // the best_configurations it is
	pareto bool
}

// block is one of a cell's metrics: a flat block (<tag>_<stat>, the
// statistics across a cell's trials) or, for a single-trial cell, a bare
// one (<tag>, the run's own statistics, with "avg").
type block struct {
	unit   string
	fields map[string]float64 // null fields are left out
}

func (b block) get(f string) (float64, bool) {
	v, ok := b.fields[f]
	return v, ok && !math.IsNaN(v) && !math.IsInf(v, 0)
}

func (b block) bare() bool { _, ok := b.fields["avg"]; return ok }

// cellStat is a cell's value of a statistic, with its confidence interval
// when the cell had several trials.
type cellStat struct {
	v, lo, hi float64
	unit      string
	ok, ci    bool
}

// stat reads tag's statistic st as the sweep aggregate's readers do: the
// mean of the flat block <tag>_<st>, else the field st of the bare block
// <tag> (a single run has no interval).
func (c *sweepCell) stat(tag, st string) cellStat {
	out := cellStat{v: math.NaN(), lo: math.NaN(), hi: math.NaN()}
	if b, ok := c.blocks[tag+"_"+st]; ok && !b.bare() {
		out.v, out.ok = b.get("mean")
		out.unit = b.unit
		lo, okl := b.get("ci_low")
		hi, okh := b.get("ci_high")
		if okl && okh {
			out.lo, out.hi, out.ci = lo, hi, true
		}
		return out
	}
	if b, ok := c.blocks[tag]; ok && b.bare() {
		out.v, out.ok = b.get(st)
		out.unit = b.unit
	}
	return out
}

// slaValue is the value a filter is judged on, by AIPerf's sweep rule:
// the flat block's mean, else the bare block's field, else its mean.
func (c *sweepCell) slaValue(f sla.Filter) float64 {
	if s := c.stat(f.Tag, f.Stat); s.ok {
		return s.v
	}
	if b, ok := c.blocks[f.Tag]; ok {
		if v, ok := b.get("mean"); ok {
			return v
		}
	}
	return math.NaN()
}

// matches says whether the cell has every value of a parameters object.
func (c *sweepCell) matches(params map[string]json.RawMessage) bool {
	for name, raw := range params {
		text, n := valueText(raw)
		if cn, ok := c.num[name]; ok && !math.IsNaN(cn) && !math.IsNaN(n) {
			if cn != n {
				return false
			}
		} else if c.text[name] != text {
			return false
		}
	}
	return len(params) > 0
}

// valueText is a parameter value as written (a string without its
// quotes), and as a number (NaN when it is not one).
func valueText(raw json.RawMessage) (string, float64) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, math.NaN()
	}
	text := strings.TrimSpace(string(raw))
	n, err := strconv.ParseFloat(text, 64)
	if err != nil {
		n = math.NaN()
	}
	return text, n
}

// sweepSummaryFile is the sweep aggregate's name.
const sweepSummaryFile = "profile_export_aiperf_sweep.json"

// regular says whether path is a regular file.
func regular(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// sweepAggregatePath finds profile_export_aiperf_sweep.json: in
// sweep_aggregate/, or in aggregate/sweep_aggregate/ for several trials.
func sweepAggregatePath(dir string) (string, error) {
	for _, p := range []string{filepath.Join(dir, "sweep_aggregate", sweepSummaryFile), filepath.Join(dir, "aggregate", "sweep_aggregate", sweepSummaryFile)} {
		if regular(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: no sweep_aggregate/%s (nor aggregate/sweep_aggregate/): %w", dir, sweepSummaryFile, fs.ErrNotExist)
}

func loadSweep(dir string) (*sweepData, error) {
	path, err := sweepAggregatePath(dir)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	d := &sweepData{dir: dir, aggDir: filepath.Dir(path)}
	if err := json.Unmarshal(b, &d.sum); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	most := 0
	for _, p := range d.sum.Metadata.SweepParameters {
		d.params = append(d.params, p.Name)
		if len(p.Values) > most {
			d.primary, most = p.Name, len(p.Values)
		}
	}
	for _, sc := range []*slaConstraints{d.sum.Metadata.SLAConstraints, d.sum.SLAConstraints} {
		if sc != nil && len(d.filters) == 0 {
			d.filters = sc.ActiveFilters
		}
	}
	for _, raw := range d.sum.Cells {
		c := sweepCell{text: map[string]string{}, num: map[string]float64{}, blocks: make(map[string]block, len(raw.Metrics))}
		for name, v := range raw.Parameters {
			c.text[name], c.num[name] = valueText(v)
			if !slices.Contains(d.params, name) {
				d.params = append(d.params, name)
			}
		}
		for key, fields := range raw.Metrics {
			bl := block{fields: make(map[string]float64, len(fields))}
			for f, v := range fields {
				if f == "unit" {
					_ = json.Unmarshal(v, &bl.unit)
				} else if x, err := strconv.ParseFloat(string(v), 64); err == nil {
					bl.fields[f] = x
				}
			}
			c.blocks[key] = bl
		}
		for key, best := range d.sum.Best {
			if c.matches(best.Parameters) {
				c.best = append(c.best, strings.ReplaceAll(strings.TrimPrefix(key, "best_"), "_", " "))
			}
		}
		slices.Sort(c.best)
		c.pareto = slices.ContainsFunc(d.sum.Pareto, c.matches)
		d.cells = append(d.cells, c)
	}
	if d.primary == "" && len(d.params) > 0 {
		d.primary = d.params[0]
	}
	slices.SortStableFunc(d.cells, func(a, b sweepCell) int {
		for _, p := range d.params {
			if c := cmp.Compare(a.num[p], b.num[p]); c != 0 {
				return c
			}
			if c := strings.Compare(a.text[p], b.text[p]); c != 0 {
				return c
			}
		}
		return 0
	})
	d.run, d.gpus = findCellRun(dir)
	return d, nil
}

// findCellRun reads the first run export under dir (a cell's run), for
// its configuration and GPU count; records are not read.
func findCellRun(dir string) (*artifacts.Run, int) {
	var found string
	_ = filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil // an unreadable folder is passed over
		}
		if !e.IsDir() && e.Name() == artifacts.ExportFile {
			found = path
			return filepath.SkipAll
		}
		return nil
	})
	b, err := os.ReadFile(found)
	if found == "" || err != nil {
		return nil, 0
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(b, &top) != nil {
		return nil, 0
	}
	return &artifacts.Run{Dir: filepath.Dir(found), Export: top}, gpuCount(top)
}

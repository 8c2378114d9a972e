package config

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/llmbench/llmbench/internal/sla"
)

// Sweep is what turns one profile into several: AIPerf's comma lists
// ("magic lists", --concurrency 1,4,16) and how they combine.
type Sweep struct {
	// Lists are the comma lists given, by canonical flag name, as typed
	// (each item already checked to be a valid value of its flag).
	Lists map[string][]string
	// Type is grid (Cartesian product) or zip (element-wise).
	Type string
	// Cooldown is the pause between cells.
	Cooldown time.Duration
	// SameSeed gives every cell the base seed instead of seed + index.
	SameSeed bool
	// Mode orders cells and trials: repeated (trial outer loop) or
	// independent (cell outer loop).
	Mode string
	// NoTable suppresses the per-cell table reprinted after each cell.
	NoTable bool
}

// Sweep types and orders.
const (
	SweepGrid        = "grid"
	SweepZip         = "zip"
	SweepRepeated    = "repeated"
	SweepIndependent = "independent"
)

// SweepParam ties a sweepable flag to the dotted path AIPerf names it by
// in sweep labels, directory names and exports.
type SweepParam struct {
	Flag string // canonical flag name
	Path string
	Int  bool
}

// SweepParams are the options that take a comma list, in AIPerf's order.
// --prefill-concurrency and --num-users, AIPerf's other two, are not
// options of llmbench.
var SweepParams = []SweepParam{
	{"concurrency", "phases.profiling.concurrency", true},
	{"request-rate", "phases.profiling.rate", false},
	{"request-count", "phases.profiling.requests", true},
	{"benchmark-duration", "phases.profiling.duration", false},
	{"num-dataset-entries", "phases.profiling.sessions", true},
	{"conversation-turn-mean", "datasets.main.turns.mean", true},
	{"synthetic-input-tokens-mean", "datasets.main.prompts.isl.mean", true},
	{"synthetic-input-tokens-stddev", "datasets.main.prompts.isl.stddev", false},
	{"output-tokens-mean", "datasets.main.prompts.osl.mean", true},
	{"output-tokens-stddev", "datasets.main.prompts.osl.stddev", false},
}

// SweepParamOf finds a sweepable option by its flag name, its alias isl
// or osl (the names pareto-sweep's scenarios use), or its path.
func SweepParamOf(nameOrPath string) (SweepParam, bool) {
	switch nameOrPath {
	case "isl":
		nameOrPath = "synthetic-input-tokens-mean"
	case "osl":
		nameOrPath = "output-tokens-mean"
	}
	for _, s := range SweepParams {
		if s.Flag == nameOrPath || s.Path == nameOrPath {
			return s, true
		}
	}
	return SweepParam{}, false
}

// WasSet reports whether the command line gave flag name (canonical).
func (p *Profile) WasSet(name string) bool { return p.set[name] }

// Swept reports whether the command line gave any comma list.
func (p *Profile) Swept() bool { return len(p.Sweep.Lists) > 0 }

// Set gives flag name the value v, as the command line would; it is how a
// sweep or a search sets a cell's values on a freshly parsed profile
// before Finish.
func (f *Flags) Set(name, v string) error { return f.fs.Set(name, v) }

// sweepable lets a flag take a comma list. One item sets the value as
// before; several set the first (the base configuration's placeholder)
// and record the list for the sweep. Every item must be a valid value.
type sweepable struct {
	flag.Value
	name  string
	lists map[string][]string
}

func (s sweepable) Set(v string) error {
	var items []string
	for _, it := range strings.Split(v, ",") {
		if it = strings.TrimSpace(it); it != "" {
			items = append(items, it)
		}
	}
	if len(items) == 0 {
		return fmt.Errorf("%q holds no value", v)
	}
	for _, it := range items {
		if err := s.Value.Set(it); err != nil {
			return err
		}
	}
	if err := s.Value.Set(items[0]); err != nil {
		return err
	}
	if len(items) > 1 {
		s.lists[s.name] = items
	} else {
		delete(s.lists, s.name)
	}
	return nil
}

// Search is an SLA search or a search recipe (--search-recipe) and the
// limits it searches within.
type Search struct {
	Recipe string
	// SLAs are the --search-sla filters, in command-line order; the
	// shorthand flags below add theirs first.
	SLAs []sla.Filter
	// Shorthand SLA flags (0: not given).
	TTFTms, ITLms, TPOTms, E2Ems float64
	ErrorRate                    float64
	SLOAttainment                float64
	// Grid and search ranges (0: the recipe's default).
	ConcurrencyMin, ConcurrencyMax, ConcurrencySteps int
	ISLMin, ISLMax, ISLSteps                         int
	OSLMin, OSLMax, OSLSteps                         int
	ISLOSLPairs                                      string
	DegradationThreshold                             float64
	DegradationMetric, DegradationStat               string
	MaxIterations                                    int
	Style                                            string
	// WarmupSeconds is each probe's own warm-up at the probed load, so a
	// queue left by the previous probe does not leak into it.
	WarmupSeconds float64
	// MaxTrialsPerProbe bounds the runs one probe may take when its
	// verdict is still uncertain (llmbench's confidence-driven search).
	MaxTrialsPerProbe int
}

// refusedSearchFlags are AIPerf's search options llmbench does not build,
// with the one line that says what to use instead.
var refusedSearchFlags = map[string]string{
	"search-space":              "--search-space (Bayesian optimisation over a free search space) is not built: llmbench searches one dimension, concurrency; use --search-recipe max-concurrency-under-sla (or max-throughput-ttft-sla) with --concurrency-min/--concurrency-max",
	"search-metric":             "--search-metric belongs to --search-space, which is not built: use a --search-recipe",
	"search-stat":               "--search-stat belongs to --search-space, which is not built: use a --search-recipe",
	"search-direction":          "--search-direction belongs to --search-space, which is not built: use a --search-recipe",
	"search-planner":            "--search-planner is not built: use --search-recipe max-concurrency-under-sla with --search-style confident, smooth_isotonic or monotonic",
	"search-initial-points":     "--search-initial-points configures Bayesian optimisation, which is not built: the BO recipes run llmbench's boundary search (see the README's Finding capacity)",
	"search-random-seed":        "--search-random-seed configures Bayesian optimisation, which is not built: the BO recipes run llmbench's boundary search (see the README's Finding capacity)",
	"search-percentile-pooling": "--search-percentile-pooling is not needed: llmbench always decides a percentile SLA on the pooled per-request samples of a probe's trials",
	"search-sla-tier":           "--search-sla-tier (the multi-tier planner) is not built: run one search per tier with --search-sla",
	"optuna-sampler":            "--optuna-sampler: Optuna is not built into llmbench; use --search-recipe max-concurrency-under-sla, which finds the same optimum on one dimension",
	"optuna-acquisition":        "--optuna-acquisition: Optuna is not built into llmbench; use --search-recipe max-concurrency-under-sla, which finds the same optimum on one dimension",
	"optuna-terminator":         "--optuna-terminator: Optuna is not built into llmbench; use --search-recipe max-concurrency-under-sla, which finds the same optimum on one dimension",
	"variant":                   "--variant (named scenario sweeps) is not built: use comma lists (--concurrency 1,4,16) with --sweep-type grid or zip",
	"sweep-variant":             "--sweep-variant (named scenario sweeps) is not built: use comma lists (--concurrency 1,4,16) with --sweep-type grid or zip",
	"convergence-metric":        "--convergence-metric (stopping trials early) is not built: set --num-profile-runs",
	"vary-seed-per-trial":       "--vary-seed-per-trial is not built: trials share the cell's seed (--set-consistent-seed) or draw their own (--no-set-consistent-seed)",
}

// refused is a flag that is known but refused, with why.
type refused struct{ why string }

func (r refused) Set(string) error { return errors.New(r.why) }
func (r refused) String() string   { return "" }

// bindSweepFlags registers the sweep and search options.
func (f *Flags) bindSweepFlags() {
	sw, se := &f.p.Sweep, &f.p.Search
	f.section("Parameter Sweep")
	f.vars((*stringValue)(&sw.Type), "How several comma lists combine: grid (every combination) or zip (the i-th value of each).", "sweep-type")
	f.vars((*secondsValue)(&sw.Cooldown), "Seconds to wait between sweep cells.", "parameter-sweep-cooldown-seconds")
	f.bools(&sw.SameSeed, "Give every sweep cell the same --random-seed (otherwise seed + cell index).", "parameter-sweep-same-seed")
	f.vars((*stringValue)(&sw.Mode), "Order of cells and trials: repeated (every cell, then again per trial) or independent (all trials of a cell, then the next).", "parameter-sweep-mode")
	f.vars(boolValue{&sw.NoTable}, "Do not reprint the table of finished cells after each cell.", "no-sweep-table")

	f.section("Search")
	f.vars((*stringValue)(&se.Recipe), "Search recipe: max-concurrency-under-sla, max-throughput-ttft-sla, max-throughput-itl-sla, max-goodput-under-slo, concurrency-ramp, prefill-ttft-curve, decode-itl-curve or pareto-sweep.", "search-recipe")
	f.vars(slaList{&se.SLAs}, "SLA filter TAG:STAT:OP:THRESHOLD (op lt, le, gt or ge; threshold in the metric's unit), e.g. time_to_first_token:p95:lt:200; repeatable.", "search-sla")
	f.vars((*floatValue)(&se.TTFTms), "TTFT SLA in ms (time_to_first_token p95 below it).", "ttft-sla-ms")
	f.vars((*floatValue)(&se.ITLms), "Inter-token latency SLA in ms (inter_token_latency p95 below it).", "itl-sla-ms")
	f.vars((*floatValue)(&se.TPOTms), "Alias SLA on inter_token_latency p95, ms.", "tpot-sla-ms")
	f.vars((*floatValue)(&se.E2Ems), "Request latency SLA in ms (request_latency p99 below it).", "e2e-sla-ms")
	f.vars((*floatValue)(&se.ErrorRate), "Highest error fraction, 0 to 1 (request_error_rate below 100× it, in percent).", "error-rate-sla")
	f.vars((*floatValue)(&se.SLOAttainment), "max-goodput-under-slo: lowest fraction of good requests.", "slo-attainment-fraction")
	f.vars((*stringValue)(&se.Style), "max-concurrency-under-sla planner: confident (llmbench's: each verdict at stated confidence), smooth_isotonic or monotonic (AIPerf's), grid.", "search-style")
	f.vars((*intValue)(&se.MaxIterations), "Most probes of an adaptive search (2-200).", "search-max-iterations")
	f.vars((*intValue)(&se.ConcurrencyMin), "Lowest concurrency of a recipe's grid or search.", "concurrency-min")
	f.vars((*intValue)(&se.ConcurrencyMax), "Highest concurrency of a recipe's grid or search.", "concurrency-max")
	f.vars((*intValue)(&se.ConcurrencySteps), "Log-spaced concurrency points of a recipe's grid.", "concurrency-steps")
	f.vars((*intValue)(&se.ISLMin), "prefill-ttft-curve: lowest ISL.", "isl-min")
	f.vars((*intValue)(&se.ISLMax), "prefill-ttft-curve: highest ISL.", "isl-max")
	f.vars((*intValue)(&se.ISLSteps), "prefill-ttft-curve: log-spaced ISL points.", "isl-steps")
	f.vars((*intValue)(&se.OSLMin), "decode-itl-curve: lowest OSL.", "osl-min")
	f.vars((*intValue)(&se.OSLMax), "decode-itl-curve: highest OSL.", "osl-max")
	f.vars((*intValue)(&se.OSLSteps), "decode-itl-curve: log-spaced OSL points.", "osl-steps")
	f.vars((*stringValue)(&se.ISLOSLPairs), "pareto-sweep shapes, crossed with the --concurrency list (1,4,16,64,256 unless given).", "isl-osl-pairs")
	f.vars((*floatValue)(&se.DegradationThreshold), "concurrency-ramp: the knee is where the metric exceeds its lowest-load value × (1 + this).", "degradation-threshold")
	f.vars((*stringValue)(&se.DegradationMetric), "concurrency-ramp: metric of the knee.", "degradation-metric-tag")
	f.vars((*stringValue)(&se.DegradationStat), "concurrency-ramp: statistic of the knee.", "degradation-stat")
	f.vars((*floatValue)(&se.WarmupSeconds), "Seconds of warm-up at the probed load before each search probe is measured (0: none).", "search-warmup-seconds")
	f.vars((*intValue)(&se.MaxTrialsPerProbe), "Most runs one search probe may take while its verdict is uncertain at --confidence-level.", "search-max-trials-per-probe")
	names := make([]string, 0, len(refusedSearchFlags))
	for n := range refusedSearchFlags {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		f.fs.Var(refused{refusedSearchFlags[n]}, n, "not built")
	}
	// Accepted and ignored, as AIPerf does (deprecated there).
	f.fs.Var(new(stringValue), "bo-constraint-mode", "deprecated; ignored")
}

// slaList is --search-sla: each occurrence one filter.
type slaList struct{ list *[]sla.Filter }

func (s slaList) Set(v string) error {
	f, err := sla.Parse(v)
	if err != nil {
		return err
	}
	*s.list = append(*s.list, f)
	return nil
}

func (s slaList) String() string {
	if s.list == nil {
		return ""
	}
	out := make([]string, len(*s.list))
	for i, f := range *s.list {
		out[i] = f.String()
	}
	return strings.Join(out, " ")
}

// finishSweep validates the sweep options and the combinations AIPerf
// refuses: lists with a fixed schedule or a grid recipe, zip lists of
// unequal lengths.
func (p *Profile) finishSweep() error {
	sw := &p.Sweep
	switch sw.Type {
	case SweepGrid, SweepZip:
	default:
		return fmt.Errorf("--sweep-type %q: use grid or zip", sw.Type)
	}
	switch sw.Mode {
	case SweepRepeated, SweepIndependent:
	default:
		return fmt.Errorf("--parameter-sweep-mode %q: use repeated or independent", sw.Mode)
	}
	if sw.Cooldown < 0 {
		return errors.New("--parameter-sweep-cooldown-seconds cannot be negative")
	}
	if sw.SameSeed && p.set["parameter-sweep-same-seed"] && p.Input.RandomSeed == nil && p.MultiRun.NumRuns == 1 {
		return errors.New("--parameter-sweep-same-seed gives every cell --random-seed: give one (with several trials, 42 is taken)")
	}
	se := &p.Search
	if se.WarmupSeconds < 0 || math.IsNaN(se.WarmupSeconds) {
		return errors.New("--search-warmup-seconds cannot be negative")
	}
	if se.MaxTrialsPerProbe < 1 || se.MaxTrialsPerProbe > 20 {
		return fmt.Errorf("--search-max-trials-per-probe %d: use 1 to 20", se.MaxTrialsPerProbe)
	}
	in := &p.Input
	if what := p.manyRuns(); what != "" {
		switch {
		case in.FixedSchedule || in.FixedScheduleAuto || in.FixedScheduleStart != nil || in.FixedScheduleEnd != nil:
			return fmt.Errorf("%s varies the load, but --fixed-schedule replays the file's timestamps: drop one", what)
		case in.File != "" && isTrace(in.CustomDatasetType) && !in.NoFixedSchedule:
			return fmt.Errorf("%s varies the load, but a %s file is replayed at its timestamps: add --no-fixed-schedule to send it by --concurrency or --request-rate", what, in.CustomDatasetType)
		}
	}
	if !p.Swept() {
		return nil
	}
	names := make([]string, 0, len(sw.Lists))
	for n := range sw.Lists {
		names = append(names, n)
	}
	slices.Sort(names)
	if se.Recipe != "" && !(se.Recipe == "pareto-sweep" && len(names) == 1 && names[0] == "concurrency") {
		return fmt.Errorf("--search-recipe %s makes its own runs, and a comma list (--%s %s) would sweep on top of it: give single values (pareto-sweep alone takes a --concurrency list)", se.Recipe, names[0], strings.Join(sw.Lists[names[0]], ","))
	}
	if sw.Type == SweepZip {
		n := len(sw.Lists[names[0]])
		for _, name := range names[1:] {
			if m := len(sw.Lists[name]); m != n {
				return fmt.Errorf("--sweep-type zip pairs the lists value by value, but --%s has %d values and --%s %d: give them the same length", names[0], n, name, m)
			}
		}
	}
	for _, n := range names {
		for _, v := range sw.Lists[n] {
			if x, err := strconv.ParseFloat(v, 64); err != nil || x <= 0 && n != "synthetic-input-tokens-stddev" && n != "output-tokens-stddev" || x < 0 || math.IsInf(x, 0) {
				return fmt.Errorf("--%s %s: the value %q must be a positive number", n, strings.Join(sw.Lists[n], ","), v)
			}
		}
	}
	return nil
}

// manyRuns names what makes the profile many runs ("a comma list
// (--concurrency)", "--search-recipe concurrency-ramp"), "" for one run.
func (p *Profile) manyRuns() string {
	if p.Search.Recipe != "" {
		return "--search-recipe " + p.Search.Recipe
	}
	for _, sp := range SweepParams {
		if _, ok := p.Sweep.Lists[sp.Flag]; ok {
			return "a comma list (--" + sp.Flag + ")"
		}
	}
	return ""
}

// sweepOnlyFlags configure a sweep or a search; recipeOnlyFlags a search
// recipe. Given without one, they would do nothing.
var (
	sweepOnlyFlags  = []string{"sweep-type", "parameter-sweep-mode", "parameter-sweep-cooldown-seconds", "parameter-sweep-same-seed", "no-sweep-table"}
	recipeOnlyFlags = []string{"search-style", "search-max-iterations", "concurrency-min", "concurrency-max", "concurrency-steps",
		"isl-min", "isl-max", "isl-steps", "osl-min", "osl-max", "osl-steps", "isl-osl-pairs", "degradation-threshold",
		"degradation-metric-tag", "degradation-stat", "search-warmup-seconds", "search-max-trials-per-probe", "slo-attainment-fraction"}
)

// CheckCommandLine refuses options that nothing would read: SLA filters
// and sweep options on a command line that neither sweeps nor searches,
// recipe options without a recipe. It concerns the command line as given,
// not a sweep cell's profile (which has no lists).
func (p *Profile) CheckCommandLine() error {
	se := p.Search
	hasSLA := len(se.SLAs) > 0 || se.TTFTms != 0 || se.ITLms != 0 || se.TPOTms != 0 || se.E2Ems != 0 || se.ErrorRate != 0
	if hasSLA && se.Recipe == "" && !p.Swept() {
		return errors.New("SLA filters (--search-sla, --ttft-sla-ms, …) judge the cells of a sweep or a search: add a comma list (--concurrency 1,4,16) or a --search-recipe")
	}
	if se.Recipe == "" {
		for _, name := range recipeOnlyFlags {
			if p.set[name] {
				return fmt.Errorf("--%s configures a --search-recipe: add one (see --help-all, Search), or drop it", name)
			}
		}
	}
	if p.manyRuns() == "" {
		for _, name := range sweepOnlyFlags {
			if p.set[name] {
				return fmt.Errorf("--%s configures a sweep: give a comma list (--concurrency 1,4,16) or a --search-recipe, or drop it", name)
			}
		}
	}
	return nil
}

// isTrace reports whether a dataset format carries timestamps that turn
// the fixed schedule on by themselves.
func isTrace(format string) bool {
	switch format {
	case "mooncake_trace", "burst_gpt_trace", "bailian_trace":
		return true
	}
	return false
}

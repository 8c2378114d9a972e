package search

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/llmbench/llmbench/internal/sla"
)

// Kind is how a recipe runs its cells.
type Kind string

// Recipe kinds: an adaptive search (a planner picks each probe), a grid
// sweep, or named scenarios.
const (
	Adaptive  Kind = "adaptive"
	Grid      Kind = "grid"
	Scenarios Kind = "scenarios"
)

// Search styles (--search-style). StyleConfident is llmbench's; the
// others are AIPerf's names.
const (
	StyleConfident      = "confident"
	StyleSmoothIsotonic = "smooth_isotonic"
	StyleMonotonic      = "monotonic"
	StyleBayesian       = "bayesian" // the BO recipes' planner (--search-style bo)
	StyleBO             = "bo"
	StyleOptuna         = "optuna"
	StyleGrid           = "grid"
	StyleScenarios      = "scenarios"
)

// Shorthand SLA flags, as a recipe names them.
const (
	FlagTTFT          = "--ttft-sla-ms"
	FlagITL           = "--itl-sla-ms" // or its alias --tpot-sla-ms
	FlagE2E           = "--e2e-sla-ms"
	FlagErrorRate     = "--error-rate-sla"
	FlagSLOAttainment = "--slo-attainment-fraction"
)

// Swept paths.
const (
	PathConcurrency = "phases.profiling.concurrency"
	PathISL         = "datasets.main.prompts.isl"
	PathOSL         = "datasets.main.prompts.osl"
)

// Axis is a grid recipe's default log-spaced axis (LogGrid(Lo, Hi, Steps)).
type Axis struct {
	Path          string
	Lo, Hi, Steps int
}

// Recipe is one --search-recipe as AIPerf 0.12 defines it (b2).
type Recipe struct {
	Name string
	Kind Kind
	// DefaultStyle is AIPerf's default planner or style; Styles are the
	// --search-style values the recipe takes (only
	// max-concurrency-under-sla takes several).
	DefaultStyle string
	Styles       []string
	// MaxIterations is the default budget of the default style: the
	// iteration budget of an adaptive search, the point count of a grid.
	MaxIterations int
	InitialPoints int // Bayesian initial points (0: none)
	// Objective is the recorded or optimized metric (avg), maximized;
	// "" for the grids.
	Objective string
	// RequiredSLA flags must all be given; AnySLA: at least one of them.
	// OptionalSLA may be given. A shorthand flag outside these three
	// lists is refused.
	RequiredSLA, AnySLA, OptionalSLA []string
	// Streaming: the recipe always needs it; StreamingIfLatencySLA: only
	// when a TTFT or ITL filter is set.
	Streaming, StreamingIfLatencySLA bool
	// Output is the file the recipe leaves (search_history.json for the
	// adaptive styles; the grid style of max-concurrency-under-sla writes
	// sla_breach.json, see OutputFor).
	Output   string
	AutoPlot bool
	// Axes are a grid recipe's default axes; Concurrencies the
	// pareto-sweep's default --concurrency list.
	Axes          []Axis
	Concurrencies []int
}

// Recipes is the table of the eight recipes, in AIPerf's documentation
// order. It builds a fresh table on each call.
func Recipes() []Recipe {
	latency := []string{FlagTTFT, FlagITL, FlagE2E, FlagErrorRate}
	return []Recipe{
		{Name: "max-throughput-ttft-sla", Kind: Adaptive, DefaultStyle: StyleBayesian, Styles: []string{StyleBayesian},
			MaxIterations: 30, InitialPoints: 5, Objective: "output_token_throughput",
			RequiredSLA: []string{FlagTTFT}, Streaming: true, Output: "search_history.json"},
		{Name: "max-throughput-itl-sla", Kind: Adaptive, DefaultStyle: StyleBayesian, Styles: []string{StyleBayesian},
			MaxIterations: 30, InitialPoints: 5, Objective: "output_token_throughput",
			RequiredSLA: []string{FlagITL}, Streaming: true, Output: "search_history.json"},
		{Name: "max-concurrency-under-sla", Kind: Adaptive, DefaultStyle: StyleSmoothIsotonic,
			Styles:        []string{StyleSmoothIsotonic, StyleMonotonic, StyleBO, StyleOptuna, StyleGrid, StyleConfident},
			MaxIterations: 30, Objective: "output_token_throughput",
			AnySLA: latency, StreamingIfLatencySLA: true, Output: "search_history.json"},
		{Name: "max-goodput-under-slo", Kind: Adaptive, DefaultStyle: StyleBayesian, Styles: []string{StyleBayesian},
			MaxIterations: 30, InitialPoints: 5, Objective: "goodput",
			RequiredSLA: []string{FlagTTFT, FlagITL, FlagE2E}, OptionalSLA: []string{FlagSLOAttainment},
			Streaming: true, Output: "search_history.json"},
		{Name: "concurrency-ramp", Kind: Grid, DefaultStyle: StyleGrid, Styles: []string{StyleGrid},
			MaxIterations: 8, Output: "degradation_knee.json", AutoPlot: true,
			Axes: []Axis{{PathConcurrency, 1, 1000, 8}}},
		{Name: "prefill-ttft-curve", Kind: Grid, DefaultStyle: StyleGrid, Styles: []string{StyleGrid},
			MaxIterations: 8, Streaming: true, Output: "prefill_curve.json", AutoPlot: true,
			Axes: []Axis{{PathISL, 256, 32768, 8}, {PathConcurrency, 1, 1, 1}}},
		{Name: "decode-itl-curve", Kind: Grid, DefaultStyle: StyleGrid, Styles: []string{StyleGrid},
			MaxIterations: 24, Streaming: true, Output: "decode_itl_surface.json", AutoPlot: true,
			Axes: []Axis{{PathConcurrency, 1, 200, 6}, {PathOSL, 64, 1024, 4}}},
		{Name: "pareto-sweep", Kind: Scenarios, DefaultStyle: StyleScenarios, Styles: []string{StyleScenarios},
			Streaming: true, Output: "pareto_sweep.json", Concurrencies: []int{1, 4, 16, 64, 256}},
	}
}

// LookupRecipe finds a recipe by its --search-recipe name.
func LookupRecipe(name string) (Recipe, error) {
	rs := Recipes()
	for _, r := range rs {
		if r.Name == name {
			return r, nil
		}
	}
	names := make([]string, len(rs))
	for i, r := range rs {
		names[i] = r.Name
	}
	return Recipe{}, fmt.Errorf("--search-recipe %q is not a recipe: use one of %s", name, strings.Join(names, ", "))
}

// Budget is the default iteration budget of style ("" for the default
// style): smooth_isotonic 30, monotonic 20, bo/optuna/bayesian 30,
// confident 20 (the worst case of [1, 1000]), grid 8 points.
func (r Recipe) Budget(style string) (int, error) {
	if style == "" {
		style = r.DefaultStyle
	}
	if !slices.Contains(r.Styles, style) {
		return 0, fmt.Errorf("recipe %s: --search-style %q is not one of %s", r.Name, style, strings.Join(r.Styles, ", "))
	}
	if r.Name != "max-concurrency-under-sla" {
		return r.MaxIterations, nil
	}
	switch style {
	case StyleMonotonic, StyleConfident:
		return 20, nil
	case StyleGrid:
		return 8, nil
	}
	return 30, nil
}

// OutputFor is the file the recipe writes under style ("" for the default).
func (r Recipe) OutputFor(style string) string {
	if r.Name == "max-concurrency-under-sla" && style == StyleGrid {
		return "sla_breach.json"
	}
	return r.Output
}

// SLAFlags are the SLA options as given (0: not given).
type SLAFlags struct {
	TTFTms, ITLms, TPOTms, E2Ems float64
	// ErrorRate is a fraction in (0, 1); the filter is in percent.
	ErrorRate float64
	// SLOAttainment is max-goodput-under-slo's fraction (default 0.95).
	SLOAttainment float64
	// Search are the --search-sla filters, in command-line order.
	Search []sla.Filter
}

// GoodputSLO is a per-request goodput objective: a request is good when
// its value of Tag is at most Threshold (ms).
type GoodputSLO struct {
	Tag       string
	Threshold float64
}

// SLAPlan is what the SLA flags turn into for one recipe.
type SLAPlan struct {
	// Filters: the recipe's (from the shorthand flags, in the order
	// TTFT, ITL, E2E, error rate, SLO attainment), then --search-sla.
	Filters []sla.Filter
	// GoodputSLOs are max-goodput-under-slo's per-request objectives.
	GoodputSLOs []GoodputSLO
	// Streaming reports whether the filters or the recipe need streaming.
	Streaming bool
}

// BuildSLA turns the SLA flags into the filters of recipe r (a zero
// Recipe: a plain sweep, whose cells every shorthand flag but
// --slo-attainment-fraction may judge). It refuses --itl-sla-ms and
// --tpot-sla-ms with different values, a missing required flag, and a
// shorthand flag the recipe does not use (AIPerf would ignore it; an
// error says so instead).
func BuildSLA(r Recipe, flags SLAFlags) (SLAPlan, error) {
	itl := flags.ITLms
	if flags.TPOTms != 0 {
		if itl != 0 && itl != flags.TPOTms {
			return SLAPlan{}, fmt.Errorf("--itl-sla-ms %g and --tpot-sla-ms %g name the same SLA: give one of them", itl, flags.TPOTms)
		}
		itl = flags.TPOTms
	}
	given := map[string]float64{FlagTTFT: flags.TTFTms, FlagITL: itl, FlagE2E: flags.E2Ems, FlagErrorRate: flags.ErrorRate, FlagSLOAttainment: flags.SLOAttainment}
	for _, name := range []string{FlagTTFT, FlagITL, FlagE2E, FlagErrorRate, FlagSLOAttainment} {
		v := given[name]
		if v == 0 {
			continue
		}
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return SLAPlan{}, fmt.Errorf("%s %g: give a positive number", name, v)
		}
		if (name == FlagErrorRate && v >= 1) || (name == FlagSLOAttainment && v > 1) {
			return SLAPlan{}, fmt.Errorf("%s %g: give a fraction between 0 and 1", name, v)
		}
		if !r.uses(name) {
			return SLAPlan{}, fmt.Errorf("recipe %s does not use %s: drop it, or use --search-recipe max-concurrency-under-sla for several SLAs", r.Name, name)
		}
	}
	var missing []string
	for _, name := range r.RequiredSLA {
		if given[name] == 0 {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return SLAPlan{}, fmt.Errorf("recipe %s needs %s", r.Name, strings.Join(missing, " and "))
	}
	if len(r.AnySLA) > 0 && len(flags.Search) == 0 && !slices.ContainsFunc(r.AnySLA, func(n string) bool { return given[n] != 0 }) {
		return SLAPlan{}, fmt.Errorf("recipe %s needs at least one SLA: %s or --search-sla", r.Name, strings.Join(r.AnySLA, ", "))
	}

	plan := SLAPlan{Streaming: r.Streaming}
	goodput := r.Name == "max-goodput-under-slo"
	add := func(tag, stat string, op sla.Op, threshold float64) {
		plan.Filters = append(plan.Filters, sla.Filter{Tag: tag, Stat: stat, Op: op, Threshold: threshold})
	}
	if goodput {
		plan.GoodputSLOs = []GoodputSLO{{"time_to_first_token", flags.TTFTms}, {"inter_token_latency", itl}, {"request_latency", flags.E2Ems}}
		frac := flags.SLOAttainment
		if frac == 0 {
			frac = 0.95
		}
		add("good_request_fraction", "avg", sla.GE, frac)
	} else {
		if flags.TTFTms != 0 {
			add("time_to_first_token", "p95", sla.LT, flags.TTFTms)
		}
		if itl != 0 {
			add("inter_token_latency", "p95", sla.LT, itl)
		}
		if flags.E2Ems != 0 {
			add("request_latency", "p99", sla.LT, flags.E2Ems)
		}
		if flags.ErrorRate != 0 {
			add("request_error_rate", "avg", sla.LT, 100*flags.ErrorRate)
		}
	}
	plan.Filters = append(plan.Filters, flags.Search...)
	// TTFT and ITL exist only on streamed responses, whatever the recipe.
	plan.Streaming = plan.Streaming || slices.ContainsFunc(plan.Filters, func(f sla.Filter) bool {
		return f.Tag == "time_to_first_token" || f.Tag == "inter_token_latency"
	})
	return plan, nil
}

// uses reports whether the recipe takes the shorthand flag.
func (r Recipe) uses(flag string) bool {
	if r.Name == "" || r.Kind == Grid || r.Kind == Scenarios {
		return flag != FlagSLOAttainment // a sweep's cells may be judged by any
	}
	return slices.Contains(r.RequiredSLA, flag) || slices.Contains(r.AnySLA, flag) || slices.Contains(r.OptionalSLA, flag)
}

// LogGrid is the recipes' log-spaced integer grid: exp(ln lo + (ln hi −
// ln lo)·i/(steps−1)) for i = 0…steps−1, rounded half to even (Python's
// round), at least 1, duplicates removed, ascending. Fewer than 2 steps
// or hi ≤ lo give the single value lo (at least 1); AIPerf refuses those,
// and so should the caller's validation.
func LogGrid(lo, hi, steps int) []int {
	lo = max(lo, 1)
	if steps < 2 || hi <= lo {
		return []int{lo}
	}
	a, b := math.Log(float64(lo)), math.Log(float64(hi))
	out := make([]int, 0, steps)
	for i := range steps {
		v := max(1, int(math.RoundToEven(math.Exp(a+(b-a)*float64(i)/float64(steps-1)))))
		out = append(out, v)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// ParseISLOSLPairs reads --isl-osl-pairs: "isl/osl" pairs separated by
// commas, blanks allowed around them, positive integers, no pair twice.
func ParseISLOSLPairs(s string) ([][2]int, error) {
	var pairs [][2]int
	for _, chunk := range strings.Split(s, ",") {
		tok := strings.TrimSpace(chunk)
		if tok == "" {
			continue
		}
		sides := strings.Split(tok, "/")
		if len(sides) != 2 {
			return nil, fmt.Errorf("--isl-osl-pairs: %q is not <isl>/<osl> (e.g. 128/128)", tok)
		}
		isl, err1 := strconv.Atoi(strings.TrimSpace(sides[0]))
		osl, err2 := strconv.Atoi(strings.TrimSpace(sides[1]))
		if err1 != nil || err2 != nil || isl <= 0 || osl <= 0 {
			return nil, fmt.Errorf("--isl-osl-pairs: %q: both sides must be positive integers", tok)
		}
		p := [2]int{isl, osl}
		if slices.Contains(pairs, p) {
			return nil, fmt.Errorf("--isl-osl-pairs: %q is given twice", tok)
		}
		pairs = append(pairs, p)
	}
	if len(pairs) == 0 {
		return nil, errors.New("--isl-osl-pairs: give at least one isl/osl pair (e.g. 128/128,512/256)")
	}
	return pairs, nil
}

// Scenario is one pareto-sweep cell.
type Scenario struct {
	Name                  string // shape_<isl>_<osl>_c<concurrency>
	Dir                   string // isl_<isl>__osl_<osl>__concurrency_<concurrency>
	ISL, OSL, Concurrency int
}

// ParetoScenarios crosses every pair with every concurrency (pair-major,
// AIPerf's order); a single cell is refused.
func ParetoScenarios(pairs [][2]int, concurrencies []int) ([]Scenario, error) {
	if len(pairs)*len(concurrencies) < 2 {
		return nil, errors.New("pareto-sweep needs at least 2 cells: give 2 or more --isl-osl-pairs or --concurrency values")
	}
	out := make([]Scenario, 0, len(pairs)*len(concurrencies))
	for _, p := range pairs {
		for _, c := range concurrencies {
			out = append(out, Scenario{
				Name: fmt.Sprintf("shape_%d_%d_c%d", p[0], p[1], c),
				Dir:  fmt.Sprintf("isl_%d__osl_%d__concurrency_%d", p[0], p[1], c),
				ISL:  p[0], OSL: p[1], Concurrency: c,
			})
		}
	}
	return out, nil
}

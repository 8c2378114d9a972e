package capacity

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/llmbench/llmbench/internal/config"
	"github.com/llmbench/llmbench/internal/export"
	"github.com/llmbench/llmbench/internal/metrics"
	"github.com/llmbench/llmbench/internal/multirun"
	"github.com/llmbench/llmbench/internal/search"
	"github.com/llmbench/llmbench/internal/sla"
	"github.com/llmbench/llmbench/internal/sweep"
	"github.com/llmbench/llmbench/internal/trial"
)

// concurrencyPath is the one dimension an adaptive search moves.
const concurrencyPath = "phases.profiling.concurrency"

// objectiveTag and objectiveStat are what every adaptive recipe records
// as its objective (max-goodput-under-slo: goodput).
const (
	objectiveTag  = "output_token_throughput"
	objectiveStat = "avg"
)

// adaptiveSearch is a search to run: the filters every probe is judged
// by, the planner, its range and budget.
type adaptiveSearch struct {
	recipe    string
	style     string
	filters   []sla.Filter
	planner   search.Planner
	lo, hi    int
	maxIter   int
	objective string // metric tag recorded as the objective
	maxTrials int    // the most trials one probe may take
}

// probeResult is what one probe (all its trials) gave.
type probeResult struct {
	value     int
	iteration int
	runs      []metrics.Results // the successful trials
	labels    []string
	failed    []multirun.FailedRun
	decisions []search.Decision // per filter, on the pooled samples
	verdict   search.Verdict
	feasible  bool // AIPerf's rule: one successful trial met every filter
	margins   []float64
	objective float64
	breach    *search.Breach
}

// passed is the probe's verdict as the planner reads it: the confident
// planner's at the stated confidence, AIPerf's planners' by AIPerf's rule
// (one successful trial met every filter).
func (pr *probeResult) passed(style string) bool {
	if style == styleConfident {
		return pr.verdict == search.Pass
	}
	return pr.feasible
}

// runSearch asks the planner for a concurrency, probes it, tells the
// planner the outcome, and rewrites search_history.json after every
// probe, until the planner has its answer.
func runSearch(ctx context.Context, opts Options, s adaptiveSearch) (*Outcome, error) {
	p := opts.Run.Profile
	base := p.Output.ArtifactDir
	opts.Run.Shared.MaxConns = s.hi
	hist := &search.History{Recipe: s.recipe, Config: search.HistoryConfig{
		Planner:             s.style,
		Objectives:          []search.Objective{{Metric: s.objective, Stat: objectiveStat, Maximize: true, Threshold: math.NaN()}},
		OutcomeConstraints:  constraints(s.filters),
		MaxIterations:       s.maxIter,
		ImprovementPatience: 10, PlateauWindow: 8, PlateauThreshold: 0.01,
		SearchSpace: []search.Dimension{{Path: concurrencyPath, Lo: float64(s.lo), Hi: float64(s.hi), Kind: "int"}},
		SLAFilters:  s.filters,
	}}
	histPath := filepath.Join(base, "search_history.json")
	out := &Outcome{}
	var probes []probeResult
	var partial *probeResult // an interrupted probe's finished trials
	for {
		v, ok := s.planner.Next()
		if !ok {
			break
		}
		if ctx.Err() != nil {
			out.Cancelled = true
			break
		}
		pr, cancelled, err := runProbe(ctx, opts, s, v, len(probes), out)
		if err != nil {
			return out, err
		}
		if cancelled {
			// The finished trials of the interrupted probe keep their
			// aggregate; the planner is not told of a probe cut short.
			if len(pr.runs) > 0 {
				partial = pr
			}
			out.Cancelled = true
			break
		}
		probes = append(probes, *pr)
		if len(pr.runs) == 0 {
			// Nothing was measured: the probe says nothing of the SLAs,
			// and neither would the next against a server in this state.
			_ = writeHistory(histPath, hist, s.planner, false)
			_, _ = writeProbeAggregates(opts, probes, s.filters, out)
			return out, fmt.Errorf("every run of the probe at concurrency %d failed (%s): the search stops, as no SLA can be judged on it", v, pr.failed[len(pr.failed)-1].Error)
		}
		nonMono, err := s.planner.Tell(search.Outcome{
			Value: v, Feasible: pr.feasible, Verdict: pr.verdict, Margins: pr.margins, Objective: pr.objective, FirstBreach: pr.breach,
		})
		if err != nil {
			return out, fmt.Errorf("search planner: %w", err)
		}
		hist.Iterations = append(hist.Iterations, search.Iteration{
			Index: pr.iteration, Values: []search.PathValue{{Path: concurrencyPath, Value: float64(v)}}, Objectives: []float64{pr.objective},
			Feasible: pr.passed(s.style), NonMonotonic: nonMono, FirstBreach: pr.breach,
		})
		if err := writeHistory(histPath, hist, s.planner, false); err != nil {
			return out, err
		}
	}
	if err := writeHistory(histPath, hist, s.planner, !out.Cancelled); err != nil {
		return out, err
	}
	out.Files = append(out.Files, histPath)
	if partial != nil {
		probes = append(probes, *partial)
	}
	files, err := writeProbeAggregates(opts, probes, s.filters, out)
	out.Files = append(out.Files, files...)
	out.Answer = searchAnswer(s, probes, p.MultiRun.ConfidenceLevel, histPath)
	return out, err
}

// runProbe runs one probe: --num-profile-runs trials at concurrency v,
// then, for the confident planner, more trials while a filter's verdict
// on the pooled samples is still uncertain, up to s.maxTrials. cancelled
// reports an interruption; pr then holds the trials that finished.
func runProbe(ctx context.Context, opts Options, s adaptiveSearch, v, iteration int, out *Outcome) (pr *probeResult, cancelled bool, err error) {
	p := opts.Run.Profile
	level := p.MultiRun.ConfidenceLevel
	minTrials, maxTrials := p.MultiRun.NumRuns, p.MultiRun.NumRuns
	if s.style == styleConfident {
		maxTrials = max(minTrials, s.maxTrials)
	}
	pr = &probeResult{value: v, iteration: iteration, verdict: search.Fail, objective: math.NaN()}
	pooled := map[string][]float64{}
	dir := filepath.Join(p.Output.ArtifactDir, fmt.Sprintf("search_iter_%04d", iteration), "profile_runs")
	for t := 0; t < maxTrials; t++ {
		if t > 0 {
			trial.Sleep(ctx, p.MultiRun.Cooldown)
		}
		if ctx.Err() != nil {
			return pr, true, nil
		}
		ov := probeOverrides(p, s.filters, v)
		if seed := probeSeed(p.Input.RandomSeed, v, t); seed != nil {
			ov = append(ov, [2]string{"random-seed", strconv.FormatInt(*seed, 10)})
		}
		prof, err := opts.Build(ov)
		if err != nil {
			return pr, false, fmt.Errorf("search probe at concurrency %d: %w", v, err)
		}
		ro := opts.Run
		ro.Profile, ro.Samples = prof, sampleTags(s.filters)
		label := multirun.RunLabel(t)
		o, err := trial.Run(ctx, trial.Spec{Options: ro, Dir: filepath.Join(dir, label), Label: label, Index: t})
		if err != nil {
			return pr, false, err
		}
		out.Runs++
		full := fmt.Sprintf("search_iter_%04d/%s", iteration, label)
		if opts.OnRun != nil {
			opts.OnRun(full+fmt.Sprintf(" (concurrency %d)", v), o.Result, o.Err)
		}
		if o.Err != nil {
			pr.failed = append(pr.failed, multirun.FailedRun{Label: full, Error: o.Err.Error()})
			if o.Cancelled {
				return pr, true, nil
			}
		} else {
			out.Successful++
			if f := unreported(o.Result.Summary.Results, s.filters); f != nil {
				return pr, false, unreportedError(f, full)
			}
			rs := withFilterMetrics(o.Result.Summary.Results, s.filters)
			pr.runs, pr.labels = append(pr.runs, rs), append(pr.labels, full)
			for tag, xs := range o.Result.Samples {
				pooled[tag] = append(pooled[tag], xs...)
			}
		}
		pr.judge(s, pooled, level)
		if t+1 >= minTrials && pr.verdict != search.Uncertain {
			break
		}
	}
	return pr, false, nil
}

// judge decides the probe on what its trials gave so far: each filter on
// the pooled per-request samples (or, for a metric without per-request
// values, on the mean of the trials' statistics), AIPerf's feasibility,
// the margins and the objective.
func (pr *probeResult) judge(s adaptiveSearch, pooled map[string][]float64, level float64) {
	filters := s.filters
	pr.decisions = pr.decisions[:0]
	pr.margins = pr.margins[:0]
	pr.breach = nil
	pr.verdict = search.Pass
	if len(pr.runs) == 0 {
		pr.verdict = search.Fail
	}
	for _, f := range filters {
		trialValues := make([]float64, len(pr.runs))
		for i, rs := range pr.runs {
			trialValues[i] = statOf(rs, f.Tag, f.Stat)
		}
		m := mean(trialValues)
		var d search.Decision
		if xs, ok := pooled[f.Tag]; ok {
			d = search.Decide(f, xs, level)
		} else {
			d = search.Decision{Point: m, Lo: m, Hi: m, N: len(pr.runs), Verdict: search.Fail}
			if f.Holds(m) {
				d.Verdict = search.Pass
			}
		}
		pr.decisions = append(pr.decisions, d)
		pr.margins = append(pr.margins, f.Margin(m))
		switch {
		case d.Verdict == search.Fail:
			pr.verdict = search.Fail
		case d.Verdict == search.Uncertain && pr.verdict == search.Pass:
			pr.verdict = search.Uncertain
		}
		// The first breach: for the confident planner the first filter
		// failed at the stated confidence, observed on the pooled samples;
		// for AIPerf's planners the first whose mean over the trials
		// fails, as AIPerf records it.
		confidentFail := s.style == styleConfident && d.Verdict == search.Fail
		if pr.breach == nil && (confidentFail || s.style != styleConfident && !f.Holds(m)) {
			pr.breach = search.BreachOf(f, m)
			if confidentFail {
				pr.breach.Observed = d.Point
			}
		}
	}
	pr.feasible = false
	for _, rs := range pr.runs {
		all := true
		for _, f := range filters {
			all = all && f.Holds(statOf(rs, f.Tag, f.Stat))
		}
		pr.feasible = pr.feasible || all
	}
	objs := make([]float64, len(pr.runs))
	for i, rs := range pr.runs {
		objs[i] = statOf(rs, cmp.Or(s.objective, objectiveTag), objectiveStat)
	}
	pr.objective = mean(objs)
}

// constraints are the filters as config.outcome_constraints: metric,
// "<=" or ">=", bound (AIPerf writes its strict ops so too).
func constraints(filters []sla.Filter) []search.OutcomeConstraint {
	out := make([]search.OutcomeConstraint, len(filters))
	for i, f := range filters {
		op := "<="
		if !f.Upper() {
			op = ">="
		}
		out[i] = search.OutcomeConstraint{Metric: f.Tag, Op: op, Bound: f.Threshold}
	}
	return out
}

// probeSeed is the seed of a probe's trial, derived from the base seed,
// the probe's label and the trial (SHA-256, as AIPerf derives the seeds of
// adaptive cells), so that no two runs send the same prompts: a probe does
// not find the previous one's prompts in the server's prefix cache, and
// the trials pooled in one verdict are independent samples. nil without a
// base seed (every run draws its own).
func probeSeed(base *int64, value, trial int) *int64 {
	if base == nil {
		return nil
	}
	h := sha256.Sum256(fmt.Appendf(nil, "%d\x00%s=%d\x00%d", *base, concurrencyPath, value, trial))
	s := int64(binary.BigEndian.Uint64(h[:8]) >> 1)
	return &s
}

// sampleTags are the metrics whose per-request values the filters need.
func sampleTags(filters []sla.Filter) []string {
	var tags []string
	for _, f := range filters {
		tags = append(tags, f.Tag)
	}
	return tags
}

// probeOverrides set a probe's concurrency and, unless the command line
// chose its own warm-up, a warm-up of --search-warmup-seconds at the
// probed load, so that what the previous probe left in the server's
// queues is served before this probe is measured. Without a request count
// or duration, a probe sends enough requests for its percentile SLAs to
// be decided at --confidence-level, each with a prompt of its own.
func probeOverrides(p config.Profile, filters []sla.Filter, v int) [][2]string {
	out := [][2]string{{"concurrency", strconv.Itoa(v)}}
	if p.Search.WarmupSeconds > 0 && p.Loadgen.WarmupRequestCount == 0 && p.Loadgen.WarmupDuration == 0 {
		out = append(out, [2]string{"warmup-duration", strconv.FormatFloat(p.Search.WarmupSeconds, 'g', -1, 64)})
	}
	requests := p.Loadgen.RequestCount
	if !p.Loadgen.RequestCountGiven && p.Loadgen.BenchmarkDuration == 0 {
		requests = probeRequests(filters, p.MultiRun.ConfidenceLevel, v)
		out = append(out, [2]string{"request-count", strconv.Itoa(requests)})
	}
	if !p.WasSet("num-dataset-entries") && p.Loadgen.BenchmarkDuration == 0 {
		// Distinct prompts for the warm-up and every measured request:
		// prompts cycling through AIPerf's 100 would reach the measured
		// requests already cached by the warm-up, and a prefix-caching
		// server would answer them faster than it answers new users.
		out = append(out, [2]string{"num-dataset-entries", strconv.Itoa(requests + probeWarmupPrompts)})
	}
	return out
}

// probeWarmupPrompts are the distinct prompts a probe keeps for its
// warm-up beyond its measured requests.
const probeWarmupPrompts = 1000

// probeRequests is a probe's default request count: 10 % more than the
// samples its filters need (samplesNeeded: p95 at 95 %, 72, so 80; p99,
// 368, so 405), at least 100, and at least two requests per concurrency
// slot. A verdict still uncertain then gets more trials, where it is close.
func probeRequests(filters []sla.Filter, level float64, concurrency int) int {
	return max(100, int(math.Ceil(1.1*float64(samplesNeeded(filters, level)))), 2*concurrency)
}

// samplesNeeded is how many requests the most extreme percentile filter
// needs before the interval of its percentile has two finite ends at
// level: the smallest n with 1 − q^n ≥ 1 − (1 − level)/2 (q the larger
// of the percentile and its complement); 0 for filters on means.
func samplesNeeded(filters []sla.Filter, level float64) int {
	n := 0
	for _, f := range filters {
		q, ok := quantileOf(f.Stat)
		if !ok {
			continue
		}
		tail := math.Max(q, 1-q)
		n = max(n, int(math.Ceil(math.Log((1-level)/2)/math.Log(tail))))
	}
	return n
}

// trialsPerProbe is the most trials a confident probe may run: at least
// --search-max-trials-per-probe, and, when --request-count fixes each
// trial's requests, enough trials for the pooled samples to decide the
// filters (one more than they need). An error when even 20 trials could
// not.
func trialsPerProbe(p config.Profile, filters []sla.Filter) (int, error) {
	n := max(p.MultiRun.NumRuns, p.Search.MaxTrialsPerProbe)
	count := p.Loadgen.RequestCount
	if !p.Loadgen.RequestCountGiven || p.Loadgen.BenchmarkDuration > 0 || count <= 0 {
		return n, nil
	}
	need := samplesNeeded(filters, p.MultiRun.ConfidenceLevel)
	trials := (need+count-1)/count + 1
	if need > 0 && trials > 20 {
		return 0, fmt.Errorf("--request-count %d leaves a probe too few requests to decide its percentile SLA at %g %% confidence: it needs %d samples, more than 20 runs give; raise --request-count or leave it out (each probe then sends enough)", count, 100*p.MultiRun.ConfidenceLevel, need)
	}
	return max(n, trials), nil
}

// quantileOf reads p95 as 0.95.
func quantileOf(stat string) (float64, bool) {
	if !strings.HasPrefix(stat, "p") {
		return 0, false
	}
	x, err := strconv.ParseFloat(stat[1:], 64)
	if err != nil || x <= 0 || x >= 100 {
		return 0, false
	}
	return x / 100, true
}

// writeHistory rewrites search_history.json (final: with the planner's
// convergence reason and boundary).
func writeHistory(path string, hist *search.History, pl search.Planner, final bool) error {
	hist.Boundary, hist.Reason, hist.Final = pl.Boundary(), pl.Reason(), final
	data := hist.JSON()
	return export.WriteFile(filepath.Dir(path), filepath.Base(path), data)
}

// writeProbeAggregates writes each probe's confidence aggregate and the
// sweep aggregate over the probes, as AIPerf does for an adaptive search.
func writeProbeAggregates(opts Options, probes []probeResult, filters []sla.Filter, out *Outcome) ([]string, error) {
	p := opts.Run.Profile
	base := p.Output.ArtifactDir
	meta := sweep.Meta{Version: opts.Run.Version, Model: p.Endpoint.ModelNames[0], ConfidenceLevel: p.MultiRun.ConfidenceLevel, Filters: filters}
	var outcomes []sweep.CellOutcome
	var files []string
	successful := 0
	for _, pr := range probes {
		assign := []sweep.Assignment{{Path: concurrencyPath, Value: sweep.Int(int64(pr.value))}}
		c := sweep.Cell{Index: pr.iteration, Assign: assign, Label: sweep.Label(assign), Dir: fmt.Sprintf("search_iter_%04d", pr.iteration)}
		oc := sweep.CellOutcome{Cell: c, Runs: pr.runs, Labels: pr.labels, Failed: pr.failed}
		outcomes = append(outcomes, oc)
		successful += len(pr.runs)
		if len(pr.runs) == 0 {
			continue
		}
		dir := filepath.Join(base, "aggregate", c.Dir)
		_, err := writeCellAggregate(dir, sweep.CellSummary(oc, meta))
		out.CellAggregates++
		out.CellAggregateDirs = append(out.CellAggregateDirs, dir)
		if err != nil {
			return files, err
		}
	}
	if successful < 2 {
		return files, nil
	}
	dir := filepath.Join(base, "sweep_aggregate")
	if p.MultiRun.NumRuns > 1 {
		dir = filepath.Join(base, "aggregate", "sweep_aggregate")
	}
	s := sweep.Aggregate(outcomes, meta)
	j, err := sweep.SummaryJSON(s)
	if err != nil {
		return files, err
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{"profile_export_aiperf_sweep.json", j}, {"profile_export_aiperf_sweep.csv", sweep.SummaryCSV(s)}} {
		if err := export.WriteFile(dir, f.name, f.data); err != nil {
			return files, err
		}
		files = append(files, filepath.Join(dir, f.name))
	}
	return files, nil
}

// searchAnswer says what the search found: the highest load that passes
// every SLA, the lowest that fails, at what confidence, what stayed
// uncertain, then each probe's reading.
func searchAnswer(s adaptiveSearch, probes []probeResult, level float64, histPath string) string {
	var b strings.Builder
	names := make([]string, len(s.filters))
	for i, f := range s.filters {
		names[i] = describeFilter(f)
	}
	fmt.Fprintf(&b, "Max concurrency with %s: ", strings.Join(names, " and "))
	bs := s.planner.Boundary()
	rule := fmt.Sprintf("each at %g %% confidence", level*100)
	if s.style != styleConfident {
		rule = fmt.Sprintf("AIPerf's %s rule: a probe passes when one trial's statistics do", s.style)
	}
	switch {
	case bs == nil || bs.FeasibleMax == nil && bs.InfeasibleMin == nil:
		b.WriteString("undecided (no probe passed or failed at that confidence)\n")
	case bs.FeasibleMax == nil:
		fmt.Fprintf(&b, "none in [%d, %d] (%d fails, %s)\n", s.lo, s.hi, bs.InfeasibleMin.Value, rule)
	case bs.InfeasibleMin == nil && bs.FeasibleMax.Value >= s.hi:
		fmt.Fprintf(&b, "%d or more (%d, the top of the range, passes; %s)\n", bs.FeasibleMax.Value, bs.FeasibleMax.Value, rule)
	case bs.InfeasibleMin == nil:
		fmt.Fprintf(&b, "at least %d (%d passes, %s; no load above it failed at that confidence)\n", bs.FeasibleMax.Value, bs.FeasibleMax.Value, rule)
	default:
		fmt.Fprintf(&b, "%d (%d passes, %d fails, %s)\n", bs.FeasibleMax.Value, bs.FeasibleMax.Value, bs.InfeasibleMin.Value, rule)
	}
	if bs != nil && len(bs.UncertainValues) > 0 {
		vals := make([]string, len(bs.UncertainValues))
		for i, v := range bs.UncertainValues {
			vals[i] = strconv.Itoa(v)
		}
		fmt.Fprintf(&b, "  Uncertain after up to %d trials: concurrency %s (raise --search-max-trials-per-probe or --request-count to decide)\n", s.maxTrials, strings.Join(vals, ", "))
	}
	best := -1
	for i, pr := range probes {
		if pr.passed(s.style) && !math.IsNaN(pr.objective) && (best < 0 || pr.objective > probes[best].objective) {
			best = i
		}
	}
	if best >= 0 {
		fmt.Fprintf(&b, "  Best %s among passing probes: %s at concurrency %d\n", s.objective, strings.TrimSpace(num(probes[best].objective)+" "+unitOf(s.objective)), probes[best].value)
	}
	fmt.Fprintf(&b, "  %s, planner %s: %d probes, %s\n", s.recipe, s.style, len(probes), s.planner.Reason())
	for _, pr := range probes {
		verdict := pr.verdict.String()
		if s.style != styleConfident {
			// AIPerf's rule decides; the confident reading is shown beside.
			verdict = map[bool]string{true: "pass", false: "fail"}[pr.feasible] + fmt.Sprintf(" (at %g %%: %s)", level*100, pr.verdict)
		}
		fmt.Fprintf(&b, "  probe %2d  concurrency %-5d %-9s", pr.iteration, pr.value, verdict)
		for i, f := range s.filters {
			if i < len(pr.decisions) {
				d := pr.decisions[i]
				fmt.Fprintf(&b, "  %s %s %s [%s, %s], %d requests", f.Tag, f.Stat, strings.TrimSpace(num(d.Point)+" "+unitOf(f.Tag)), num(d.Lo), num(d.Hi), d.N)
			}
		}
		if n := len(pr.runs) + len(pr.failed); n > 1 {
			fmt.Fprintf(&b, " (%d trials)", n)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "  History: %s\n", histPath)
	return b.String()
}

// unitOf is a metric's unit, "" when unknown.
func unitOf(tag string) string {
	switch tag {
	case errorRateTag:
		return "%"
	case "output_token_throughput":
		return "tokens/sec"
	case "goodput":
		return "requests/sec"
	}
	for _, d := range metrics.RecordDefs {
		if d.Tag == tag {
			return d.Unit
		}
	}
	return ""
}

// describeFilter writes a filter for people: "time_to_first_token p95 < 100 ms".
func describeFilter(f sla.Filter) string {
	op := map[sla.Op]string{sla.LT: "<", sla.LE: "≤", sla.GT: ">", sla.GE: "≥"}[f.Op]
	return strings.TrimSpace(fmt.Sprintf("%s %s %s %s %s", f.Tag, f.Stat, op, strconv.FormatFloat(f.Threshold, 'g', -1, 64), unitOf(f.Tag)))
}

// num writes a statistic with 2 decimals, ±inf and NaN spelled out.
func num(v float64) string {
	switch {
	case math.IsNaN(v):
		return "n/a"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

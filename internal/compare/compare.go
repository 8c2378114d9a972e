// Package compare answers whether a benchmark got better or worse between
// two artifact folders, BASE and NEW, or whether the difference is noise:
// for each metric and statistic, the change, a confidence interval of it
// (over requests for single runs, over runs for multi-run profiles), a
// verdict, and the --fail-on gates a CI job checks. Its only I/O is
// reading the folders (Load).
package compare

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/llmbench/llmbench/internal/stats"
)

// Verdicts of one metric's change.
const (
	Improved  = "improved"
	Regressed = "regressed"
	// NoChange: the interval of the change holds 0.
	NoChange = "no_significant_change"
	// Changed: a significant change of a metric that describes the
	// workload (ISL, OSL), neither better nor worse.
	Changed = "changed"
	// NotTested: no interval could be computed honestly (see the entry's
	// note); the change is reported without one.
	NotTested = "not_tested"
)

// Methods, of a whole comparison (Inputs.Method).
const (
	// MethodRequests: both sides are single runs, compared over their
	// requests: each mean by Welch's t interval, each percentile by a
	// bootstrap, the error rate by Newcombe's interval.
	MethodRequests = "requests"
	// MethodRuns: both sides are multi-run profiles, compared over their
	// runs: Welch's t interval of each statistic's mean over runs.
	MethodRuns = "runs"
	// MethodPooled: one side is a multi-run profile, the other a single
	// run; the multi-run side's requests are pooled as if one run, then
	// compared as MethodRequests does. Run-to-run variation is then not in
	// the intervals, which are narrower than they would be over runs.
	MethodPooled = "pooled_requests"
)

// Methods of one entry's interval.
const (
	// EntryBootstrap: the percentile bootstrap over requests.
	EntryBootstrap = "bootstrap"
	// EntryWelchRequests: Welch's t interval over requests.
	EntryWelchRequests = "welch_t_requests"
	// EntryWelchRuns: Welch's t interval over runs.
	EntryWelchRuns = "welch_t_runs"
	// EntryNewcombe: Newcombe's hybrid score interval of two proportions.
	EntryNewcombe = "newcombe_wilson"
	// EntryNone: no interval.
	EntryNone = "none"
)

// Direction is which way a metric improves; "" for a metric that
// describes the workload rather than the server.
type Direction string

// The directions.
const (
	Lower  Direction = "lower"
	Higher Direction = "higher"
)

// ErrorRateTag names the error rate's entry and gate: the failed share of
// the profiling requests, in percent.
const (
	ErrorRateTag  = "error_rate"
	ErrorRateStat = "rate"
)

// metricDef is a metric compared.
type metricDef struct {
	tag    string
	better Direction
	// aggregate: one value per run (avg only), no per-request values.
	aggregate bool
	// timed: a latency in a time unit, which absolute gates may give in
	// any time unit.
	timed bool
}

// metricDefs are the metrics compared, in report order.
var metricDefs = [...]metricDef{
	{tag: "time_to_first_token", better: Lower, timed: true},
	{tag: "inter_token_latency", better: Lower, timed: true},
	{tag: "request_latency", better: Lower, timed: true},
	{tag: "time_to_second_token", better: Lower, timed: true},
	{tag: "output_token_throughput_per_user", better: Higher},
	{tag: "input_sequence_length"},
	{tag: "output_sequence_length"},
	{tag: "request_throughput", better: Higher, aggregate: true},
	{tag: "output_token_throughput", better: Higher, aggregate: true},
}

// bootStats are the statistics of a record metric compared: the mean,
// then the percentiles of bootPercentiles.
var (
	bootStats       = [...]string{"avg", "p50", "p90", "p95", "p99"}
	bootPercentiles = []float64{50, 90, 95, 99}
)

func lookupMetric(tag string) (metricDef, bool) {
	for _, d := range metricDefs {
		if d.tag == tag {
			return d, true
		}
	}
	return metricDef{}, false
}

// Defaults of Options.
const (
	DefaultLevel     = 0.95
	DefaultResamples = 2000
	// MinResamples keeps the interval's ends off the few most extreme
	// resamples.
	MinResamples = 100
)

// Options configure a comparison.
type Options struct {
	// Level is the confidence level of the intervals, in (0, 1); 0 means
	// DefaultLevel.
	Level float64
	// Resamples is the bootstrap's number of resamples; 0 means
	// DefaultResamples.
	Resamples int
	// Seed seeds the bootstrap, so that a comparison replays exactly.
	Seed uint64
	// Gates are the --fail-on conditions.
	Gates []Gate
}

func (o Options) normalized() (Options, error) {
	if o.Level == 0 {
		o.Level = DefaultLevel
	}
	if !(o.Level > 0 && o.Level < 1) {
		return o, fmt.Errorf("confidence level %v: give a level between 0 and 1, e.g. 0.95", o.Level)
	}
	if o.Resamples == 0 {
		o.Resamples = DefaultResamples
	}
	if o.Resamples < MinResamples {
		return o, fmt.Errorf("%d bootstrap resamples: give at least %d", o.Resamples, MinResamples)
	}
	return o, nil
}

// multi reports whether a side is compared over runs: a multi-run folder
// with at least two runs (one run is compared as a single run).
func (s *Side) multi() bool { return s.Multi && len(s.Runs) >= 2 }

// has reports whether a run of the side has a metric.
func (s *Side) has(tag string) bool {
	for _, r := range s.Runs {
		if _, ok := r.Export[tag]; ok || len(r.Values[tag]) > 0 {
			return true
		}
	}
	return false
}

func (s *Side) input() Input {
	in := Input{Path: s.Dir, Layout: "single_run", Runs: len(s.Runs)}
	if s.Multi {
		in.Layout = "multi_run"
	}
	for _, r := range s.Runs {
		in.Requests += r.Requests
	}
	return in
}

// Compare compares NEW against BASE. Both sides single runs: over
// requests (the means by Welch's t, the percentiles by bootstrap, the
// error rate by Newcombe's interval); both multi-run: Welch's t over the
// runs' statistics; one of each: the multi-run side's requests pooled,
// then as for single runs. It stops early with ctx's error when ctx ends.
func Compare(ctx context.Context, base, nw *Side, o Options) (*Result, error) {
	if base == nil || nw == nil || len(base.Runs) == 0 || len(nw.Runs) == 0 {
		return nil, errors.New("compare: both sides need a loaded run")
	}
	o, err := o.normalized()
	if err != nil {
		return nil, fmt.Errorf("compare: %w", err)
	}
	res := &Result{
		Inputs: Inputs{Base: base.input(), New: nw.input(), Level: o.Level, Resamples: o.Resamples, Seed: o.Seed},
		Gates:  []GateResult{},
		Notes:  []string{},
	}
	for _, s := range []*Side{base, nw} {
		for _, d := range s.Skipped {
			res.note("%s: no artifacts (a failed run?); left out", d)
		}
		if s.Multi && len(s.Runs) == 1 {
			res.note("%s: a multi-run folder with one usable run, compared as a single run", s.Dir)
		}
	}
	for _, d := range metricDefs {
		if hb, hn := base.has(d.tag), nw.has(d.tag); hb != hn {
			where := "BASE"
			if hn {
				where = "NEW"
			}
			res.note("%s is only in %s; not compared", d.tag, where)
		}
	}
	switch {
	case base.multi() && nw.multi():
		res.Inputs.Method = MethodRuns
		res.compareRuns(base, nw, o)
	default:
		res.Inputs.Method = MethodRequests
		if base.multi() || nw.multi() {
			res.Inputs.Method = MethodPooled
			res.note("one side is a multi-run profile and the other a single run: the multi-run side's requests are pooled as one run and both are compared over requests; run-to-run variation is not in these intervals")
		}
		if err := res.compareRequests(ctx, base, nw, o); err != nil {
			return nil, err
		}
	}
	res.Summary.Gates = len(o.Gates)
	for _, g := range o.Gates {
		gr := g.evaluate(res.entry(g.Tag, g.Stat))
		if !gr.Passed {
			res.Summary.GatesFailed++
		}
		res.Gates = append(res.Gates, gr)
	}
	for _, e := range res.Metrics {
		switch e.Verdict {
		case Improved:
			res.Summary.Improved++
		case Regressed:
			res.Summary.Regressed++
		case NoChange:
			res.Summary.NoSignificantChange++
		case Changed:
			res.Summary.Changed++
		default:
			res.Summary.NotTested++
		}
	}
	return res, nil
}

func (r *Result) note(format string, args ...any) {
	r.Notes = append(r.Notes, fmt.Sprintf(format, args...))
}

func (r *Result) entry(tag, stat string) *Entry {
	for i := range r.Metrics {
		if r.Metrics[i].Tag == tag && r.Metrics[i].Stat == stat {
			return &r.Metrics[i]
		}
	}
	return nil
}

// pooled is a side's requests taken together.
type pooled struct {
	values           map[string][]float64
	units            map[string]string
	requests, errors int
	// records: every run had its records.
	records bool
}

func pool(s *Side) pooled {
	p := pooled{values: map[string][]float64{}, units: map[string]string{}, records: true}
	for _, r := range s.Runs {
		p.requests += r.Requests
		p.errors += r.Errors
		if !r.HasRecords {
			p.records = false
			continue
		}
		for tag, v := range r.Values {
			p.values[tag] = append(p.values[tag], v...)
			if _, ok := p.units[tag]; !ok {
				p.units[tag] = r.Units[tag]
			}
		}
	}
	return p
}

// notTestedAggregate says why a single run's throughput gets no interval.
const notTestedAggregate = "a run's throughput is one observation of the whole run (requests over its duration); its requests share the server's queue, so resampling them does not reproduce its variation; compare multi-run profiles (--num-profile-runs) to test it"

// compareRequests compares over requests, the metrics in parallel.
func (r *Result) compareRequests(ctx context.Context, base, nw *Side, o Options) error {
	pb, pn := pool(base), pool(nw)
	for _, s := range []struct {
		side *Side
		p    pooled
	}{{base, pb}, {nw, pn}} {
		if !s.p.records {
			r.note("%s: a run has no %s, so its record metrics are not tested", s.side.Dir, RecordsFile)
		}
		r.noteRecordCounts(s.side)
	}
	// Slots keep the report order whatever order the metrics finish in.
	slots := make([][]Entry, len(metricDefs))
	var boots []int
	for i, d := range metricDefs {
		switch {
		case d.aggregate:
			vb, okb := sideAggregate(base, d.tag)
			vn, okn := sideAggregate(nw, d.tag)
			if okb && okn {
				e := untested(d, "avg", exportUnit(base, nw, d.tag), vb, vn, notTestedAggregate)
				e.NBase, e.NNew = len(base.Runs), len(nw.Runs)
				slots[i] = []Entry{e}
			}
		case pb.records && pn.records:
			if len(pb.values[d.tag]) > 0 && len(pn.values[d.tag]) > 0 {
				boots = append(boots, i)
			}
		default:
			slots[i] = untestedRecords(d, base, nw)
		}
	}
	errs := make([]error, len(metricDefs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for _, i := range boots {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			d := metricDefs[i]
			unit := pb.units[d.tag]
			if unit == "" {
				unit = pn.units[d.tag]
			}
			slots[i], errs[i] = bootEntries(ctx, d, unit, pb.values[d.tag], pn.values[d.tag], o)
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("compare: %w", err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("compare: %w", err)
	}
	for _, s := range slots {
		r.Metrics = append(r.Metrics, s...)
	}
	if pb.requests > 0 && pn.requests > 0 {
		r.Metrics = append(r.Metrics, errorRateProportions(pb.errors, pb.requests, pn.errors, pn.requests, o.Level))
	}
	return nil
}

// noteRecordCounts notes a run whose records disagree with its export's
// request count: the statistics compared are the records'.
func (r *Result) noteRecordCounts(s *Side) {
	for _, run := range s.Runs {
		rc, ok := run.Export["request_count"].Stats["avg"]
		if !run.HasRecords || !ok {
			continue
		}
		if good := run.Requests - run.Errors; float64(good) != rc {
			r.note("%s: %s holds %d successful profiling requests but %s counts %g; the statistics here are the records'",
				run.Dir, RecordsFile, good, ExportFile, rc)
		}
	}
}

// minTail is the fewest requests each side needs beyond a percentile
// (above it, or below it for p50) for a bootstrap interval of it. A
// resample varies a percentile only through the values beyond it: p99 of
// 100 requests is about their maximum, and the bootstrap of a maximum
// does not vary as another run's would. In the simulation
// (TestFalseAlarmRate's pool, 2000 splits) the 95% interval judged
// same-population halves different 5–14% of the time with 0.5–1.5
// requests beyond the percentile, and at most 4.3% from 2 on.
const minTail = 3

// minRequests is how many requests a side needs for percentile p's
// bootstrap interval.
func minRequests(p float64) int {
	return int(math.Ceil(minTail * 100 / min(p, 100-p)))
}

// bootEntries compares one record metric's statistics over requests:
// the mean by Welch's t interval, the percentiles by bootstrap.
//
// Not the bootstrap for the mean: on skewed latencies with a heavy tail
// its percentile interval is lopsided, short on the side away from the
// sample's own outliers, and judged 6–10% of same-population splits
// significant at the 95% level (5.9% at 1000 requests a side); the
// bootstrap-t was worse (8–13%), its symmetric form too cautious (0.4%
// at times). Welch's symmetric interval held 2.8–4.9% from 15 to 1000
// requests a side, and needs no resampling.
func bootEntries(ctx context.Context, d metricDef, unit string, vb, vn []float64, o Options) ([]Entry, error) {
	out := []Entry{welchEntry(d, "avg", unit, vb, vn, o.Level, EntryWelchRequests)}
	n := min(len(vb), len(vn))
	var ps []float64
	for _, p := range bootPercentiles {
		if n >= minRequests(p) {
			ps = append(ps, p)
		}
	}
	var iv []bootInterval
	if len(ps) > 0 {
		var err error
		if iv, err = bootstrapPercentiles(ctx, vb, vn, ps, o.Resamples, o.Level, o.Seed, d.tag); err != nil {
			return nil, err
		}
	}
	k := 0
	for j, p := range bootPercentiles {
		stat := bootStats[1+j]
		if k == len(ps) || ps[k] != p {
			e := untested(d, stat, unit, statOf(vb, stat), statOf(vn, stat),
				fmt.Sprintf("a bootstrap interval of %s needs %d requests a side (%d beyond it); the smaller side has %d", stat, minRequests(p), minTail, n))
			e.NBase, e.NNew = len(vb), len(vn)
			out = append(out, e)
			continue
		}
		b := iv[k]
		k++
		e := newEntry(d, stat, unit, b.base, b.new)
		e.CIAbsLow, e.CIAbsHigh = Num(b.absLow), Num(b.absHigh)
		e.CIRelLow, e.CIRelHigh = Num(b.relLow), Num(b.relHigh)
		e.Method, e.NBase, e.NNew = EntryBootstrap, len(vb), len(vn)
		e.Verdict = verdictOf(d.better, b.absLow, b.absHigh)
		out = append(out, e)
	}
	return out, nil
}

// statOf computes one statistic of values, NaN for none.
func statOf(values []float64, stat string) float64 {
	if len(values) == 0 {
		return math.NaN()
	}
	if stat == "avg" {
		return stats.Mean(values)
	}
	for j, name := range bootStats[1:] {
		if name == stat {
			return stats.PercentileSorted(slices.Sorted(slices.Values(values)), bootPercentiles[j])
		}
	}
	return math.NaN()
}

// untestedRecords reports a record metric without intervals from the
// exports, when a side has no records.
func untestedRecords(d metricDef, base, nw *Side) []Entry {
	var out []Entry
	for _, stat := range bootStats {
		vb, okb := sideExportStat(base, d.tag, stat)
		vn, okn := sideExportStat(nw, d.tag, stat)
		if okb && okn {
			e := untested(d, stat, exportUnit(base, nw, d.tag), vb, vn, "no per-request records ("+RecordsFile+") to bootstrap")
			e.NBase, e.NNew = len(base.Runs), len(nw.Runs)
			out = append(out, e)
		}
	}
	return out
}

// sideExportStat is the mean over a side's runs of an exported statistic.
func sideExportStat(s *Side, tag, stat string) (float64, bool) {
	var sum float64
	for _, r := range s.Runs {
		v, ok := r.Export[tag].Stats[stat]
		if !ok {
			return 0, false
		}
		sum += v
	}
	return sum / float64(len(s.Runs)), true
}

func sideAggregate(s *Side, tag string) (float64, bool) { return sideExportStat(s, tag, "avg") }

func exportUnit(base, nw *Side, tag string) string {
	for _, s := range []*Side{base, nw} {
		for _, r := range s.Runs {
			if u := r.Export[tag].Unit; u != "" {
				return u
			}
		}
	}
	return ""
}

// newEntry fills an entry's values and changes; intervals NaN, verdict
// not tested.
func newEntry(d metricDef, stat, unit string, base, nw float64) Entry {
	nan := Num(math.NaN())
	return Entry{Tag: d.tag, Stat: stat, Unit: unit, Base: Num(base), New: Num(nw),
		ChangeAbs: Num(nw - base), ChangeRel: Num(relative(nw-base, base)),
		CIRelLow: nan, CIRelHigh: nan, CIAbsLow: nan, CIAbsHigh: nan,
		Verdict: NotTested, Better: d.better, Method: EntryNone}
}

func untested(d metricDef, stat, unit string, base, nw float64, why string) Entry {
	e := newEntry(d, stat, unit, base, nw)
	e.Note = why
	return e
}

// relative is x/base, NaN when base is 0.
func relative(x, base float64) float64 {
	if base == 0 {
		return math.NaN()
	}
	return x / base
}

// verdictOf judges an interval [low, high] of the change new−base.
func verdictOf(better Direction, low, high float64) string {
	switch {
	case math.IsNaN(low) || math.IsNaN(high):
		return NotTested
	case low <= 0 && high >= 0:
		return NoChange
	case better == "":
		return Changed
	case (low > 0) == (better == Lower):
		return Regressed
	default:
		return Improved
	}
}

// errorRateProportions compares error rates by Newcombe's interval.
func errorRateProportions(eb, nb, en, nn int, level float64) Entry {
	d := metricDef{tag: ErrorRateTag, better: Lower}
	_, low, high := newcombe(eb, nb, en, nn, level)
	pb := 100 * float64(eb) / float64(nb)
	e := newEntry(d, ErrorRateStat, "%", pb, 100*float64(en)/float64(nn))
	e.CIAbsLow, e.CIAbsHigh = Num(100*low), Num(100*high)
	e.CIRelLow, e.CIRelHigh = Num(relative(100*low, pb)), Num(relative(100*high, pb))
	e.Method, e.NBase, e.NNew = EntryNewcombe, nb, nn
	e.Verdict = verdictOf(Lower, low, high)
	return e
}

// compareRuns compares by Welch's t over the runs' statistics.
func (r *Result) compareRuns(base, nw *Side, o Options) {
	for _, d := range metricDefs {
		statNames := bootStats[:]
		if d.aggregate {
			statNames = statNames[:1]
		}
		for _, stat := range statNames {
			xs, ub := runStats(base, d.tag, stat)
			ys, un := runStats(nw, d.tag, stat)
			if len(xs) == 0 || len(ys) == 0 {
				continue
			}
			unit := ub
			if unit == "" {
				unit = un
			}
			r.Metrics = append(r.Metrics, welchEntry(d, stat, unit, xs, ys, o.Level, EntryWelchRuns))
		}
	}
	var xs, ys []float64
	for _, run := range base.Runs {
		if run.Requests > 0 {
			xs = append(xs, 100*float64(run.Errors)/float64(run.Requests))
		}
	}
	for _, run := range nw.Runs {
		if run.Requests > 0 {
			ys = append(ys, 100*float64(run.Errors)/float64(run.Requests))
		}
	}
	if len(xs) > 0 && len(ys) > 0 {
		r.Metrics = append(r.Metrics, welchEntry(metricDef{tag: ErrorRateTag, better: Lower}, ErrorRateStat, "%", xs, ys, o.Level, EntryWelchRuns))
	}
}

// runStats is a statistic of each run that has it: from its export, or
// computed from its records.
func runStats(s *Side, tag, stat string) (values []float64, unit string) {
	for _, run := range s.Runs {
		if m, ok := run.Export[tag]; ok {
			if v, ok := m.Stats[stat]; ok {
				values = append(values, v)
				unit = m.Unit
				continue
			}
		}
		if v := run.Values[tag]; len(v) > 0 {
			values = append(values, statOf(v, stat))
			unit = run.Units[tag]
		}
	}
	return values, unit
}

func welchEntry(d metricDef, stat, unit string, xs, ys []float64, level float64, method string) Entry {
	e := newEntry(d, stat, unit, stats.Mean(xs), stats.Mean(ys))
	e.NBase, e.NNew = len(xs), len(ys)
	_, low, high, ok := welch(xs, ys, level)
	if !ok {
		e.Note = "Welch's interval needs two values a side"
		return e
	}
	b := float64(e.Base)
	e.CIAbsLow, e.CIAbsHigh = Num(low), Num(high)
	e.CIRelLow, e.CIRelHigh = Num(relative(low, b)), Num(relative(high, b))
	e.Method = method
	e.Verdict = verdictOf(d.better, low, high)
	return e
}

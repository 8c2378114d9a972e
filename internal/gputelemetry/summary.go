package gputelemetry

import (
	"math"
	"slices"
	"time"

	"github.com/llmbench/llmbench/internal/stats"
)

// CounterMode says how a counter's increase over the window is measured.
type CounterMode string

const (
	// CounterExact is llmbench's: the counter made cumulative across
	// resets (a value below the previous one restarted from zero, as
	// Prometheus' increase() counts it), read at the window's start and
	// end by linear interpolation between the scrapes around each. The run
	// scrapes at both boundaries, so the interpolation spans milliseconds.
	CounterExact CounterMode = "exact"
	// CounterAIPerf is AIPerf's (telemetry_models.py): the last value in
	// [start, end] minus the last one before start (else the first in the
	// window), clamped at zero, so a reset loses the counter's increase;
	// for the energy metrics the end is stretched by FinalGrace
	// (energy_efficiency_analyzer.py), counting that much idle time in.
	CounterAIPerf CounterMode = "aiperf"
)

// FinalGrace is AIPerf's AIPERF_GPU_FINAL_SCRAPE_GRACE_NS: how long after
// the profiling end its counter deltas still take samples from.
const FinalGrace int64 = 666_000_000

// Window is the profiling phase, in wall-clock epoch ns.
type Window struct {
	StartNs, EndNs int64
	Mode           CounterMode
}

// Stats are one field's statistics on one GPU. A counter has only Avg
// (its increase); a gauge has them all, its std with ddof 1 (0 for one
// sample), as AIPerf's telemetry does.
type Stats struct {
	Field   *Field
	Counter bool
	Avg     float64
	Min     float64
	Max     float64
	Sum     float64
	Std     float64
	Count   int
	P       [len(stats.Percentiles)]float64
	// Resets counts the times a counter went down (a driver reload) in
	// the run: its increase is counted across them in CounterExact mode.
	Resets int
}

// GPUSummary is one GPU's statistics over the window.
type GPUSummary struct {
	GPU     GPU
	Metrics []Stats
	// FirstNs and LastNs are its first and last reading in the run; Partial
	// is set when it began or stopped reporting well inside the window
	// (more than three scrape intervals), so its figures cover less.
	FirstNs, LastNs int64
	Partial         bool
}

// Report is what a run says of its GPUs: AIPerf's telemetry_data, the
// GPU section of the CSV and the console tables.
type Report struct {
	// Configured are the DCGM exporter URLs asked for (given, and the
	// defaults that answered); Successful those that answered.
	Configured, Successful []string
	Start, End             time.Time
	GPUs                   []GPUSummary
	// Energy is nil when no GPU reported power or energy.
	Energy        *Energy
	CounterWindow CounterMode
}

// Summarize computes every GPU's statistics over w, GPUs in the order
// they were first seen.
func (s *Store) Summarize(w Window) []GPUSummary {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]GPUSummary, 0, len(s.gpus))
	for _, ser := range s.gpus {
		if len(ser.times) == 0 {
			continue
		}
		lo, hi, partial := ser.coverage(w)
		g := GPUSummary{GPU: ser.gpu, FirstNs: ser.times[0], LastNs: ser.times[len(ser.times)-1], Partial: partial}
		for fi := range s.fields {
			f := &s.fields[fi]
			var st Stats
			var ok bool
			if f.Counter {
				st, ok = ser.counterStats(fi, w, lo, hi, 0)
			} else {
				st, ok = ser.gaugeStats(fi, w)
			}
			if ok {
				st.Field = f
				g.Metrics = append(g.Metrics, st)
			}
		}
		if len(g.Metrics) > 0 {
			out = append(out, g)
		}
	}
	return out
}

// coverage is the part of the window the GPU reported through: the whole
// window unless its readings began or ended more than three intervals
// inside it.
func (ser *series) coverage(w Window) (lo, hi int64, partial bool) {
	lo, hi = w.StartNs, w.EndNs
	iv := medianGap(ser.times)
	first, last := ser.times[0], ser.times[len(ser.times)-1]
	if iv > 0 && first > w.StartNs+3*iv {
		lo, partial = first, true
	}
	if iv > 0 && last < w.EndNs-3*iv {
		hi, partial = last, true
	}
	return lo, max(lo, hi), partial
}

func medianGap(times []int64) int64 {
	if len(times) < 2 {
		return 0
	}
	gaps := make([]int64, len(times)-1)
	for i := 1; i < len(times); i++ {
		gaps[i-1] = times[i] - times[i-1]
	}
	slices.Sort(gaps)
	return gaps[len(gaps)/2]
}

// gaugeStats are the statistics of the readings inside [start, end].
func (ser *series) gaugeStats(fi int, w Window) (Stats, bool) {
	var vals []float64
	for k, t := range ser.times {
		if t < w.StartNs || t > w.EndNs {
			continue
		}
		if v := ser.values[fi][k]; !math.IsNaN(v) {
			vals = append(vals, v)
		}
	}
	if len(vals) == 0 {
		return Stats{}, false
	}
	sum := stats.Summarize(vals)
	st := Stats{Avg: sum.Avg, Min: sum.Min, Max: sum.Max, Sum: sum.Sum, Count: sum.Count, P: sum.P}
	if len(vals) > 1 {
		st.Std = stats.StdDev(vals, 1)
	}
	return st, true
}

// counterStats is the counter's increase over the window, by w.Mode;
// grace stretches the window's end in CounterAIPerf mode.
func (ser *series) counterStats(fi int, w Window, lo, hi, grace int64) (Stats, bool) {
	var inc float64
	var ok bool
	if w.Mode == CounterAIPerf {
		inc, ok = ser.aiperfDelta(fi, w, grace)
	} else {
		inc, ok = ser.increase(fi, lo, hi)
	}
	if !ok {
		return Stats{}, false
	}
	return Stats{Counter: true, Avg: inc, Min: inc, Max: inc, Sum: inc, Count: 1, Resets: ser.resets(fi, w.StartNs, w.EndNs+grace)}, true
}

// resets counts the counter's drops between readings inside [from, to].
func (ser *series) resets(fi int, from, to int64) int {
	n, prev := 0, math.NaN()
	for k, t := range ser.times {
		v := ser.values[fi][k]
		if math.IsNaN(v) {
			continue
		}
		if t > from && t <= to && v < prev {
			n++
		}
		prev = v
	}
	return n
}

// increase is the counter's reset-aware increase over [lo, hi], each end
// read by linear interpolation between the readings around it (held flat
// beyond the first and last reading).
func (ser *series) increase(fi int, lo, hi int64) (float64, bool) {
	times, cum := ser.cumulative(fi)
	if len(times) == 0 {
		return 0, false
	}
	return interpolate(times, cum, hi) - interpolate(times, cum, lo), true
}

// cumulative is the counter's valid readings made monotone across resets:
// after a drop the new reading counts from zero, as increase() counts it.
func (ser *series) cumulative(fi int) (times []int64, cum []float64) {
	prev := math.NaN()
	for k, t := range ser.times {
		v := ser.values[fi][k]
		if math.IsNaN(v) {
			continue
		}
		c := v
		if n := len(cum); n > 0 {
			if v >= prev {
				c = cum[n-1] + (v - prev)
			} else {
				c = cum[n-1] + v // a reset: counted from zero
			}
		}
		times, cum, prev = append(times, t), append(cum, c), v
	}
	return times, cum
}

// interpolate reads the piecewise-linear function through (times, vals)
// at t, flat beyond its ends.
func interpolate(times []int64, vals []float64, t int64) float64 {
	n := len(times)
	if t <= times[0] {
		return vals[0]
	}
	if t >= times[n-1] {
		return vals[n-1]
	}
	k, _ := slices.BinarySearch(times, t) // times[k-1] < t <= times[k]
	t0, t1 := times[k-1], times[k]
	if t1 == t0 {
		return vals[k]
	}
	frac := float64(t-t0) / float64(t1-t0)
	return vals[k-1] + frac*(vals[k]-vals[k-1])
}

// aiperfDelta is AIPerf's counter delta: max(last valid reading in
// [start, end+grace] − reference, 0), the reference being the last valid
// reading before start, else the first in the window.
func (ser *series) aiperfDelta(fi int, w Window, grace int64) (float64, bool) {
	ref, last := math.NaN(), math.NaN()
	for k, t := range ser.times {
		v := ser.values[fi][k]
		if math.IsNaN(v) {
			continue
		}
		switch {
		case t < w.StartNs:
			ref = v
		case t <= w.EndNs+grace:
			if math.IsNaN(ref) {
				ref = v
			}
			last = v
		}
	}
	if math.IsNaN(last) {
		return 0, false
	}
	return max(last-ref, 0), true
}

// powerIntegral is the energy in joules of the power readings over
// [lo, hi]: the trapezoidal integral of their linear interpolation, held
// flat beyond the first and last reading.
func (ser *series) powerIntegral(fi int, lo, hi int64) (float64, bool) {
	var times []int64
	var vals []float64
	for k, t := range ser.times {
		if v := ser.values[fi][k]; !math.IsNaN(v) {
			times, vals = append(times, t), append(vals, v)
		}
	}
	if len(times) == 0 || hi <= lo {
		return 0, len(times) > 0
	}
	// The integral's knots: lo, every reading strictly inside, hi.
	prevT, prevV := lo, interpolate(times, vals, lo)
	var joules float64
	for k, t := range times {
		if t <= lo || t >= hi {
			continue
		}
		joules += (prevV + vals[k]) / 2 * float64(t-prevT) / 1e9
		prevT, prevV = t, vals[k]
	}
	joules += (prevV + interpolate(times, vals, hi)) / 2 * float64(hi-prevT) / 1e9
	return joules, true
}

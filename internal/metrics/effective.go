package metrics

import (
	"math"

	"github.com/llmbench/llmbench/internal/stats"
)

// AIPerf 0.12's run-level client metrics (aiperf-0.12-features f1–f3):
// coordinated-omission-aware latencies from the credit's issue time,
// error-adjusted percentiles and the time-weighted families.

// Credit latencies, computed over every record of the phase, failed ones
// included, from its credit_issued_ns; negative values clamp to 0.
//
// credit_to_start_latency is llmbench's schedule_lateness under AIPerf's
// name: the same start - credit issued per record. schedule_lateness
// stays as it was (unclamped, successful records only), next to
// latencies from the due instant that AIPerf lacks.
var (
	DefEffectiveLatency     = Def{"effective_latency", "Effective Latency (CO-aware)", "ms", Record, Effective | NoIndividualRecords}
	DefCreditToStartLatency = Def{"credit_to_start_latency", "Credit-to-Start Latency", "ms", Record, NoConsole | NoIndividualRecords}
)

// adjustedIDs are the metrics whose percentiles AIPerf also reports with
// the failed requests counted in ("percentile includes failed requests").
var adjustedIDs = [...]ID{RequestLatency, TimeToFirstToken, InterTokenLatency, DecodeDuration}

// AdjustedDef describes adj_<tag>, the error-adjusted view of id. It is
// exported, not shown: its avg and max are infinite.
func AdjustedDef(id ID) Def {
	d := RecordDefs[id]
	return Def{"adj_" + d.Tag, d.Header + " (error-adjusted)", d.Unit, Record, d.Flags&^LargerIsBetter | NoConsole | NoIndividualRecords}
}

// adjustedSummary is the distribution of sorted (the successful records'
// values, ascending) with one +Inf per error: percentiles by numpy's
// "nearest" method, avg, sum and max +Inf, no std.
func adjustedSummary(sorted []float64, errors int) stats.Summary {
	n := len(sorted) + errors
	inf := math.Inf(1)
	s := stats.Summary{Count: n, Sum: inf, Avg: inf, Min: inf, Max: inf, Std: math.NaN()}
	if len(sorted) > 0 {
		s.Min = sorted[0]
	}
	for i, p := range stats.Percentiles {
		k := nearestIndex(n, p/100)
		s.P[i] = inf
		if k < len(sorted) {
			s.P[i] = sorted[k]
		}
	}
	return s
}

// nearestIndex is numpy's "nearest" quantile index: the virtual index
// n·q + (1 - q) - 1, evaluated as numpy does, rounded half to even.
func nearestIndex(n int, q float64) int {
	h := float64(float64(n)*q) + (1 + q*-1) - 1
	return min(max(int(math.RoundToEven(h)), 0), n-1)
}

// coLatency accumulates effective_latency and credit_to_start_latency.
type coLatency struct {
	effective, creditToStart column
}

func (c *coLatency) add(v *Values) {
	if v.CreditWall == 0 {
		return
	}
	end := v.RequestEndWall
	if end == 0 {
		end = v.EndWall
	}
	c.effective.add(ms(max(end-v.CreditWall, 0)))
	c.creditToStart.add(ms(max(v.StartWall-v.CreditWall, 0)))
}

// extraMetrics are the Aggregator's part for AIPerf 0.12's metrics.
type extraMetrics struct {
	co    coLatency
	sweep sweep
	// slice: a time slice's aggregator, which keeps neither: AIPerf
	// computes the credit latencies over the run only, and the slices'
	// time-weighted families from the run's curves (TimeWeighted).
	slice bool
	// window is the phase's [start, end], wall ns; unset, the span of
	// the records.
	window    [2]int64
	hasWindow bool
}

func newExtraMetrics() extraMetrics {
	return extraMetrics{
		co:    coLatency{effective: newColumn(nsPerMs), creditToStart: newColumn(nsPerMs)},
		sweep: sweep{iclLimit: ICLExactLimit},
	}
}

func (e *extraMetrics) add(v *Values) {
	if e.slice {
		return
	}
	e.co.add(v)
	e.sweep.add(v)
}

// isAdjusted reports whether metric id has an error-adjusted view.
func isAdjusted(id ID) bool {
	for _, a := range adjustedIDs {
		if a == id {
			return true
		}
	}
	return false
}

// results are the run-level metrics in AIPerf's order: the time-weighted
// families, then credit_to_start_latency and effective_latency.
func (e *extraMetrics) results(sp *Spill, buf []uint64) []Result {
	if e.slice {
		return nil
	}
	w0, w1 := e.window[0], e.window[1]
	if !e.hasWindow {
		w0, w1 = e.sweep.span()
	}
	// The credit latencies first, so that their sort's buffer is free
	// before the sweep sorts its records.
	var co []Result
	for _, c := range []struct {
		d   Def
		col *column
	}{{DefCreditToStartLatency, &e.co.creditToStart}, {DefEffectiveLatency, &e.co.effective}} {
		if c.col.n == 0 {
			continue
		}
		var s stats.Summary
		s, _, buf = summarizeColumn(c.col, sp, 0, false, buf)
		co = append(co, Result{Def: c.d, Dist: &s})
	}
	return append(e.sweep.results(w0, w1), co...)
}

// SetWindow sets the phase's window, wall-clock ns: from its start to when
// its last request ended. The time-weighted families are averaged over it.
func (a *Aggregator) SetWindow(startNs, endNs int64) {
	a.extra.window, a.extra.hasWindow = [2]int64{startNs, endNs}, true
}

// ForTimeslice makes a an aggregator of one time slice, which leaves the
// run-level metrics (credit latencies, time-weighted families) to the
// run's aggregator. It returns a.
func (a *Aggregator) ForTimeslice() *Aggregator {
	a.extra.slice = true
	return a
}

// TimeWeighted is the Effective and Active families over [startNs, endNs]
// (a time slice), from every record's curves; nil without records.
func (a *Aggregator) TimeWeighted(startNs, endNs int64) []Result {
	return a.extra.sweep.results(startNs, endNs)
}

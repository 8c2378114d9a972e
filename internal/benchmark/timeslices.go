package benchmark

import (
	"sync/atomic"

	"github.com/llmbench/llmbench/internal/endpoint"
	"github.com/llmbench/llmbench/internal/export"
	"github.com/llmbench/llmbench/internal/metrics"
	"github.com/llmbench/llmbench/internal/record"
)

// timeslices sorts the profiling records into --slice-duration windows by
// when they started, from the start of the profiling phase, and keeps one
// aggregator per window: the client metrics over time.
type timeslices struct {
	// origin is the profiling phase's start, wall-clock ns, set when it
	// begins (before any profiling request is sent).
	origin  *atomic.Int64
	width   int64 // ns
	goodput bool
	// caps are the endpoint type's: which token metrics a slice has.
	caps endpoint.Caps
	aggs []*metrics.Aggregator
	// spill keeps the slices' values within the run's memory budget.
	spill *metrics.Spill
}

func (t *timeslices) add(r *record.Record, v *metrics.Values) {
	i := int((v.StartWall - t.origin.Load()) / t.width)
	i = max(i, 0) // a clock read a hair before the phase's own
	for len(t.aggs) <= i {
		t.aggs = append(t.aggs, metrics.NewAggregator(t.goodput).ForTimeslice().ForTokens(t.caps.ProducesTokens, t.caps.TokenizesInput).WithSpill(t.spill))
	}
	t.aggs[i].Add(r, v)
}

// results are the slices' metrics; a slice the profiling phase (ending at
// endNs) did not outlast is incomplete. Each slice's time-weighted
// families come from the run's curves (run) over the slice, cut at endNs
// as AIPerf cuts its last slice at the run's end, so idle time after it
// does not dilute them.
func (t *timeslices) results(endNs int64, run *metrics.Aggregator) []export.Timeslice {
	out := make([]export.Timeslice, len(t.aggs))
	origin := t.origin.Load()
	for i, a := range t.aggs {
		start := origin + int64(i)*t.width
		rs := a.Results()
		rs.Metrics = append(rs.Metrics, run.TimeWeighted(start, min(start+t.width, endNs))...)
		out[i] = export.Timeslice{StartNs: start, EndNs: start + t.width, Complete: start+t.width <= endNs, Results: rs}
	}
	return out
}

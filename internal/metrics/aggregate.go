package metrics

import (
	"math"
	"sort"

	"github.com/llmbench/llmbench/internal/record"
	"github.com/llmbench/llmbench/internal/stats"
)

// Aggregator accumulates the profiling-phase records of a run. It is not
// safe for concurrent use; feed it from one goroutine.
type Aggregator struct {
	// values are every record metric's values, kept compactly and exactly
	// until Results sorts them.
	values [numRecordMetrics]column
	// iclHist takes over inter_chunk_latency once iclExactLimit values
	// are kept: a stream's every gap is most of what a long run would
	// hold (README).
	iclHist       *stats.LogHistogram
	iclExactLimit int

	valid, errors          int
	minStart, maxEnd       int64
	usageDiscrepancies     int
	oslMismatches          int
	good                   int
	goodput                bool
	hasUsage, hasReasoning bool
	// noOutputTokens, noInputTokens: the API type makes or takes no
	// text (ForTokens), so the run's token totals are absent.
	noOutputTokens, noInputTokens bool
	totalISL, totalOSL            float64
	totalOutput                   float64
	totalReasoning                float64
	totalErrorISL                 float64
	usagePrompt                   float64
	usageCompletion               float64
	usageTotal                    float64
	errorCounts                   map[record.Error]int
	// extra: AIPerf 0.12's run-level metrics (effective.go).
	extra extraMetrics
	// breakdown holds, for each record with server timings, where its
	// time to first token went (32 bytes a record); timingConflicts counts
	// the records whose server account did not fit the client's time.
	breakdown       rowList
	timingConflicts int
	// timingRejected counts the records whose server sent timing values
	// that cannot be times (left out).
	timingRejected int
	// sp, when set, keeps what grows with the records within a memory
	// budget (WithSpill).
	sp *Spill
}

// WithSpill keeps every per-request value a within sp's memory budget,
// the rest on disk, and computes the statistics within it too, exactly.
// Call it before the first Add; several aggregators (a run's and its time
// slices') may share sp. It returns a.
func (a *Aggregator) WithSpill(sp *Spill) *Aggregator {
	a.sp = sp
	for id := range a.values {
		a.values[id].list.sp = sp
	}
	a.extra.co.effective.list.sp = sp
	a.extra.co.creditToStart.list.sp = sp
	a.extra.sweep.sp = sp
	a.breakdown.l.sp = sp
	return a
}

// Err is the first error spilling to disk or reading back: the
// statistics are not to be used.
func (a *Aggregator) Err() error { return a.sp.Err() }

// ICLExactLimit is how many inter-chunk latencies are kept exactly (some
// 8 MB); beyond it they are summarised in a stats.LogHistogram, whose
// percentiles are within 0.1 % of the exact ones.
const ICLExactLimit = 1 << 21

// NewAggregator returns an empty aggregator. With goodput set, it
// reports good_request_count, goodput and good_request_fraction.
func NewAggregator(goodput bool) *Aggregator {
	a := &Aggregator{minStart: math.MaxInt64, maxEnd: math.MinInt64, errorCounts: map[record.Error]int{}, iclExactLimit: ICLExactLimit, goodput: goodput, extra: newExtraMetrics()}
	for id, def := range RecordDefs {
		scale := 1.0 // counts, and values kept as they are
		switch def.Unit {
		case "ms":
			scale = nsPerMs // times measured in whole nanoseconds
		case "KB":
			scale = bytesPerKB // sizes measured in whole bytes
		}
		a.values[id] = newColumn(scale)
	}
	return a
}

// orZero is x, or 0 for an absent (NaN) value.
func orZero(x float64) float64 {
	if math.IsNaN(x) {
		return 0
	}
	return x
}

// ForTokens tells a which token totals the API type has: none of output
// (embeddings, rankings, images) or of input when it makes or takes no
// text. It returns a.
func (a *Aggregator) ForTokens(output, input bool) *Aggregator {
	a.noOutputTokens, a.noInputTokens = !output, !input
	a.extra.sweep.noTokens = !output || !input
	return a
}

// Add accumulates one record and its computed values.
func (a *Aggregator) Add(r *record.Record, v *Values) {
	a.minStart = min(a.minStart, v.StartWall)
	a.maxEnd = max(a.maxEnd, v.EndWall)
	a.extra.add(v)
	conflict := v.V[ServerTimingConflict] == 1
	for id := range numRecordMetrics {
		if id == InterChunkLatency {
			a.addICL(v.ICL)
		} else if conflict && serverPart(id) {
			continue // see servertimes.go
		} else if !math.IsNaN(v.V[id]) {
			a.values[id].add(v.V[id])
		}
	}
	if !r.Valid() {
		a.errors++
		a.totalErrorISL += orZero(v.V[ErrorISL])
		a.errorCounts[*r.Err]++
		return
	}
	a.valid++
	a.totalISL += orZero(v.V[InputSequenceLength])
	a.totalOSL += orZero(v.V[OutputSequenceLength])
	a.totalOutput += orZero(v.V[OutputTokenCount])
	if !math.IsNaN(v.V[ReasoningTokenCount]) {
		a.hasReasoning = true
		a.totalReasoning += v.V[ReasoningTokenCount]
	}
	if r.Usage != nil {
		a.hasUsage = true
		a.usagePrompt += orZero(v.V[UsagePromptTokens])
		a.usageCompletion += orZero(v.V[UsageCompletionTokens])
		a.usageTotal += orZero(v.V[UsageTotalTokens])
	}
	if v.UsageDiscrepancy {
		a.usageDiscrepancies++
	}
	if v.OSLMismatch {
		a.oslMismatches++
	}
	if v.Good {
		a.good++
	}
	if st := r.ServerTimings; st != nil && st.Rejected > 0 {
		a.timingRejected++
	}
	if conflict {
		a.timingConflicts++
	} else if row, ok := breakdownRowOf(v); ok {
		a.breakdown.add(row)
	}
}

// addICL keeps a record's inter-chunk latencies, exactly until the limit.
func (a *Aggregator) addICL(icl []float64) {
	c := &a.values[InterChunkLatency]
	if a.iclHist == nil && c.n+len(icl) > a.iclExactLimit {
		a.iclHist = stats.NewLogHistogram()
		c.each(func(vs []float64) {
			for _, x := range vs {
				a.iclHist.Add(x)
			}
		})
		c.reset()
	}
	for _, x := range icl {
		if a.iclHist != nil {
			a.iclHist.Add(x)
		} else {
			c.add(x)
		}
	}
}

// RetainedBytes is the memory the accumulated values hold.
func (a *Aggregator) RetainedBytes() int {
	total := 0
	for id := range a.values {
		total += a.values[id].bytes()
	}
	total += a.extra.co.effective.bytes() + a.extra.co.creditToStart.bytes()
	total += a.extra.sweep.ins.memBytes() + len(a.extra.sweep.icl)
	return total + a.breakdown.l.memBytes()
}

// Result is one metric's outcome: a distribution for record metrics, one
// value for aggregate and derived metrics.
type Result struct {
	Def Def
	// Dist is set for record metrics.
	Dist *stats.Summary
	// Value is set for aggregate and derived metrics.
	Value float64
	// Exact holds integer values (nanosecond timestamps) that float64 would
	// round; exporters write it instead of Value when set.
	Exact *int64
}

// ErrorCount is how often one distinct error happened.
type ErrorCount struct {
	Error record.Error
	Count int
}

// Results are a run's metrics.
type Results struct {
	Metrics       []Result
	Errors        []ErrorCount
	RequestCount  int
	ErrorCount    int
	OSLMismatches int
	// DurationSec is benchmark_duration in seconds (0 when nothing completed).
	DurationSec float64
	// TTFTBreakdown is where the time to first token went, by the
	// servers' per-request timings; nil without them.
	TTFTBreakdown *Breakdown
}

// Get returns the result with tag, if present.
func (rs *Results) Get(tag string) (Result, bool) {
	for _, r := range rs.Metrics {
		if r.Def.Tag == tag {
			return r, true
		}
	}
	return Result{}, false
}

// Results computes the distributions and the aggregate and derived metrics.
// It sorts the accumulated samples; call it once, after the last Add.
func (a *Aggregator) Results() Results {
	var out Results
	// One buffer sorts every metric in turn: the run's peak memory is
	// then one metric's values, 8 bytes each, or with a spill at most its
	// working memory (sorted.go).
	var buf []uint64
	var adjusted []Result
	for id := range numRecordMetrics {
		if id == InterChunkLatency && a.iclHist != nil {
			s := a.iclHist.Summary()
			out.Metrics = append(out.Metrics, Result{Def: RecordDefs[id], Dist: &s})
			continue
		}
		if a.values[id].n == 0 {
			continue
		}
		s, adj, b := summarizeColumn(&a.values[id], a.sp, a.errors, isAdjusted(id), buf)
		buf = b
		out.Metrics = append(out.Metrics, Result{Def: RecordDefs[id], Dist: &s})
		if adj != nil {
			adjusted = append(adjusted, Result{Def: AdjustedDef(id), Dist: adj})
		}
	}
	scalar := func(d Def, v float64) { out.Metrics = append(out.Metrics, Result{Def: d, Value: v}) }

	out.RequestCount, out.ErrorCount, out.OSLMismatches = a.valid, a.errors, a.oslMismatches
	scalar(DefRequestCount, float64(a.valid))
	if a.errors > 0 {
		scalar(DefErrorRequestCount, float64(a.errors))
		if !a.noInputTokens {
			scalar(DefTotalErrorISL, a.totalErrorISL)
		}
	}
	if a.goodput {
		scalar(DefGoodRequestCount, float64(a.good))
		// good_request_fraction = good / (request_count + error_request_count),
		// 0 when nothing was attempted: failed requests count against it.
		fraction := 0.0
		if n := a.valid + a.errors; n > 0 {
			fraction = float64(a.good) / float64(n)
		}
		scalar(DefGoodRequestFraction, fraction)
	}
	if a.valid+a.errors == 0 {
		return out
	}
	exact := func(d Def, v int64) {
		out.Metrics = append(out.Metrics, Result{Def: d, Value: float64(v), Exact: &v})
	}
	exact(DefMinRequestTimestamp, a.minStart)
	exact(DefMaxResponseTimestamp, a.maxEnd)
	// benchmark_duration = max_response_timestamp - min_request_timestamp
	out.DurationSec = float64(a.maxEnd-a.minStart) / 1e9
	scalar(DefBenchmarkDuration, out.DurationSec)
	if out.DurationSec > 0 {
		scalar(DefRequestThroughput, float64(a.valid)/out.DurationSec)
		if a.goodput {
			// goodput = good_request_count / benchmark_duration
			scalar(DefGoodput, float64(a.good)/out.DurationSec)
		}
		if !a.noOutputTokens {
			scalar(DefOutputTokenThroughput, a.totalOSL/out.DurationSec)
			if !a.noInputTokens {
				scalar(DefTotalTokenThroughput, (a.totalISL+a.totalOSL)/out.DurationSec)
			}
		}
	}
	if !a.noOutputTokens {
		scalar(DefTotalOutputTokens, a.totalOutput)
		if a.hasReasoning {
			scalar(DefTotalReasoningTokens, a.totalReasoning)
		}
		scalar(DefTotalOSL, a.totalOSL)
	}
	if !a.noInputTokens {
		scalar(DefTotalISL, a.totalISL)
	}
	if a.hasUsage {
		scalar(DefTotalUsagePrompt, a.usagePrompt)
		if !a.noOutputTokens {
			scalar(DefTotalUsageCompletion, a.usageCompletion)
			scalar(DefTotalUsageTotal, a.usageTotal)
		}
		scalar(DefUsageDiscrepancy, float64(a.usageDiscrepancies))
	}
	if a.values[OSLMismatchDiffPct].n > 0 {
		scalar(DefOSLMismatchCount, float64(a.oslMismatches))
	}
	out.Metrics = append(out.Metrics, adjusted...)
	out.Metrics = append(out.Metrics, a.extra.results(a.sp, buf)...)

	out.TTFTBreakdown = breakdownSorted(int(a.breakdown.l.n), func(fn func([]breakdownRow)) { a.breakdown.sortedRows(a.sp, fn) },
		a.timingConflicts, a.timingRejected)

	for e, n := range a.errorCounts {
		out.Errors = append(out.Errors, ErrorCount{Error: e, Count: n})
	}
	sort.Slice(out.Errors, func(i, j int) bool {
		if out.Errors[i].Count != out.Errors[j].Count {
			return out.Errors[i].Count > out.Errors[j].Count
		}
		return out.Errors[i].Error.Type+out.Errors[i].Error.Message < out.Errors[j].Error.Type+out.Errors[j].Error.Message
	})
	return out
}

package metrics

import (
	"math"
	"testing"

	"github.com/llmbench/llmbench/internal/record"
	"github.com/llmbench/llmbench/internal/tokenizer"
)

const msNs = int64(1e6)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// Hand-built records; every expected value below is worked out by hand from
// the metrics reference's formulas.
func streamingRecord() *record.Record {
	return &record.Record{
		InputTokens: 10, RequestedOutputTokens: 5, Streaming: true,
		StartPerf:       0,
		ResponsePerfs:   []int64{100 * msNs, 150 * msNs, 210 * msNs, 300 * msNs},
		FirstOutputPerf: 100 * msNs,
		EndPerf:         305 * msNs,
		OutputText:      "a b c d",
		Usage:           &record.Usage{PromptTokens: 11, CompletionTokens: 4, TotalTokens: 15},
	}
}

func TestComputeStreaming(t *testing.T) {
	clock := record.ClockAt(1_000_000_000)
	v := Compute(streamingRecord(), tokenizer.Words{}, clock, DefaultOptions())
	want := map[ID]float64{
		RequestLatency:               300,       // 300ms - 0
		TimeToFirstToken:             100,       // first chunk
		TimeToSecondToken:            50,        // 150 - 100
		TimeToFirstOutputToken:       100,       // first non-reasoning chunk
		InterTokenLatency:            200.0 / 3, // (300 - 100) / (4 - 1)
		OutputTokenThroughputPerUser: 15,        // 1 / 0.0666… s
		PrefillThroughputPerUser:     100,       // 10 tokens / 0.1 s
		E2EOutputTokenThroughput:     4 / 0.3,   // 4 tokens / 0.3 s
		InputSequenceLength:          10,
		OutputTokenCount:             4,
		OutputSequenceLength:         4,
		UsagePromptTokens:            11,
		UsageCompletionTokens:        4,
		UsageTotalTokens:             15,
		UsagePromptTokensDiffPct:     10, // |11-10|/10*100
		UsageCompletionTokensDiffPct: 0,
		OSLMismatchDiffPct:           -20, // (4-5)/5*100
	}
	for id, w := range want {
		if !near(v.V[id], w) {
			t.Errorf("%s = %v, want %v", RecordDefs[id].Tag, v.V[id], w)
		}
	}
	for _, id := range []ID{ReasoningTokenCount, UsageReasoningTokens, ErrorISL} {
		if v.Has(id) {
			t.Errorf("%s should be absent, got %v", RecordDefs[id].Tag, v.V[id])
		}
	}
	if got, want := v.ICL, []float64{50, 60, 90}; len(got) != 3 || !near(got[0], want[0]) || !near(got[1], want[1]) || !near(got[2], want[2]) {
		t.Errorf("inter_chunk_latency = %v, want %v", got, want)
	}
	if v.UsageDiscrepancy {
		t.Error("a 10% difference is not above the 10% threshold")
	}
	// threshold = min(5*5%, 50) = 0.25 tokens; |4-5| = 1 > 0.25
	if !v.OSLMismatch {
		t.Error("want an OSL mismatch")
	}
	if v.StartWall != 1_000_000_000 || v.EndWall != 1_300_000_000 {
		t.Errorf("wall start/end = %d/%d", v.StartWall, v.EndWall)
	}
}

func TestComputeReasoningAndServerCounts(t *testing.T) {
	r := &record.Record{
		InputTokens: 8, Streaming: true, StartPerf: 0,
		ResponsePerfs:   []int64{10 * msNs, 20 * msNs, 40 * msNs},
		FirstOutputPerf: 40 * msNs,
		ReasoningText:   "think hard", OutputText: "ok",
		Usage: &record.Usage{PromptTokens: 9, CompletionTokens: 6, TotalTokens: 15, ReasoningTokens: 4, HasReasoning: true},
	}
	clock := record.ClockAt(0)
	v := Compute(r, tokenizer.Words{}, clock, DefaultOptions())
	// client: output 1, reasoning 2, OSL 3; TTFO at 40ms, TTFT at 10ms
	checks := map[ID]float64{OutputTokenCount: 1, ReasoningTokenCount: 2, OutputSequenceLength: 3,
		TimeToFirstToken: 10, TimeToFirstOutputToken: 40, InterTokenLatency: 15, // (40-10)/(3-1)
		UsageReasoningTokens: 4, UsageReasoningTokensDiffPct: 100, UsageCompletionTokensDiffPct: 100}
	for id, w := range checks {
		if !near(v.V[id], w) {
			t.Errorf("client counts: %s = %v, want %v", RecordDefs[id].Tag, v.V[id], w)
		}
	}
	if !v.UsageDiscrepancy {
		t.Error("a 100% difference is a discrepancy")
	}
	opts := DefaultOptions()
	opts.UseServerTokenCount = true
	v = Compute(r, tokenizer.Words{}, clock, opts)
	// server: output 6-4 = 2, reasoning 4, OSL 6, ISL 9
	checks = map[ID]float64{OutputTokenCount: 2, ReasoningTokenCount: 4, OutputSequenceLength: 6, InputSequenceLength: 9}
	for id, w := range checks {
		if !near(v.V[id], w) {
			t.Errorf("server counts: %s = %v, want %v", RecordDefs[id].Tag, v.V[id], w)
		}
	}
}

func TestComputeNonStreamingAndError(t *testing.T) {
	clock := record.ClockAt(0)
	r := &record.Record{InputTokens: 20, StartPerf: 1000 * msNs, EndPerf: 1500 * msNs,
		ResponsePerfs: []int64{1500 * msNs}, OutputText: "x y"}
	v := Compute(r, tokenizer.Words{}, clock, DefaultOptions())
	if !near(v.V[RequestLatency], 500) || !near(v.V[OutputSequenceLength], 2) || !near(v.V[E2EOutputTokenThroughput], 4) {
		t.Errorf("latency %v osl %v e2e %v", v.V[RequestLatency], v.V[OutputSequenceLength], v.V[E2EOutputTokenThroughput])
	}
	for _, id := range []ID{TimeToFirstToken, InterTokenLatency, OutputTokenThroughputPerUser, TimeToSecondToken, OSLMismatchDiffPct} {
		if v.Has(id) {
			t.Errorf("non-streaming record has %s", RecordDefs[id].Tag)
		}
	}
	bad := &record.Record{InputTokens: 7, StartPerf: 200 * msNs, EndPerf: 400 * msNs, Err: &record.Error{Code: 500, Type: "InternalServerError", Message: "boom"}}
	v = Compute(bad, tokenizer.Words{}, clock, DefaultOptions())
	for id := range numRecordMetrics {
		if id == ErrorISL {
			if v.V[id] != 7 {
				t.Errorf("error_isl = %v, want 7", v.V[id])
			}
		} else if v.Has(id) {
			t.Errorf("error record has %s", RecordDefs[id].Tag)
		}
	}
}

func TestAggregator(t *testing.T) {
	clock := record.ClockAt(0)
	tok := tokenizer.Words{}
	opts := DefaultOptions()
	recs := []*record.Record{
		streamingRecord(),
		{InputTokens: 20, StartPerf: 1000 * msNs, EndPerf: 1500 * msNs, ResponsePerfs: []int64{1500 * msNs}, OutputText: "x y"},
		{InputTokens: 7, StartPerf: 200 * msNs, EndPerf: 400 * msNs, Err: &record.Error{Code: 500, Type: "InternalServerError", Message: "boom"}},
		{InputTokens: 3, StartPerf: 250 * msNs, EndPerf: 450 * msNs, Err: &record.Error{Code: 500, Type: "InternalServerError", Message: "boom"}},
	}
	agg := NewAggregator(false)
	for _, r := range recs {
		v := Compute(r, tok, clock, opts)
		agg.Add(r, &v)
	}
	res := agg.Results()
	// duration = max end (1500ms) - min start (0) = 1.5 s
	want := map[string]float64{
		"request_count":           2,
		"error_request_count":     2,
		"total_error_isl":         10,
		"benchmark_duration":      1.5,
		"request_throughput":      2 / 1.5,
		"total_osl":               6,  // 4 + 2
		"total_isl":               30, // 10 + 20
		"output_token_throughput": 4,  // 6 / 1.5
		"total_token_throughput":  24, // 36 / 1.5
		"min_request_timestamp":   0,
		"max_response_timestamp":  1.5e9,
		"osl_mismatch_count":      1,
		"usage_discrepancy_count": 0,
	}
	for tag, w := range want {
		r, ok := res.Get(tag)
		if !ok {
			t.Errorf("%s missing", tag)
			continue
		}
		if !near(r.Value, w) {
			t.Errorf("%s = %v, want %v", tag, r.Value, w)
		}
	}
	lat, _ := res.Get("request_latency")
	// latencies 300 and 500: avg 400, std (population) 100, p50 400, p90 = 300+0.9*200
	if d := lat.Dist; d.Count != 2 || !near(d.Avg, 400) || !near(d.Std, 100) || !near(d.P[4], 400) || !near(d.P[6], 480) {
		t.Errorf("request_latency dist = %+v", *d)
	}
	icl, _ := res.Get("inter_chunk_latency")
	if icl.Dist.Count != 3 || !near(icl.Dist.Avg, 200.0/3) {
		t.Errorf("inter_chunk_latency dist = %+v", *icl.Dist)
	}
	if len(res.Errors) != 1 || res.Errors[0].Count != 2 || res.Errors[0].Error.Code != 500 {
		t.Errorf("error summary = %+v", res.Errors)
	}
}

// TestComputeFromSchedule: lateness is start minus due in every mode; the
// latencies from the due instant exist only when the schedule was fixed
// in advance (rate mode), where they add the lateness to TTFT and request
// latency.
func TestComputeFromSchedule(t *testing.T) {
	clock := record.ClockAt(1_000_000_000)
	for _, tc := range []struct {
		name      string
		scheduled bool
		want      map[ID]float64
	}{
		{"rate mode", true, map[ID]float64{ScheduleLateness: 2.5, TimeToFirstTokenFromSchedule: 102.5, RequestLatencyFromSchedule: 302.5}},
		{"concurrency mode", false, map[ID]float64{ScheduleLateness: 2.5}},
	} {
		r := streamingRecord()
		// Perf time 0 means unknown: the clock starts before any request.
		r.StartPerf += 10 * msNs
		r.EndPerf += 10 * msNs
		r.FirstOutputPerf += 10 * msNs
		for i := range r.ResponsePerfs {
			r.ResponsePerfs[i] += 10 * msNs
		}
		r.CreditIssuedPerf, r.Scheduled = r.StartPerf-2_500_000, tc.scheduled
		v := Compute(r, tokenizer.Words{}, clock, DefaultOptions())
		for _, id := range []ID{ScheduleLateness, TimeToFirstTokenFromSchedule, RequestLatencyFromSchedule} {
			w, ok := tc.want[id]
			if ok != v.Has(id) || ok && !near(v.V[id], w) {
				t.Errorf("%s: %s = %v, want %v (present %v)", tc.name, RecordDefs[id].Tag, v.V[id], w, ok)
			}
		}
		if !near(v.V[TimeToFirstToken], 100) {
			t.Errorf("%s: TTFT from the send changed: %v", tc.name, v.V[TimeToFirstToken])
		}
	}
	// Unknown due instant: nothing.
	v := Compute(streamingRecord(), tokenizer.Words{}, clock, DefaultOptions())
	if v.Has(ScheduleLateness) || v.Has(RequestLatencyFromSchedule) {
		t.Error("schedule metrics without a due instant")
	}
}

package metrics

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/llmbench/llmbench/internal/record"
	"github.com/llmbench/llmbench/internal/stats"
)

// sweepValues are a record's Values as the sweep reads them: times in ns,
// a gen of -1 for none, isl/osl NaN for none.
func sweepValues(start, gen, end int64, isl, osl float64, icl ...float64) *Values {
	v := &Values{StartWall: start, EndWall: end, RequestEndWall: end, ICL: icl}
	for i := range v.V {
		v.V[i] = math.NaN()
	}
	if gen >= 0 {
		v.V[TimeToFirstToken] = ms(gen - start)
	}
	v.V[InputSequenceLength], v.V[OutputSequenceLength] = isl, osl
	return v
}

// threeRequests, by hand (ns; window [0, 10]):
//
//	A: start 0, gen 2, end 6,  ISL 4, OSL 5: prefill 4/2 = 2, decode 4/4 = 1 token/ns
//	B: start 1, gen 4, end 8,  ISL 6, OSL 3: prefill 6/3 = 2, decode 2/4 = 0.5
//	C: start 6, gen 7, end 10, ISL 2, OSL 4: prefill 2/1 = 2, decode 3/3 = 1
func threeRequests() *sweep {
	s := &sweep{iclLimit: ICLExactLimit}
	s.add(sweepValues(0, 2, 6, 4, 5))
	s.add(sweepValues(1, 4, 8, 6, 3))
	s.add(sweepValues(6, 7, 10, 2, 4))
	return s
}

func TestSweepThreeRequests(t *testing.T) {
	got := map[string]*stats.Summary{}
	for _, r := range threeRequests().results(0, 10) {
		got[r.Def.Tag] = r.Dist
	}
	if len(got) != 14 {
		t.Fatalf("%d metrics, want 14", len(got))
	}
	type want struct {
		avg, min, max, std, p50, p90, p95, p99 float64
	}
	const g = 1e9 // tokens/ns to tokens/s
	cases := map[string]want{
		// Concurrency: [0,1) 1, [1,6) 2, at 6 A ends before C starts (the
		// zero-length dip is no segment), [6,8) 2, [8,10) 1: 17/10. Time at
		// 1: 3 ns, at 2: 7 ns; std = √((3·0.7² + 7·0.3²)/10) = √0.21.
		"effective_concurrency": {1.7, 1, 2, math.Sqrt(0.21), 2, 2, 2, 2},
		// Decode: [2,4) 1, [4,6) 2, [6,7) 1, [7,8) 2, [8,10) 1: 11/10.
		"effective_decode_concurrency": {1.1, 0, 2, math.Sqrt((2*1.21 + 5*0.01 + 3*0.81) / 10), 1, 2, 2, 2},
		// Prefill: [0,1) 1, [1,2) 2, [2,4) 1, [6,7) 1: 6/10.
		"effective_prefill_concurrency": {0.6, 0, 2, math.Sqrt((5*0.36 + 4*0.16 + 1*1.96) / 10), 0, 1, 2, 2},
		// Decode rate: [2,4) 1, [4,6) 1.5, [6,7) 0.5, [7,8) 1.5, [8,10) 1:
		// 9 tokens (4+2+3) over 10 ns. Sorted: 0 for 2, 0.5 for 1, 1 for
		// 4, 1.5 for 3: shares 0.2, 0.3, 0.7, 1.
		"effective_decode_throughput": {0.9 * g, 0, 1.5 * g, math.Sqrt(0.29) * g, 1 * g, 1.5 * g, 1.5 * g, 1.5 * g},
		// Prefill rate: [0,1) 2, [1,2) 4, [2,4) 2, [6,7) 2: 12 tokens. At 0
		// for half the time, so p50 is 0.
		"effective_prefill_throughput": {1.2 * g, 0, 4 * g, math.Sqrt((5*1.44+4*0.64+1*7.84)/10) * g, 0, 2 * g, 4 * g, 4 * g},
		// Per user, decode: [2,4) 1, [4,6) 0.75, [6,7) 0.5, [7,8) 0.75, [8,10) 1.
		"effective_decode_throughput_per_user": {0.675 * g, 0, 1 * g, math.Sqrt((2*0.675*0.675+3*0.075*0.075+0.175*0.175+4*0.325*0.325)/10) * g, 0.75 * g, 1 * g, 1 * g, 1 * g},
		// Tokens in flight: 0 +4, 1 +6, 2 +5, 4 +3, 6 -9 then +2, 7 +4,
		// 8 -9, 10 -6: [0,1) 4, [1,2) 10, [2,4) 15, [4,6) 18, [6,7) 11,
		// [7,8) 15, [8,10) 6: 118/10. Sorted shares 0.1, 0.3, 0.4, 0.5
		// (at 11: p50 is reached exactly there), 0.8, 1.
		"tokens_in_flight": {11.8, 4, 18, math.Sqrt((7.8*7.8 + 2*5.8*5.8 + 1.8*1.8 + 3*3.2*3.2 + 2*6.2*6.2 + 0.8*0.8) / 10), 11, 18, 18, 18},
		// Active: decode is under way over [2,10): 9 tokens in 8 ns.
		"active_decode_throughput": {9.0 / 8 * g, 0.5 * g, 1.5 * g, math.Sqrt((2*0.125*0.125+3*0.375*0.375+0.625*0.625+2*0.125*0.125)/8) * g, 1 * g, 1.5 * g, 1.5 * g, 1.5 * g},
		// Prefill is under way over [0,4) and [6,7): 12 tokens in 5 ns.
		"active_prefill_throughput":         {2.4 * g, 2 * g, 4 * g, math.Sqrt((4*0.16+1.6*1.6)/5) * g, 2 * g, 4 * g, 4 * g, 4 * g},
		"active_decode_throughput_per_user": {6.75 / 8 * g, 0.5 * g, 1 * g, math.Sqrt((4*0.15625*0.15625+3*0.09375*0.09375+0.34375*0.34375)/8) * g, 0.75 * g, 1 * g, 1 * g, 1 * g},
		// Total: 21 tokens over the 10 ns something is in flight.
		"effective_total_throughput": {2.1 * g, 1 * g, 4 * g, 0, 0, 0, 0, 0},
		"active_total_throughput":    {2.1 * g, 1 * g, 4 * g, 0, 0, 0, 0, 0},
	}
	for tag, w := range cases {
		s := got[tag]
		if s == nil {
			t.Errorf("%s missing", tag)
			continue
		}
		check := func(stat string, have, want float64) {
			if !near(have, want) {
				t.Errorf("%s %s = %v, want %v", tag, stat, have, want)
			}
		}
		check("avg", s.Avg, w.avg)
		check("min", s.Min, w.min)
		check("max", s.Max, w.max)
		if tag == "effective_total_throughput" || tag == "active_total_throughput" {
			continue // only its mean and bounds are worked out
		}
		check("std", s.Std, w.std)
		check("p50", s.P[4], w.p50)
		check("p90", s.P[6], w.p90)
		check("p95", s.P[7], w.p95)
		check("p99", s.P[8], w.p99)
	}
	for _, s := range got {
		// No count, no sum, none of the percentiles AIPerf leaves out.
		if s.Count != 0 || !math.IsNaN(s.Sum) || !math.IsNaN(s.P[0]) || !math.IsNaN(s.P[3]) || !math.IsNaN(s.P[5]) {
			t.Fatalf("time-weighted summary carries more than AIPerf's statistics: %+v", s)
		}
	}
}

func TestSweepWindowClipping(t *testing.T) {
	s := threeRequests()
	for _, tc := range []struct {
		w0, w1 int64
		avg    float64
	}{
		// The first segment carries the value in force at 3 (2):
		// [3,6) 2, [6,8) 2, [8,9) 1.
		{3, 9, 11.0 / 6},
		// Before the first event nothing is in flight: [-2,0) counts 0.
		{-2, 10, 17.0 / 12},
		// Past the last event too.
		{0, 20, 17.0 / 20},
		// One segment inside a step.
		{2, 3, 2},
		{5, 5, 0}, // an empty window
	} {
		if got := effectiveOf(s, cConc, tc.w0, tc.w1).avg; !near(got, tc.avg) {
			t.Errorf("[%d, %d]: avg %v, want %v", tc.w0, tc.w1, got, tc.avg)
		}
	}
	// Active over [5, 9]: decode is under way throughout: [5,6) 1.5,
	// [6,7) 0.5, [7,8) 1.5, [8,9) 1.
	if got := activeOf(s, cDecTput, cDecConc, 5, 9).avg; !near(got, 4.5/4) {
		t.Errorf("active decode over [5, 9] = %v, want %v", got, 4.5/4)
	}
	// Over [4, 7) of prefill: only [6, 7) is active, at 2.
	if got := activeOf(s, cPreTput, cPreConc, 4, 7); !near(got.avg, 2) || got.min != 2 {
		t.Errorf("active prefill over [4, 7] = %+v, want 2", got)
	}
}

func TestStepFunctionOrderAndSnap(t *testing.T) {
	// At 5 one request ends and the next starts: the end comes first, so
	// the curve never reads 2, whatever order the events came in.
	c := stepFunction([]event{{5, 1}, {0, 1}, {10, -1}, {5, -1}})
	if want := []float64{1, 0, 1, 0}; !equal(c.v, want) || c.t[1] != 5 || c.t[2] != 5 {
		t.Fatalf("curve %v at %v, want %v", c.v, c.t, want)
	}
	// Rates that do not cancel exactly in floating point snap to 0.
	c = stepFunction([]event{{0, 0.1}, {1, 0.2}, {2, -0.1}, {3, -0.2}})
	if c.v[3] != 0 {
		t.Fatalf("residue %v not snapped to 0", c.v[3])
	}
	if a, b := 0.1, 0.2; a+b-a-b == 0 {
		t.Fatal("the example no longer leaves a residue")
	}
}

// curveOf reads curve id of s: its value after each distinct event time.
func curveOf(s *sweep, id curveID) curve {
	var st stream
	st.start(s.index(), id)
	var c curve
	for st.next != math.MaxInt64 {
		t := st.next
		st.advance()
		c.t, c.v = append(c.t, t), append(c.v, st.v)
	}
	return c
}

func effectiveOf(s *sweep, id curveID, w0, w1 int64) twStats {
	return s.index().timeWeighted(id, cNone, cNone, w0, w1, new([]segment))
}

func activeOf(s *sweep, rate, mask curveID, w0, w1 int64) twStats {
	return s.index().timeWeighted(rate, cNone, mask, w0, w1, new([]segment))
}

func equal(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestSweepChunks(t *testing.T) {
	// One request: start 0, first token at 10, chunks 10 and 30 ns later
	// (at 20 and 50), end 60; OSL 5: the 4 tokens after the first go 2 per
	// gap, at 2/10 over [10,20) and 2/30 over [20,50).
	s := &sweep{iclLimit: ICLExactLimit}
	s.add(sweepValues(0, 10, 60, 8, 5, ms(10), ms(30)))
	// At 20 one gap's rate ends as the next one's starts.
	dec := curveOf(s, cDecTput)
	if want := []float64{0.2, 2.0 / 30, 0}; !nearAll(dec.v, want) || dec.t[0] != 10 || dec.t[1] != 20 || dec.t[2] != 50 {
		t.Fatalf("decode curve %v at %v, want %v", dec.v, dec.t, want)
	}
	// Total throughput keeps the request-level decode rate, 4/50.
	if got := effectiveOf(s, cTotTput, 0, 60).avg; !near(got, 12.0/60) {
		t.Fatalf("total throughput avg %v, want %v", got, 12.0/60)
	}
	// Tokens in flight: +8 at 0, +1 at 10, +2 at 20, +2 at 50, -13 at 60.
	if got, want := curveOf(s, cTokens).v, []float64{8, 9, 11, 13, 0}; !nearAll(got, want) {
		t.Fatalf("tokens in flight %v, want %v", got, want)
	}
	// A last chunk at the end is kept a nanosecond before it.
	s = &sweep{iclLimit: ICLExactLimit}
	s.add(sweepValues(0, 10, 40, 8, 3, ms(30)))
	if got := curveOf(s, cTokens); got.t[2] != 39 || !nearAll(got.v, []float64{8, 9, 11, 0}) {
		t.Fatalf("tokens in flight %v at %v", got.v, got.t)
	}
	// Beyond the limit the chunks are dropped for request-level rates.
	s = &sweep{iclLimit: 1}
	s.add(sweepValues(0, 10, 60, 8, 5, ms(10), ms(30)))
	if c := curveOf(s, cDecTput); len(c.v) != 2 || !near(c.v[0], 4.0/50) {
		t.Fatalf("decode curve without chunks %v", c.v)
	}
}

func nearAll(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !near(a[i], b[i]) {
			return false
		}
	}
	return true
}

func TestSweepFailedRecords(t *testing.T) {
	// A failed record counts in concurrency only (no TTFT, ISL or OSL).
	s := &sweep{iclLimit: ICLExactLimit}
	s.add(sweepValues(0, 2, 4, 4, 3))
	s.add(sweepValues(2, -1, 6, math.NaN(), math.NaN()))
	if got := effectiveOf(s, cConc, 0, 6).avg; !near(got, 8.0/6) {
		t.Fatalf("concurrency avg %v, want 8/6", got)
	}
	if got := effectiveOf(s, cDecConc, 0, 6).avg; !near(got, 2.0/6) {
		t.Fatalf("decode concurrency avg %v, want 2/6", got)
	}
	if got := effectiveOf(s, cTokens, 0, 6).avg; !near(got, (4*2+7*2)/6.0) {
		t.Fatalf("tokens in flight avg %v", got)
	}
}

func TestAdjustedNearest(t *testing.T) {
	// [10 20 30 +Inf]: numpy nearest index n·q + (1 - q) - 1, half to
	// even: p1…p10 → 0.03…0.3 → 10; p25 0.75 → 20; p50 1.5 → 2: 30 (linear
	// would say 25); p75 2.25 → 30; p90 2.7, p95, p99 → +Inf.
	s := adjustedSummary([]float64{10, 20, 30}, 1)
	inf := math.Inf(1)
	want := [9]float64{10, 10, 10, 20, 30, 30, inf, inf, inf}
	if s.P != want {
		t.Fatalf("percentiles %v, want %v", s.P, want)
	}
	if s.Count != 4 || !math.IsInf(s.Avg, 1) || !math.IsInf(s.Sum, 1) || !math.IsInf(s.Max, 1) || s.Min != 10 || !math.IsNaN(s.Std) {
		t.Fatalf("summary %+v", s)
	}
	// [10 +Inf]: p50's index 0.5 rounds to even, 0.
	if s := adjustedSummary([]float64{10}, 1); s.P[4] != 10 || s.P[5] != inf {
		t.Fatalf("p50, p75 = %v, %v; want 10, +Inf", s.P[4], s.P[5])
	}
}

func TestAggregatorEffectiveAndAdjusted(t *testing.T) {
	clock := record.ClockAt(0)
	a := NewAggregator(false)
	ok := streamingRecord()
	ok.CreditIssuedPerf, ok.StartPerf = 1*msNs, 5*msNs
	for i := range ok.ResponsePerfs {
		ok.ResponsePerfs[i] += 5 * msNs
	}
	ok.FirstOutputPerf += 5 * msNs
	ok.EndPerf += 5 * msNs // 310 ms
	failed := &record.Record{InputTokens: 3, CreditIssuedPerf: 20 * msNs, StartPerf: 10 * msNs, EndPerf: 50 * msNs,
		Err: &record.Error{Type: record.ErrHTTP, Message: "boom"}}
	for _, r := range []*record.Record{ok, failed} {
		v := Compute(r, wordCounter{}, clock, DefaultOptions())
		a.Add(r, &v)
	}
	a.SetWindow(0, 400*msNs)
	rs := a.Results()
	get := func(tag string) *stats.Summary {
		r, found := rs.Get(tag)
		if !found {
			t.Fatalf("%s missing", tag)
		}
		return r.Dist
	}
	// effective_latency: 310 - 1 and 50 - 20; credit_to_start: 5 - 1 and
	// 10 - 20 clamped to 0. Failed records count.
	if s := get("effective_latency"); s.Count != 2 || s.Min != 30 || s.Max != 309 {
		t.Errorf("effective_latency %+v", s)
	}
	if s := get("credit_to_start_latency"); s.Count != 2 || s.Min != 0 || s.Max != 4 {
		t.Errorf("credit_to_start_latency %+v", s)
	}
	// decode_duration = 300 - 100; one error: its adj_ has 2 values.
	if s := get("decode_duration"); s.Count != 1 || s.Avg != 200 {
		t.Errorf("decode_duration %+v", s)
	}
	for _, tag := range []string{"adj_request_latency", "adj_time_to_first_token", "adj_inter_token_latency", "adj_decode_duration"} {
		if s := get(tag); s.Count != 2 || !math.IsInf(s.P[8], 1) {
			t.Errorf("%s %+v", tag, s)
		}
	}
	if r, _ := rs.Get("adj_request_latency"); r.Def.Header != "Request Latency (error-adjusted)" || r.Def.Unit != "ms" {
		t.Errorf("adj def %+v", r.Def)
	}
	// Concurrency over [0, 400 ms]: [5, 310) and [10, 50): 345 ms.
	if s := get("effective_concurrency"); !near(s.Avg, 345.0/400) || s.Max != 2 {
		t.Errorf("effective_concurrency %+v", s)
	}
	// A slice's aggregator leaves the run-level metrics to the run's.
	sl := NewAggregator(false).ForTimeslice()
	v := Compute(ok, wordCounter{}, clock, DefaultOptions())
	sl.Add(ok, &v)
	for _, r := range sl.Results().Metrics {
		if r.Def.Kind == TimeWeighted || r.Def.Tag == "effective_latency" {
			t.Errorf("slice has %s", r.Def.Tag)
		}
	}
	if n := len(a.TimeWeighted(0, 100*msNs)); n != 14 {
		t.Errorf("%d time-weighted metrics for a slice", n)
	}
}

func TestAdjustedAbsentWithoutErrors(t *testing.T) {
	a := NewAggregator(false)
	v := Compute(streamingRecord(), wordCounter{}, record.ClockAt(0), DefaultOptions())
	a.Add(streamingRecord(), &v)
	for _, r := range a.Results().Metrics {
		if len(r.Def.Tag) > 4 && r.Def.Tag[:4] == "adj_" {
			t.Fatalf("%s without errors", r.Def.Tag)
		}
		if r.Def.Tag == "effective_latency" {
			t.Fatal("effective_latency without credits")
		}
	}
}

func TestDecodeDurationNegative(t *testing.T) {
	r := streamingRecord()
	// The last content before the first: latency 90, TTFT 100.
	r.ResponsePerfs = []int64{100 * msNs, 90 * msNs}
	v := Compute(r, wordCounter{}, record.ClockAt(0), DefaultOptions())
	if v.Has(DecodeDuration) || !v.Has(RequestLatency) {
		t.Fatalf("decode_duration %v, request_latency %v", v.V[DecodeDuration], v.V[RequestLatency])
	}
	v = Compute(streamingRecord(), wordCounter{}, record.ClockAt(0), DefaultOptions())
	if v.V[DecodeDuration] != 200 {
		t.Fatalf("decode_duration %v, want 300 - 100", v.V[DecodeDuration])
	}
	nonStreaming := streamingRecord()
	nonStreaming.Streaming = false
	if v := Compute(nonStreaming, wordCounter{}, record.ClockAt(0), DefaultOptions()); v.Has(DecodeDuration) {
		t.Fatal("decode_duration without streaming")
	}
}

// BenchmarkSweepAdd is BenchmarkSweepLine's records alone: what the
// sweep retains per record, to subtract from its figures.
func BenchmarkSweepAdd(b *testing.B) {
	vals := sweepBenchValues()
	b.ReportAllocs()
	for b.Loop() {
		s := &sweep{iclLimit: ICLExactLimit}
		for _, v := range vals {
			s.add(v)
		}
	}
}

func sweepBenchValues() []*Values {
	rng := rand.New(rand.NewPCG(1, 2))
	vals := make([]*Values, 100_000)
	for i := range vals {
		start := int64(i) * 1_000_000 // one a millisecond
		gen := start + 20_000_000 + rng.Int64N(80_000_000)
		end := gen + 100_000_000 + rng.Int64N(900_000_000)
		vals[i] = sweepValues(start, gen, end, float64(100+rng.IntN(900)), float64(1+rng.IntN(500)))
	}
	return vals
}

// BenchmarkSweepLine builds every curve of 100,000 overlapping records
// and reduces them over the run's window.
func BenchmarkSweepLine(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	vals := make([]*Values, 100_000)
	for i := range vals {
		start := int64(i) * 1_000_000 // one a millisecond
		gen := start + 20_000_000 + rng.Int64N(80_000_000)
		end := gen + 100_000_000 + rng.Int64N(900_000_000)
		vals[i] = sweepValues(start, gen, end, float64(100+rng.IntN(900)), float64(1+rng.IntN(500)))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		s := &sweep{iclLimit: ICLExactLimit}
		for _, v := range vals {
			s.add(v)
		}
		w0, w1 := s.span()
		if len(s.results(w0, w1)) != 14 {
			b.Fatal("missing metrics")
		}
	}
}

var updateSweepGolden = flag.Bool("update", false, "rewrite testdata/sweepline_golden.json from the current code")

// sweepGoldenCase is a randomized run: times on a coarse grid so that
// events tie, failed records, ISL 0 and OSL 0 or 1, and optionally chunks
// (zero gaps and chunks at or past the end among them).
func sweepGoldenCase(seed uint64, n int, withICL bool, iclLimit int) *sweep {
	return sweepCase(seed, n, withICL, iclLimit, nil)
}

// sweepCase is sweepGoldenCase's run with its records kept by sp.
func sweepCase(seed uint64, n int, withICL bool, iclLimit int, sp *Spill) *sweep {
	rng := rand.New(rand.NewPCG(seed, 7))
	s := &sweep{iclLimit: iclLimit, sp: sp}
	for range n {
		grid := int64(1 + rng.IntN(3)*999) // 1 ns or ~1 µs steps: ties
		start := rng.Int64N(2000) * grid
		gen := start + rng.Int64N(50)*grid
		end := gen + rng.Int64N(200)*grid
		isl, osl := float64(rng.IntN(300)), float64(rng.IntN(40))
		switch rng.IntN(10) {
		case 0: // failed
			gen, isl, osl = -1, math.NaN(), math.NaN()
		case 1:
			osl = 1
		case 2:
			isl = 0
		case 3:
			gen = start // no prefill
		}
		var icl []float64
		if withICL && gen >= 0 && rng.IntN(5) > 0 {
			for k := rng.IntN(int(osl) + 1); k > 0; k-- {
				g := rng.Int64N(3*(end-gen)/max(int64(osl), 1) + 1)
				if rng.IntN(6) == 0 {
					g = 0
				}
				icl = append(icl, ms(g))
			}
		}
		s.add(sweepValues(start, gen, end, isl, osl, icl...))
	}
	return s
}

// TestSweepGolden pins every statistic of the 14 time-weighted metrics,
// bit for bit, on randomized runs over the run's span, clipping windows
// and consecutive time slices: the sweep's optimisations must not move
// a single ulp. The values were generated by the straightforward
// implementation (all curves materialised, segments fully sorted);
// regenerate with -update only for a deliberate change of semantics.
func TestSweepGolden(t *testing.T) {
	type window struct{ w0, w1 int64 }
	got := map[string][]string{}
	for _, c := range []struct {
		name     string
		seed     uint64
		n        int
		icl      bool
		iclLimit int
	}{
		{"small", 1, 7, false, ICLExactLimit},
		{"plain", 2, 3000, false, ICLExactLimit},
		{"plain2", 3, 500, false, ICLExactLimit},
		{"chunks", 4, 2000, true, ICLExactLimit},
		{"chunks_dropped", 5, 800, true, 3000}, // the limit is reached midway
	} {
		s := sweepGoldenCase(c.seed, c.n, c.icl, c.iclLimit)
		w0, w1 := s.span()
		ws := []window{{w0, w1}, {w0 - 1000, w1 + 5000}, {w0 + (w1-w0)/3, w1 - (w1-w0)/4}, {w1 + 10, w1 + 20}, {w0 - 20, w0 - 10}, {w0, w0}}
		width := (w1-w0)/7 + 1
		for a := w0; a < w1; a += width { // time slices, in order
			ws = append(ws, window{a, min(a+width, w1)})
		}
		ws = append(ws, window{w0 + width, w0 + 2*width}) // out of order
		for _, w := range ws {
			key := fmt.Sprintf("%s [%d,%d]", c.name, w.w0, w.w1)
			var lines []string
			for _, r := range s.results(w.w0, w.w1) {
				d := r.Dist
				line := fmt.Sprintf("%s count=%d sum=%x avg=%x min=%x max=%x std=%x", r.Def.Tag, d.Count, math.Float64bits(d.Sum), math.Float64bits(d.Avg), math.Float64bits(d.Min), math.Float64bits(d.Max), math.Float64bits(d.Std))
				for _, p := range d.P {
					line += fmt.Sprintf(" %x", math.Float64bits(p))
				}
				lines = append(lines, line)
			}
			got[key] = lines
		}
	}
	const path = "testdata/sweepline_golden.json"
	if *updateSweepGolden {
		b, err := json.MarshalIndent(got, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	var want map[string][]string
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Errorf("%d windows, golden has %d", len(got), len(want))
	}
	for key, w := range want {
		g := got[key]
		if len(g) != len(w) {
			t.Errorf("%s: %d metrics, want %d", key, len(g), len(w))
			continue
		}
		for i := range w {
			if g[i] != w[i] {
				t.Errorf("%s:\n got %s\nwant %s", key, g[i], w[i])
			}
		}
	}
}

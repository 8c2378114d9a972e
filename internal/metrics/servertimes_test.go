package metrics

import (
	"math"
	"testing"

	"github.com/llmbench/llmbench/internal/record"
	"github.com/llmbench/llmbench/internal/tokenizer"
)

// timedRecord is a streamed request due at 0.5 ms, handed over at 1 ms,
// written by 1.2 ms (or wrote), first token at 51 ms (TTFT 50 ms), last at
// 101 ms, with the server's account st.
func timedRecord(st *record.ServerTimings, wrote int64, streaming bool) *record.Record {
	r := &record.Record{
		CreditIssuedPerf: msNs / 2, Scheduled: true, StartPerf: msNs,
		ResponsePerfs: []int64{51 * msNs, 101 * msNs}, EndPerf: 101 * msNs,
		OutputText: "a b", Streaming: streaming, ServerTimings: st,
	}
	r.Trace.WroteRequest = wrote
	if !streaming {
		r.ResponsePerfs = r.ResponsePerfs[1:]
	}
	return r
}

func TestServerTimes(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name      string
		rec       *record.Record
		want      map[ID]float64 // NaN: absent
		aggregate bool           // the server parts reach the statistics
	}{
		{"parts add up", timedRecord(&record.ServerTimings{Queue: 10, Prefill: 35, Decode: 48, Total: nan}, msNs+msNs/5, true),
			map[ID]float64{ServerQueueTime: 10, ServerPrefillTime: 35, ServerTimeToFirstToken: 45, ServerDecodeTime: 48,
				RequestSendTime: 0.2, TTFTDelivery: 4.8, ServerTimingConflict: 0}, true},
		// The write returned after the server's clock started: the overlap is send.
		{"send overlaps the server's clock", timedRecord(&record.ServerTimings{Queue: 10, Prefill: 35, Decode: 48, Total: nan}, 7*msNs, true),
			map[ID]float64{ServerTimeToFirstToken: 45, RequestSendTime: 5, TTFTDelivery: 0, ServerTimingConflict: 0}, true},
		// The server's TTFT (55.5 ms) beyond the client's (50 ms): impossible.
		{"server TTFT longer than the client's", timedRecord(&record.ServerTimings{Queue: 10, Prefill: 45.5, Decode: 40, Total: nan}, msNs+msNs/5, true),
			map[ID]float64{ServerQueueTime: 10, ServerTimeToFirstToken: 55.5, RequestSendTime: nan, TTFTDelivery: nan, ServerTimingConflict: 1}, false},
		// Non-streaming: only the whole time can be compared (100 ms).
		{"server total longer than the latency", timedRecord(&record.ServerTimings{Queue: nan, Prefill: nan, Decode: nan, Total: 100.5}, msNs+msNs/5, false),
			map[ID]float64{ServerTimeToFirstToken: nan, ServerTimingConflict: 1}, false},
		{"queue unknown", timedRecord(&record.ServerTimings{Queue: nan, Prefill: 35, Decode: 48, Total: nan}, msNs+msNs/5, true),
			map[ID]float64{ServerPrefillTime: 35, ServerTimeToFirstToken: nan, RequestSendTime: nan, TTFTDelivery: nan, ServerTimingConflict: 0}, true},
		// Every value unusable: nothing to count, and the record says so.
		{"values rejected", timedRecord(&record.ServerTimings{Queue: nan, Prefill: nan, Decode: nan, Total: nan, Rejected: 3}, msNs+msNs/5, true),
			map[ID]float64{ServerQueueTime: nan, ServerTimeToFirstToken: nan, RequestSendTime: nan, ServerTimingConflict: 0}, false},
		{"no server timings", timedRecord(nil, msNs+msNs/5, true),
			map[ID]float64{ServerQueueTime: nan, ServerTimingConflict: nan, RequestSendTime: nan}, false},
	}
	clock := record.ClockAt(0)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Compute(tt.rec, tokenizer.Words{}, clock, DefaultOptions())
			for id, want := range tt.want {
				got := v.V[id]
				if math.IsNaN(want) != math.IsNaN(got) || !math.IsNaN(want) && math.Abs(got-want) > 1e-9 {
					t.Errorf("%s = %v, want %v", RecordDefs[id].Tag, got, want)
				}
			}
			a := NewAggregator(false)
			a.Add(tt.rec, &v)
			res := a.Results()
			_, has := res.Get("server_queue_time")
			if has != (tt.aggregate && !math.IsNaN(v.V[ServerQueueTime])) {
				t.Errorf("server_queue_time in the statistics: %v", has)
			}
			if _, ok := res.Get("server_timing_conflict"); ok != (tt.rec.ServerTimings != nil) {
				t.Errorf("server_timing_conflict in the statistics: %v", ok)
			}
			wantRejected := 0
			if tt.rec.ServerTimings != nil {
				wantRejected = min(tt.rec.ServerTimings.Rejected, 1)
			}
			if bd := res.TTFTBreakdown; (bd != nil && bd.Rejected != wantRejected) || (bd == nil && wantRejected > 0) {
				t.Errorf("breakdown %+v: want %d records with rejected values", bd, wantRejected)
			}
		})
	}
}

func TestBreakdownBands(t *testing.T) {
	// 100 records; record i (1..100) lateness 0, send 0, queue i−1, prefill 0.5,
	// delivery 0.5: total i ms.
	rows := make([]breakdownRow, 0, 100)
	for i := 100; i >= 1; i-- {
		rows = append(rows, breakdownRow{total: float64(i), parts: [5]float32{0, 0, float32(i - 1), 0.5, 0.5}})
	}
	b := breakdown(rows, 3, 0)
	if b.Records != 100 || b.Conflicts != 3 || len(b.Bands) != 2 {
		t.Fatalf("breakdown %+v", b)
	}
	// p50: ranks 45..54, totals 46..55, mean 50.5; queue mean 49.5.
	// p99: the slowest record alone, total 100, queue 99.
	for i, want := range []struct {
		records      int
		total, queue float64
	}{{10, 50.5, 49.5}, {1, 100, 99}} {
		band := b.Bands[i]
		if band.Records != want.records || band.TotalMs != want.total || band.Parts[2].Ms != want.queue ||
			band.Dominant != "server_queue" || math.Abs(band.Parts[2].Share-want.queue/want.total) > 1e-12 {
			t.Errorf("band %s = %+v, want %d records, total %v, queue %v", band.Band, band, want.records, want.total, want.queue)
		}
		sum := 0.0
		for _, p := range band.Parts {
			sum += p.Share
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Errorf("band %s shares sum to %v", band.Band, sum)
		}
	}
	if breakdown(nil, 0, 0) != nil {
		t.Error("a breakdown without records")
	}
}

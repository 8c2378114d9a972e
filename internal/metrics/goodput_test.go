package metrics

import (
	"strings"
	"testing"

	"github.com/llmbench/llmbench/internal/record"
	"github.com/llmbench/llmbench/internal/tokenizer"
)

// TestGoodput: the records of TestAggregator (a stream with latency 300 ms,
// TTFT 100 ms and 15 tokens/s per user; a whole response of 500 ms; two
// errors; duration 1.5 s) against SLOs whose outcome is worked out by hand.
func TestGoodput(t *testing.T) {
	tests := []struct {
		spec           string
		good           float64
		goodput, ratio float64
	}{
		// 300 <= 400 holds, 500 does not: 1 good of 4 attempted.
		{"request_latency:400", 1, 1 / 1.5, 0.25},
		{"request_latency:500", 2, 2 / 1.5, 0.5}, // at the threshold is good
		// Both SLOs hold for the stream (at their thresholds); the whole
		// response has no TTFT, so it fails.
		{"time_to_first_token:100 output_token_throughput_per_user:15", 1, 1 / 1.5, 0.25},
		// Larger is better for a throughput: 15 < 16 fails.
		{"time_to_first_token:100 output_token_throughput_per_user:16", 0, 0, 0},
		{"request_latency:299.9", 0, 0, 0},
	}
	clock := record.ClockAt(0)
	for _, tc := range tests {
		t.Run(tc.spec, func(t *testing.T) {
			slos, err := ParseSLOs(tc.spec, true)
			if err != nil {
				t.Fatal(err)
			}
			opts := DefaultOptions()
			opts.SLOs = slos
			agg := NewAggregator(true)
			for _, r := range []*record.Record{
				streamingRecord(),
				{InputTokens: 20, StartPerf: 1000 * msNs, EndPerf: 1500 * msNs, ResponsePerfs: []int64{1500 * msNs}, OutputText: "x y"},
				{InputTokens: 7, StartPerf: 200 * msNs, EndPerf: 400 * msNs, Err: &record.Error{Code: 500, Type: "E", Message: "boom"}},
				{InputTokens: 3, StartPerf: 250 * msNs, EndPerf: 450 * msNs, Err: &record.Error{Code: 500, Type: "E", Message: "boom"}},
			} {
				v := Compute(r, tokenizer.Words{}, clock, opts)
				agg.Add(r, &v)
			}
			res := agg.Results()
			for tag, want := range map[string]float64{"good_request_count": tc.good, "goodput": tc.goodput, "good_request_fraction": tc.ratio} {
				if r, ok := res.Get(tag); !ok || !near(r.Value, want) {
					t.Errorf("%s = %v (present %v), want %v", tag, r.Value, ok, want)
				}
			}
		})
	}
	// Without --goodput there are no goodput metrics.
	agg := NewAggregator(false)
	r := streamingRecord()
	v := Compute(r, tokenizer.Words{}, clock, DefaultOptions())
	agg.Add(r, &v)
	res := agg.Results()
	if _, ok := res.Get("goodput"); ok {
		t.Error("goodput reported without SLOs")
	}
}

func TestParseSLOs(t *testing.T) {
	slos, err := ParseSLOs("time_to_first_token:200  inter_token_latency:10,request_latency:1e3", true)
	if err != nil {
		t.Fatal(err)
	}
	want := []SLO{{TimeToFirstToken, 200}, {InterTokenLatency, 10}, {RequestLatency, 1000}}
	if len(slos) != len(want) {
		t.Fatalf("%+v", slos)
	}
	for i := range want {
		if slos[i] != want[i] {
			t.Errorf("slo %d = %+v, want %+v", i, slos[i], want[i])
		}
	}
	for _, tc := range []struct {
		spec      string
		streaming bool
		want      string
	}{
		{"time_to_frist_token:200", true, `unknown metric tag "time_to_frist_token"`},
		{"goodput:3", true, `unknown metric tag "goodput"`},
		{"time_to_first_token:200", false, "time_to_first_token is measured only with --streaming"},
		{"inter_chunk_latency:5", true, "inter_chunk_latency cannot be an SLO"},
		{"error_isl:5", true, "error_isl cannot be an SLO"},
		{"request_latency:fast", true, `"fast" is not a number (in ms)`},
		{"request_latency", true, "want metric_tag:value"},
	} {
		_, err := ParseSLOs(tc.spec, tc.streaming)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.spec, err, tc.want)
		}
	}
	if slos, err := ParseSLOs("", false); err != nil || slos != nil {
		t.Errorf("empty spec: %v %v", slos, err)
	}
}

// TestWireMetrics: bytes become KB of 1024 bytes; chunks are counts.
func TestWireMetrics(t *testing.T) {
	r := streamingRecord()
	r.Trace = record.HTTPTrace{GetConn: 1, GotConn: 2, WroteRequest: 3, FirstByte: 4, LastByte: 5,
		BytesSent: 2048, BytesReceived: 1536, Writes: 2, Reads: 7, HaveWire: true}
	v := Compute(r, tokenizer.Words{}, record.ClockAt(0), DefaultOptions())
	for id, want := range map[ID]float64{HTTPReqDataSent: 2, HTTPReqDataReceived: 1.5, HTTPReqChunksSent: 2, HTTPReqChunksReceived: 7, HTTPReqConnectionReused: 0} {
		if v.V[id] != want {
			t.Errorf("%s = %v, want %v", RecordDefs[id].Tag, v.V[id], want)
		}
	}
}

package metrics

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/llmbench/llmbench/internal/record"
	"github.com/llmbench/llmbench/internal/stats"
)

// TestColumnRoundTrip: every value comes back bit for bit, whole or not,
// at both scales.
func TestColumnRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	vals := []float64{0, math.Copysign(0, -1), 1, -1, 20.000001, 1e300, -1e-300, math.Inf(1), math.Inf(-1),
		math.MaxFloat64, math.SmallestNonzeroFloat64, float64(1<<53) / 1e6, 1.0 / 3, 2.5e-7}
	for range 5000 {
		vals = append(vals, float64(rng.Int64N(1e12))/1e6, float64(rng.IntN(100000)), rng.Float64()*1e4, -rng.ExpFloat64())
	}
	for _, scale := range []float64{1, 1e6} {
		c := newColumn(scale)
		for _, v := range vals {
			c.add(v)
		}
		got := c.values()
		if len(got) != len(vals) || c.n != len(vals) {
			t.Fatalf("scale %g: %d values back of %d", scale, len(got), len(vals))
		}
		for i := range vals {
			if math.Float64bits(got[i]) != math.Float64bits(vals[i]) {
				t.Fatalf("scale %g: value %d: %v came back as %v", scale, i, vals[i], got[i])
			}
		}
	}
}

// TestColumnIsCompact: a latency measured in ns takes 4 or 5 bytes, a
// token count 1 or 2, a throughput 9.
func TestColumnIsCompact(t *testing.T) {
	for _, tc := range []struct {
		name     string
		scale    float64
		value    func(i int) float64
		maxBytes float64
	}{
		{"TTFT ~20 ms", 1e6, func(i int) float64 { return float64(20_000_000+i*37) / 1e6 }, 4},
		{"latency ~2 s", 1e6, func(i int) float64 { return float64(2_000_000_000+i*37) / 1e6 }, 5},
		{"tokens < 64", 1, func(i int) float64 { return float64(i % 64) }, 2},
		{"throughput", 1, func(i int) float64 { return 1 / (0.0123 + float64(i)*1e-7) }, 9},
	} {
		c := newColumn(tc.scale)
		const n = 100_000
		for i := range n {
			c.add(tc.value(i))
		}
		used := int(c.list.usedBytes())
		if per := float64(used) / n; per > tc.maxBytes {
			t.Errorf("%s: %.2f bytes a value, want at most %v", tc.name, per, tc.maxBytes)
		}
		if slack := c.bytes() - used; slack > columnBlock {
			t.Errorf("%s: %d bytes of slack", tc.name, slack)
		}
	}
}

func FuzzColumn(f *testing.F) {
	f.Add(uint64(0), uint64(math.Float64bits(20.5)))
	f.Add(math.Float64bits(-0.0), math.Float64bits(math.Inf(1)))
	f.Fuzz(func(t *testing.T, a, b uint64) {
		for _, scale := range []float64{1, 1e6} {
			c := newColumn(scale)
			in := []float64{math.Float64frombits(a), math.Float64frombits(b)}
			if math.IsNaN(in[0]) || math.IsNaN(in[1]) {
				return // never added: NaN marks an absent metric
			}
			c.add(in[0])
			c.add(in[1])
			got := c.values()
			for i := range in {
				if math.Float64bits(got[i]) != math.Float64bits(in[i]) {
					t.Fatalf("scale %g: %v came back as %v", scale, in[i], got[i])
				}
			}
		}
	})
}

// TestAggregatorBytesPerRequest: what the statistics keep per request, as
// the growth from 10,000 to 20,000 requests: at most 200 bytes for a
// non-streaming request, 300 for a stream of 64 tokens once the
// inter-chunk latencies are summarised (here past 100,000 of them, to keep
// the test small; the run's limit is ICLExactLimit), whose percentiles
// stay within the histogram's bound of the exact ones.
func TestAggregatorBytesPerRequest(t *testing.T) {
	clock := record.ClockAt(1_000_000_000)
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct {
		name      string
		streaming bool
		max       float64
	}{
		{"non-streaming", false, 200},
		{"streaming, 64 tokens", true, 300},
	} {
		a := NewAggregator(false)
		a.iclExactLimit, a.extra.sweep.iclLimit = 100_000, 100_000
		var icl []float64
		const n = 20_000
		half := 0
		for i := range n {
			if i == n/2 {
				half = a.RetainedBytes()
			}
			start := int64(i) * 1e6
			r := &record.Record{InputTokens: 550, RequestedOutputTokens: 64, Streaming: tc.streaming,
				CreditIssuedPerf: start + 1, StartPerf: start + 1 + int64(rng.IntN(200_000)),
				Usage: &record.Usage{PromptTokens: 550, CompletionTokens: 64, TotalTokens: 614}}
			at := r.StartPerf + 20_000_000 + int64(rng.IntN(5_000_000))
			words := ""
			for k := range 64 {
				if tc.streaming || k == 63 {
					r.ResponsePerfs = append(r.ResponsePerfs, at)
				}
				at += 5_000_000 + int64(rng.IntN(2_000_000))
				words += "w "
			}
			r.FirstOutputPerf, r.EndPerf, r.OutputText = r.ResponsePerfs[0], at, words
			v := Compute(r, wordCounter{}, clock, DefaultOptions())
			icl = append(icl, v.ICL...)
			a.Add(r, &v)
		}
		per := float64(a.RetainedBytes()-half) / (n / 2)
		t.Logf("%s: %.0f bytes a request", tc.name, per)
		if per > tc.max {
			t.Errorf("%s: %.0f bytes a request, want at most %v", tc.name, per, tc.max)
		}
		if !tc.streaming {
			continue
		}
		res := a.Results()
		got, _ := res.Get("inter_chunk_latency")
		want := stats.Summarize(icl)
		if got.Dist.Count != want.Count || got.Dist.Max != want.Max {
			t.Fatalf("ICL count/max %d %v, want %d %v", got.Dist.Count, got.Dist.Max, want.Count, want.Max)
		}
		for i := range want.P {
			if math.Abs(got.Dist.P[i]-want.P[i]) > stats.LogHistogramRelErr*want.P[i] {
				t.Errorf("ICL %s %v, exact %v", stats.PercentileNames[i], got.Dist.P[i], want.P[i])
			}
		}
	}
}

// wordCounter counts space-separated words.
type wordCounter struct{}

func (wordCounter) Count(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' {
			n++
		}
	}
	return n
}

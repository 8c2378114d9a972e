package metrics

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/internal/record"
	"github.com/llmbench/llmbench/internal/stats"
)

// tinySpill spills every block (nothing kept in memory) and sorts in runs
// of the fewest entries allowed, so that every path of the spill is taken
// with a few thousand values.
func tinySpill(t *testing.T) *Spill {
	t.Helper()
	sp := newTestSpill(t.TempDir(), 0, 1)
	t.Cleanup(func() { _ = sp.Close() })
	return sp
}

// TestSpillColumnRoundTrip: a column spilled block by block comes back
// bit for bit, NaN, infinities, signed zeros and values that are not
// whole numbers of its unit included, over many blocks; Close removes
// the files.
func TestSpillColumnRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	special := []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0, 1.0 / 3, 2.5e-7, 1e300,
		math.MaxFloat64, math.SmallestNonzeroFloat64, float64(1<<53) / 1e6, -20.000001}
	var vals []float64
	for i := range 300_000 {
		switch i % 5 {
		case 0:
			vals = append(vals, special[rng.IntN(len(special))])
		case 1:
			vals = append(vals, rng.Float64()*1e4)
		default:
			vals = append(vals, float64(rng.Int64N(5e9))/1e6)
		}
	}
	for _, scale := range []float64{1, 1e6} {
		sp := newTestSpill(t.TempDir(), 4096, 1<<20)
		c := newColumn(scale)
		c.list.sp = sp
		for _, v := range vals {
			c.add(v)
		}
		if sp.Written() == 0 || sp.Dir() == "" {
			t.Fatalf("scale %g: nothing spilled", scale)
		}
		if n := c.list.numBlocks(); n < 20 {
			t.Fatalf("scale %g: %d blocks", scale, n)
		}
		if mem := c.bytes(); mem > 4096+maxBlock {
			t.Errorf("scale %g: %d bytes in memory beyond a budget of 4096", scale, mem)
		}
		got := c.values()
		if len(got) != len(vals) {
			t.Fatalf("scale %g: %d values back of %d", scale, len(got), len(vals))
		}
		for i := range vals {
			if math.Float64bits(got[i]) != math.Float64bits(vals[i]) {
				t.Fatalf("scale %g: value %d: %v came back as %v", scale, i, vals[i], got[i])
			}
		}
		if err := sp.Err(); err != nil {
			t.Fatal(err)
		}
		dir := sp.Dir()
		if err := sp.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("spill folder %s left behind: %v", dir, err)
		}
	}
}

// TestSpillSummaryExact: a column's summary sorted in memory, in runs
// merged from disk, and by stats.Summarize are the same bit for bit, with
// ties, negative values and infinities.
func TestSpillSummaryExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, n := range []int{1, 2, 3, 1023, 1024, 1025, 50_000} {
		vals := make([]float64, n)
		for i := range vals {
			switch rng.IntN(6) {
			case 0:
				vals[i] = float64(rng.IntN(10)) // ties
			case 1:
				vals[i] = -rng.ExpFloat64()
			default:
				vals[i] = float64(rng.Int64N(3e9)) / 1e6
			}
		}
		if n == 50_000 {
			vals[17], vals[42] = math.Inf(1), math.Inf(-1)
		}
		want := stats.Summarize(append([]float64(nil), vals...))
		for _, sp := range []*Spill{nil, tinySpill(t)} {
			c := newColumn(1e6)
			c.list.sp = sp
			for _, v := range vals {
				c.add(v)
			}
			got, adj, _ := summarizeColumn(&c, sp, 3, true, nil)
			if fmt.Sprint(summaryBits(&got)) != fmt.Sprint(summaryBits(&want)) {
				t.Errorf("n %d, spill %v:\n got %v\nwant %v", n, sp != nil, got, want)
			}
			sorted := append([]float64(nil), vals...)
			slicesSortFloat(sorted)
			wantAdj := adjustedSummary(sorted, 3)
			if fmt.Sprint(summaryBits(adj)) != fmt.Sprint(summaryBits(&wantAdj)) {
				t.Errorf("n %d, spill %v: adjusted\n got %v\nwant %v", n, sp != nil, *adj, wantAdj)
			}
		}
	}
}

func slicesSortFloat(v []float64) { stats.Summarize(v) } // sorts in place

func summaryBits(s *stats.Summary) []uint64 {
	out := []uint64{uint64(s.Count), math.Float64bits(s.Sum), math.Float64bits(s.Avg), math.Float64bits(s.Min), math.Float64bits(s.Max), math.Float64bits(s.Std)}
	for _, p := range s.P {
		out = append(out, math.Float64bits(p))
	}
	return out
}

// TestStatsInPasses: the time-weighted statistics computed in passes over
// the segments are statsOf's bit for bit, whatever the range the
// percentiles are narrowed down to and however few segments may be
// gathered: ties, zero durations, negative and huge values.
func TestStatsInPasses(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 2))
	for trial := range 60 / raceScale {
		n := 1 + rng.IntN(5000)
		segs := make([]segment, n)
		total := 0.0
		for i := range segs {
			var v float64
			switch rng.IntN(5) {
			case 0:
				v = float64(rng.IntN(5)) // concurrency-like
			case 1:
				v = rng.Float64() * 1e-3
			case 2:
				v = -rng.Float64()
			case 3:
				v = rng.NormFloat64() * 1e12
			default:
				v = 1 + rng.Float64()*1e-12 // a hair apart: deep narrowing
			}
			d := float64(rng.IntN(1000))
			if rng.IntN(10) == 0 {
				d = 0
			}
			segs[i] = seg(d, v)
			total += d
		}
		if trial%7 == 0 {
			total += 5 // an Active total is the time of its segments; an Effective one may differ
		}
		want := statsOf(append([]segment(nil), segs...), total)
		for _, limit := range []int{4, 64, 1 << 20} {
			got := statsInPasses(func(emit func(segment)) float64 {
				for _, g := range segs {
					emit(g)
				}
				return total
			}, limit)
			if got != want && fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("trial %d, limit %d:\n got %+v\nwant %+v", trial, limit, got, want)
			}
		}
	}
}

// TestSweepGoldenSpilled: the sweep's golden cases with every record on
// disk, the orders sorted in runs and the statistics in passes give the
// same bits as in memory.
func TestSweepGoldenSpilled(t *testing.T) {
	for _, c := range []struct {
		seed     uint64
		n        int
		icl      bool
		iclLimit int
	}{{2, 3000, false, ICLExactLimit}, {4, 2000, true, ICLExactLimit}, {5, 800, true, 3000}, {9, 20_000 / raceScale, false, ICLExactLimit}} {
		mem := sweepGoldenCase(c.seed, c.n, c.icl, c.iclLimit)
		sp := tinySpill(t)
		disk := sweepCase(c.seed, c.n, c.icl, c.iclLimit, sp)
		w0, w1 := mem.span()
		width := (w1-w0)/5 + 1
		windows := [][2]int64{{w0, w1}, {w0 - 100, w1 + 100}, {w0 + (w1-w0)/3, w1 - (w1-w0)/4}}
		for a := w0; a < w1; a += width {
			windows = append(windows, [2]int64{a, min(a+width, w1)})
		}
		for _, w := range windows {
			if g, want := dumpResults(disk.results(w[0], w[1])), dumpResults(mem.results(w[0], w[1])); g != want {
				t.Fatalf("seed %d window %v:\n got %s\nwant %s", c.seed, w, g, want)
			}
		}
		if err := sp.Err(); err != nil {
			t.Fatal(err)
		}
		if sp.Written() == 0 {
			t.Fatal("nothing spilled")
		}
	}
}

// dumpResults prints results with every float's bits.
func dumpResults(rs []Result) string {
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "%s value=%x", r.Def.Tag, math.Float64bits(r.Value))
		if r.Exact != nil {
			fmt.Fprintf(&b, " exact=%d", *r.Exact)
		}
		if r.Dist != nil {
			fmt.Fprintf(&b, " dist=%x", summaryBits(r.Dist))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// dumpAll prints every figure of a run's results, bit for bit.
func dumpAll(rs Results) string {
	s := dumpResults(rs.Metrics)
	s += fmt.Sprintf("errors %+v requests %d errors %d osl %d duration %x\n", rs.Errors, rs.RequestCount, rs.ErrorCount, rs.OSLMismatches, math.Float64bits(rs.DurationSec))
	if b := rs.TTFTBreakdown; b != nil {
		s += fmt.Sprintf("breakdown %+v\n", *b)
	}
	return s
}

// spillRecords are a run's records: streaming and not, failed ones, server
// timings (the TTFT breakdown), credits (the schedule latencies) and
// HTTP traces.
func spillRecords(n int) []*record.Record {
	rng := rand.New(rand.NewPCG(11, 12))
	var out []*record.Record
	for i := range n {
		start := int64(i) * 200_000
		streaming := i%3 != 0
		r := &record.Record{InputTokens: 100 + rng.IntN(50), RequestedOutputTokens: 16, Streaming: streaming, Scheduled: true,
			CreditIssuedPerf: start + 1, StartPerf: start + 1 + int64(rng.IntN(200_000)),
			Usage: &record.Usage{PromptTokens: 120, CompletionTokens: 16, TotalTokens: 136}}
		if i%17 == 5 {
			r.EndPerf = r.StartPerf + int64(rng.IntN(1e6))
			r.Err = &record.Error{Code: 500, Type: "HTTP", Message: fmt.Sprintf("boom %d", i%3)}
			out = append(out, r)
			continue
		}
		at := r.StartPerf + 1_000_000 + int64(rng.IntN(5_000_000))
		r.Trace = record.HTTPTrace{GetConn: r.StartPerf, GotConn: r.StartPerf + 10, WroteRequest: r.StartPerf + 5000 + int64(rng.IntN(1000)), FirstByte: at - 100, ConnReused: true}
		words := ""
		for k := range 16 {
			if streaming || k == 15 {
				r.ResponsePerfs = append(r.ResponsePerfs, at)
			}
			at += int64(rng.IntN(400_000))
			words += "w "
		}
		r.Trace.LastByte = at
		r.FirstOutputPerf, r.EndPerf, r.OutputText = r.ResponsePerfs[0], at, words
		if i%2 == 0 {
			r.ServerTimings = &record.ServerTimings{Queue: float64(rng.IntN(300)) / 1e3, Prefill: float64(rng.IntN(500)) / 1e3, Decode: math.NaN(), Total: math.NaN()}
		}
		out = append(out, r)
	}
	return out
}

// TestSpillResultsGolden: a run's full results, every statistic of every
// metric (percentiles, mean, std, min, max, the error-adjusted, the
// time-weighted, the TTFT breakdown) and its time slices' time-weighted
// figures, are the same bit for bit whether its values stay in memory or
// go to disk and are sorted in runs.
func TestSpillResultsGolden(t *testing.T) {
	recs := spillRecords(12_000 / raceScale)
	clock := record.ClockAt(1_000_000_000)
	opts := DefaultOptions()
	run := func(sp *Spill) (string, *Aggregator) {
		a := NewAggregator(true)
		if sp != nil {
			a.WithSpill(sp)
		}
		a.iclExactLimit = 1 << 30 // exact ICL percentiles, spilled too
		for _, r := range recs {
			v := Compute(r, wordCounter{}, clock, opts)
			a.Add(r, &v)
		}
		a.SetWindow(clock.Wall(0), clock.Wall(recs[len(recs)-1].EndPerf))
		s := dumpAll(a.Results())
		lo, hi := clock.Wall(0), clock.Wall(recs[len(recs)-1].EndPerf)
		for w := lo; w < hi; w += (hi - lo) / 4 {
			s += dumpResults(a.TimeWeighted(w, w+(hi-lo)/4))
		}
		return s, a
	}
	want, _ := run(nil)
	sp := tinySpill(t)
	got, a := run(sp)
	if got != want {
		gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("spilled results differ:\n got %s\nwant %s", gl[i], wl[i])
			}
		}
		t.Fatalf("spilled results differ in length: %d lines, want %d", len(gl), len(wl))
	}
	if !strings.Contains(want, "breakdown") || !strings.Contains(want, "adj_request_latency") || !strings.Contains(want, "effective_concurrency") {
		t.Fatalf("the case lacks what it is meant to compare:\n%s", want)
	}
	if err := a.Err(); err != nil {
		t.Fatal(err)
	}
	if sp.resident < 0 || sp.partial < 0 || sp.partial > 8*maxBlock {
		t.Fatalf("memory accounted: %d bytes in sealed blocks, %d in blocks being filled", sp.resident, sp.partial)
	}
	if sp.Written() == 0 || a.RetainedBytes() > 8*maxBlock {
		t.Fatalf("%d bytes spilled, %d kept in memory", sp.Written(), a.RetainedBytes())
	}
}

// TestSpillWriteError: a spill that cannot write says so (the run fails)
// and keeps the values meanwhile.
func TestSpillWriteError(t *testing.T) {
	parent := t.TempDir()
	file := parent + "/not-a-folder"
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	sp := newTestSpill(file, 0, 1<<20)
	c := newColumn(1)
	c.list.sp = sp
	for i := range 10_000 {
		c.add(float64(i))
	}
	if sp.Err() == nil {
		t.Fatal("no error spilling under a file")
	}
	if got := c.values(); len(got) != 10_000 || got[9_999] != 9_999 {
		t.Fatalf("%d values kept", len(got))
	}
}

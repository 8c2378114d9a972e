package benchmark

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/internal/config"
	"github.com/llmbench/llmbench/internal/export"
	"github.com/llmbench/llmbench/internal/metrics"
	"github.com/llmbench/llmbench/internal/record"
	"github.com/llmbench/llmbench/internal/stats"
)

type spaceCounter struct{}

func (spaceCounter) Count(s string) int { return strings.Count(s, " ") }

// TestCollectorSpill: a collector whose budget is far too small for its
// records spills them under the artifact directory and computes the very
// same results, time slices included, as one that keeps them in memory;
// close removes the spill folder.
func TestCollectorSpill(t *testing.T) {
	clock := record.ClockAt(1_000_000_000)
	rng := rand.New(rand.NewPCG(3, 3))
	type kept struct {
		r *record.Record
		v metrics.Values
	}
	var recs []kept
	for i := range 30_000 / raceScale {
		start := int64(i) * 100_000
		r := &record.Record{Phase: record.PhaseProfiling, InputTokens: 16, RequestedOutputTokens: 8, Streaming: true,
			CreditIssuedPerf: start + 1, StartPerf: start + 1 + int64(rng.IntN(50_000)), Scheduled: true}
		if i%50 == 7 {
			r.EndPerf = r.StartPerf + 1000
			r.Err = &record.Error{Code: 500, Type: "HTTP", Message: "boom"}
		} else {
			at := r.StartPerf + 200_000 + int64(rng.IntN(2_000_000))
			for range 8 {
				r.ResponsePerfs = append(r.ResponsePerfs, at)
				at += int64(rng.IntN(300_000))
			}
			r.FirstOutputPerf, r.EndPerf, r.OutputText = r.ResponsePerfs[0], at, "a b c d e f g h "
		}
		recs = append(recs, kept{r, metrics.Compute(r, spaceCounter{}, clock, metrics.DefaultOptions())})
	}
	run := func(budget int64) (string, string) {
		p := config.Default()
		p.Endpoint.Streaming = true
		p.Output.ArtifactDir = t.TempDir()
		p.Output.RecordsMemoryBudget = budget
		p.ServerMetrics.SliceSeconds = 0.5
		start, end := clock.Wall(0), clock.Wall(recs[len(recs)-1].r.EndPerf)
		win := &window{startNs: start, endNs: end, profiled: true}
		win.profilingStart.Store(start)
		c := newCollector(export.DiscardRecords(), p, win, nil)
		for _, k := range recs {
			c.keep(k.r, &k.v)
		}
		res, err := c.finish()
		if err != nil {
			t.Fatal(err)
		}
		out := dumpSummary(res.Metrics)
		for _, s := range c.timeslices(end) {
			out += fmt.Sprintf("slice %d %d %v\n", s.StartNs, s.EndNs, s.Complete) + dumpSummary(s.Results.Metrics)
		}
		dir := c.spill.Dir()
		if err := c.close(); err != nil {
			t.Fatal(err)
		}
		if dir != "" {
			if filepath.Dir(dir) != p.Output.ArtifactDir {
				t.Errorf("spill folder %s not under the artifact directory", dir)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("spill folder %s left behind", dir)
			}
		}
		return out, dir
	}
	want, dir := run(0) // the default budget: all in memory
	if dir != "" {
		t.Fatalf("%d records spilled under the default budget", len(recs))
	}
	got, dir := run(1) // the least budget there is
	if dir == "" {
		t.Fatal("nothing spilled")
	}
	if got != want {
		gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("spilled results differ:\n got %s\nwant %s", gl[i], wl[i])
			}
		}
		t.Fatal("spilled results differ in length")
	}
	if !strings.Contains(want, "slice ") || !strings.Contains(want, "effective_concurrency") {
		t.Fatal("the case lacks time slices or time-weighted metrics")
	}
}

func dumpSummary(rs []metrics.Result) string {
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "%s %x", r.Def.Tag, math.Float64bits(r.Value))
		if d := r.Dist; d != nil {
			fmt.Fprintf(&b, " %d %x %x %x %x %x", d.Count, math.Float64bits(d.Sum), math.Float64bits(d.Avg), math.Float64bits(d.Min), math.Float64bits(d.Max), math.Float64bits(d.Std))
			for i := range stats.Percentiles {
				fmt.Fprintf(&b, " %x", math.Float64bits(d.P[i]))
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

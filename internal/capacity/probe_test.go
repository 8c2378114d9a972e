package capacity

import (
	"context"
	"flag"
	"io"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/llmbench/llmbench/internal/benchmark"
	"github.com/llmbench/llmbench/internal/config"
	"github.com/llmbench/llmbench/internal/mockserver"
	"github.com/llmbench/llmbench/internal/search"
	"github.com/llmbench/llmbench/internal/sla"
)

// builder makes profiles from a command line and flag overrides, as the
// profile command's parser does.
func builder(t *testing.T, args ...string) func([][2]string) (config.Profile, error) {
	return func(ov [][2]string) (config.Profile, error) {
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		p := config.Default()
		f := config.BindFlags(fs, &p)
		if err := fs.Parse(config.ExpandListArgs(args, config.ListFlags)); err != nil {
			return p, err
		}
		for _, o := range ov {
			if err := f.Set(o[0], o[1]); err != nil {
				return p, err
			}
		}
		return p, p.Finish()
	}
}

// TestProbeStartsClean: a probe that overloads the server ends with
// requests still queued (a timed probe, no grace period, and a server
// that does not abort what its clients gave up: about 1.5 s of backlog).
// The light probe after it, with its own warm-up at its load, measures
// what the same probe measures on a fresh server; without the warm-up,
// the backlog shows in its TTFT.
func TestProbeStartsClean(t *testing.T) {
	t.Setenv("AIPERF_SERVER_METRICS_COLLECTION_FLUSH_PERIOD", "0")
	for _, c := range []struct {
		warmup string
		clean  bool
	}{{"2.5", true}, {"0", false}} {
		t.Run("warmup "+c.warmup, func(t *testing.T) { probeAfterOverload(t, c.warmup, c.clean) })
	}
}

func probeAfterOverload(t *testing.T, warmup string, clean bool) {
	build := builder(t, "-m", "m", "--mock", "--streaming", "--osl", "40", "--benchmark-duration", "1.5", "--benchmark-grace-period", "0",
		"--no-server-metrics", "--search-warmup-seconds", warmup, "--search-max-trials-per-probe", "1", "--random-seed", "3")
	base, err := build(nil)
	if err != nil {
		t.Fatal(err)
	}
	mock := mockserver.DefaultConfig()
	mock.TTFT, mock.ITL, mock.MaxNumSeqs, mock.NoAbort = 10*time.Millisecond, 5*time.Millisecond, 4, true
	// The median decides with a few dozen requests; the p95 is what the
	// comparison reads.
	ttft := sla.Filter{Tag: "time_to_first_token", Stat: "p50", Op: sla.LT, Threshold: 1000}
	s := adaptiveSearch{style: styleConfident, filters: []sla.Filter{ttft}, maxTrials: 1}

	probe := func(shared *benchmark.Shared, dir string, concurrency, iteration int) *probeResult {
		t.Helper()
		base.Output.ArtifactDir = dir
		opts := Options{Run: benchmark.Options{Profile: base, Mock: mock, Version: "test", Shared: shared}, Build: build}
		pr, _, err := runProbe(context.Background(), opts, s, concurrency, iteration, &Outcome{})
		if err != nil || pr == nil {
			t.Fatalf("probe at %d: err %v, nil %v", concurrency, err, pr == nil)
		}
		return pr
	}
	fresh := benchmark.NewShared()
	defer fresh.Close()
	reference := probe(fresh, filepath.Join(t.TempDir(), "ref"), 2, 0)

	used := benchmark.NewShared()
	defer used.Close()
	dir := t.TempDir()
	overload := probe(used, dir, 32, 0)
	after := probe(used, dir, 2, 1)

	// A probe none of whose requests finished in time has no TTFT: +Inf.
	p95 := func(pr *probeResult) float64 {
		if len(pr.runs) == 0 {
			return math.Inf(1)
		}
		return statOf(pr.runs[0], "time_to_first_token", "p95")
	}
	if p95(overload) < 200 {
		t.Fatalf("the overloading probe's TTFT p95 is %.1f ms: it did not build a queue", p95(overload))
	}
	// A leaked queue only ever makes the later probe slower: a reference
	// slower than the probe after the overload is a stall of a loaded
	// machine during the reference, not a leak.
	d := p95(after) - p95(reference)
	switch {
	// One request queued ahead adds a quarter of a request's 210 ms; the
	// p95 of a dozen requests varies by a few ms from run to run.
	case clean && d > 30:
		t.Errorf("TTFT p95 after an overload %.1f ms, on a fresh server %.1f ms: the queue leaked into the next probe", p95(after), p95(reference))
	case !clean && d < 100:
		t.Errorf("without a warm-up, TTFT p95 after an overload %.1f ms, on a fresh server %.1f ms: the test does not leave a backlog", p95(after), p95(reference))
	}
	if clean && after.verdict != search.Pass {
		t.Errorf("verdict %v", after.verdict)
	}
}

package capacity

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/internal/metrics"
	"github.com/llmbench/llmbench/internal/search"
	"github.com/llmbench/llmbench/internal/sla"
	"github.com/llmbench/llmbench/internal/stats"
)

// results makes a run's results with a TTFT distribution whose p95 is
// p95 and the given counts and output throughput.
func results(p95 float64, requests, errors int, throughput float64) metrics.Results {
	d := &stats.Summary{Count: requests, Avg: p95 / 2, Min: 1, Max: p95 * 1.1}
	for i, name := range stats.PercentileNames {
		d.P[i] = p95 * float64(i+1) / 8
		if name == "p95" {
			d.P[i] = p95
		}
	}
	return metrics.Results{RequestCount: requests, ErrorCount: errors, Metrics: []metrics.Result{
		{Def: metrics.Def{Tag: "time_to_first_token", Unit: "ms"}, Dist: d},
		{Def: metrics.Def{Tag: "output_token_throughput", Unit: "tokens/sec"}, Value: throughput},
	}}
}

func TestStatOf(t *testing.T) {
	rs := results(120, 90, 10, 500)
	for _, c := range []struct {
		tag, stat string
		want      float64
	}{
		{"time_to_first_token", "p95", 120},
		{"time_to_first_token", "avg", 60},
		{"time_to_first_token", "max", 132},
		{"output_token_throughput", "avg", 500},
		{"output_token_throughput", "p95", math.NaN()},
		{"request_error_rate", "avg", 10}, // 10 of 100 requests, in percent
		{"request_error_rate", "p95", math.NaN()},
		{"no_such_metric", "avg", math.NaN()},
	} {
		got := statOf(rs, c.tag, c.stat)
		if got != c.want && !(math.IsNaN(got) && math.IsNaN(c.want)) {
			t.Errorf("statOf(%s, %s) = %v, want %v", c.tag, c.stat, got, c.want)
		}
	}
	// The error rate is added only where a filter names it.
	f := []sla.Filter{{Tag: "request_error_rate", Stat: "avg", Op: sla.LT, Threshold: 5}}
	with := withFilterMetrics(rs, f)
	if got, ok := with.Get("request_error_rate"); !ok || got.Value != 10 || got.Def.Unit != "%" {
		t.Errorf("request_error_rate %+v, %v", got, ok)
	}
	without := withFilterMetrics(rs, nil)
	if _, ok := without.Get("request_error_rate"); ok || len(rs.Metrics) != 2 {
		t.Error("withFilterMetrics added a metric no filter names, or changed its input")
	}
}

func TestRunOrder(t *testing.T) {
	repeated := runOrder(2, 3, false)
	independent := runOrder(2, 3, true)
	if !reflect.DeepEqual(repeated, []step{{0, 0}, {1, 0}, {0, 1}, {1, 1}, {0, 2}, {1, 2}}) {
		t.Errorf("repeated %v", repeated)
	}
	if !reflect.DeepEqual(independent, []step{{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}}) {
		t.Errorf("independent %v", independent)
	}
}

// TestProbeRequests: enough samples for the interval of the most extreme
// percentile to have two finite ends, plus 10 %: 1 − 0.95^n ≥ 0.975 from
// n = 72 (so 80), 1 − 0.99^n ≥ 0.975 from n = 368 (so 405).
func TestProbeRequests(t *testing.T) {
	f := func(stat string) sla.Filter { return sla.Filter{Tag: "x", Stat: stat, Op: sla.LT, Threshold: 1} }
	for _, c := range []struct {
		filters     []sla.Filter
		concurrency int
		want        int
	}{
		{[]sla.Filter{f("p95")}, 8, 100},
		{[]sla.Filter{f("p95")}, 64, 128},
		{[]sla.Filter{f("p50"), f("p99")}, 8, 405},
		{[]sla.Filter{f("avg")}, 1, 100},
		{[]sla.Filter{f("p1")}, 1, 405},
	} {
		if got := probeRequests(c.filters, 0.95, c.concurrency); got != c.want {
			t.Errorf("%v at %d: %d, want %d", c.filters, c.concurrency, got, c.want)
		}
	}
	// The interval really has both ends with 72 samples and not with 71.
	for n, ok := range map[int]bool{71: false, 72: true} {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(i)
		}
		if _, _, got := search.QuantileCI(xs, 0.95, 0.95); got != ok {
			t.Errorf("QuantileCI of %d samples: ok %v", n, got)
		}
	}
}

func TestProbeSeed(t *testing.T) {
	if probeSeed(nil, 8, 0) != nil {
		t.Error("a seed without a base seed")
	}
	base := int64(1)
	seen := map[int64]bool{}
	for _, v := range []int{1, 2, 8} {
		for trial := range 3 {
			s := probeSeed(&base, v, trial)
			if s == nil || *s < 0 || seen[*s] {
				t.Fatalf("seed %v for %d/%d", s, v, trial)
			}
			seen[*s] = true
			if again := probeSeed(&base, v, trial); *again != *s {
				t.Error("seeds are not reproducible")
			}
		}
	}
}

// TestJudge decides probes from hand-made trials: the pooled samples
// decide the confident verdict; AIPerf's feasibility is one trial meeting
// every filter; the breach and margins follow the filters' order.
func TestJudge(t *testing.T) {
	ttft := sla.Filter{Tag: "time_to_first_token", Stat: "p95", Op: sla.LT, Threshold: 100}
	errs := sla.Filter{Tag: "request_error_rate", Stat: "avg", Op: sla.LT, Threshold: 5}
	low := make([]float64, 200) // every TTFT 20 ms
	high := make([]float64, 200)
	for i := range low {
		low[i], high[i] = 20, 20
		if i%5 == 0 {
			high[i] = 190 // 20 % of requests wait a whole request
		}
	}
	zeros := make([]float64, 200)
	for _, c := range []struct {
		name     string
		style    string
		runs     []metrics.Results
		pooled   map[string][]float64
		verdict  search.Verdict
		feasible bool
		breach   string
	}{
		{"clear pass", styleConfident, []metrics.Results{results(20, 200, 0, 900)}, map[string][]float64{"time_to_first_token": low, "request_error_rate": zeros}, search.Pass, true, ""},
		{"clear fail", styleConfident, []metrics.Results{results(190, 200, 0, 950)}, map[string][]float64{"time_to_first_token": high, "request_error_rate": zeros}, search.Fail, false, "time_to_first_token"},
		{"too few samples", styleConfident, []metrics.Results{results(20, 10, 0, 900)}, map[string][]float64{"time_to_first_token": low[:10], "request_error_rate": zeros[:10]}, search.Uncertain, true, ""},
		{"AIPerf's rule: one trial passes", search.StyleMonotonic, []metrics.Results{results(190, 100, 0, 900), results(90, 100, 0, 900)}, map[string][]float64{"time_to_first_token": high, "request_error_rate": zeros}, search.Fail, true, "time_to_first_token"},
		{"no successful trial", styleConfident, nil, map[string][]float64{}, search.Fail, false, "time_to_first_token"},
	} {
		pr := &probeResult{runs: c.runs}
		pr.judge(adaptiveSearch{style: c.style, filters: []sla.Filter{ttft, errs}}, c.pooled, 0.95)
		if pr.verdict != c.verdict || pr.feasible != c.feasible {
			t.Errorf("%s: verdict %v feasible %v; want %v %v", c.name, pr.verdict, pr.feasible, c.verdict, c.feasible)
		}
		gotBreach := ""
		if pr.breach != nil {
			gotBreach = pr.breach.MetricTag
		}
		if gotBreach != c.breach {
			t.Errorf("%s: breach %q, want %q", c.name, gotBreach, c.breach)
		}
		if len(pr.decisions) != 2 || len(pr.margins) != 2 {
			t.Errorf("%s: %d decisions, %d margins", c.name, len(pr.decisions), len(pr.margins))
		}
	}
	// The margin is the trials' mean statistic minus the threshold.
	pr := &probeResult{runs: []metrics.Results{results(80, 100, 0, 1), results(100, 100, 0, 3)}}
	pr.judge(adaptiveSearch{style: styleConfident, filters: []sla.Filter{ttft}}, map[string][]float64{"time_to_first_token": low}, 0.95)
	if pr.margins[0] != -10 || pr.objective != 2 {
		t.Errorf("margin %v objective %v; want -10 and 2", pr.margins[0], pr.objective)
	}
}

func TestDescribeFilter(t *testing.T) {
	for f, want := range map[sla.Filter]string{
		{Tag: "time_to_first_token", Stat: "p95", Op: sla.LT, Threshold: 100}:    "time_to_first_token p95 < 100 ms",
		{Tag: "good_request_fraction", Stat: "avg", Op: sla.GE, Threshold: 0.95}: "good_request_fraction avg ≥ 0.95",
		{Tag: "request_error_rate", Stat: "avg", Op: sla.LT, Threshold: 1}:       "request_error_rate avg < 1 %",
	} {
		if got := describeFilter(f); got != want {
			t.Errorf("%q, want %q", got, want)
		}
	}
	if !strings.Contains(num(math.Inf(1)), "inf") || num(math.NaN()) != "n/a" || num(1.005) != "1.00" && num(1.005) != "1.01" {
		t.Error("num")
	}
}

// TestUnreported: a filter on a metric the run does not report is named;
// the error rate, derived from the counts, is always there.
func TestUnreported(t *testing.T) {
	rs := results(20, 10, 0, 1)
	ok := []sla.Filter{{Tag: "time_to_first_token", Stat: "p95", Op: sla.LT, Threshold: 1}, {Tag: "request_error_rate", Stat: "avg", Op: sla.LT, Threshold: 1}}
	if f := unreported(rs, ok); f != nil {
		t.Errorf("reported %v as missing", f)
	}
	typo := append(ok, sla.Filter{Tag: "time_to_first_tokn", Stat: "p95", Op: sla.LT, Threshold: 1})
	if f := unreported(rs, typo); f == nil || f.Tag != "time_to_first_tokn" {
		t.Errorf("missing metric: %v", f)
	}
}

package compare

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
)

func load(t *testing.T, dir string) *Side {
	t.Helper()
	s, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustEntry(t *testing.T, r *Result, tag, stat string) Entry {
	t.Helper()
	e := r.entry(tag, stat)
	if e == nil {
		t.Fatalf("no entry %s:%s", tag, stat)
	}
	return *e
}

// TestCompareFixtures: concurrency 1 against 4 of the AIPerf fixtures,
// single runs of 10 records: TTFT and latency up, per-user throughput
// down, the workload the same; the throughputs and the high percentiles
// not tested, and why.
func TestCompareFixtures(t *testing.T) {
	base := load(t, filepath.Join(fixtures, "qwen_concurrency1"))
	nw := load(t, filepath.Join(fixtures, "qwen_concurrency4"))
	p99, _ := ParseGate("time_to_first_token:p99:+5%")
	avg, _ := ParseGate("time_to_first_token:avg:+5%")
	res := mustCompare(t, base, nw, Options{Seed: 1, Gates: []Gate{p99, avg}})
	if res.Inputs.Method != MethodRequests || res.Inputs.Level != DefaultLevel || res.Inputs.Resamples != DefaultResamples ||
		res.Inputs.Base.Layout != "single_run" || res.Inputs.Base.Requests != 10 {
		t.Errorf("inputs %+v", res.Inputs)
	}
	for _, tc := range []struct{ tag, stat, verdict, method string }{
		{"time_to_first_token", "avg", Regressed, EntryWelchRequests},
		{"time_to_first_token", "p50", Regressed, EntryBootstrap},
		{"time_to_first_token", "p90", NotTested, EntryNone},
		{"time_to_first_token", "p99", NotTested, EntryNone},
		{"request_latency", "avg", Regressed, EntryWelchRequests},
		{"output_token_throughput_per_user", "avg", Regressed, EntryWelchRequests},
		{"input_sequence_length", "avg", NoChange, EntryWelchRequests},
		{"input_sequence_length", "p50", NoChange, EntryBootstrap},
		{"request_throughput", "avg", NotTested, EntryNone},
		{"output_token_throughput", "avg", NotTested, EntryNone},
		{ErrorRateTag, ErrorRateStat, NoChange, EntryNewcombe},
	} {
		e := mustEntry(t, res, tc.tag, tc.stat)
		if e.Verdict != tc.verdict || e.Method != tc.method {
			t.Errorf("%s:%s: %s by %s, want %s by %s (%s)", tc.tag, tc.stat, e.Verdict, e.Method, tc.verdict, tc.method, e.Note)
		}
	}
	// The mean of the 10 records' TTFTs, not the export's 64.
	if e := mustEntry(t, res, "time_to_first_token", "avg"); !near(float64(e.Base), 31.276, 1e-3) || !near(float64(e.New), 54.596, 1e-3) || e.NBase != 10 || e.Unit != "ms" {
		t.Errorf("TTFT avg %+v", e)
	}
	if e := mustEntry(t, res, "request_throughput", "avg"); !near(float64(e.ChangeRel), 0.9726808041949375/0.2504302580624667-1, 1e-12) || !strings.Contains(e.Note, "--num-profile-runs") {
		t.Errorf("throughput %+v", e)
	}
	if e := mustEntry(t, res, "time_to_first_token", "p99"); !strings.Contains(e.Note, "300 requests") {
		t.Errorf("p99 note %q", e.Note)
	}
	if e := mustEntry(t, res, "input_sequence_length", "avg"); e.Better != "" {
		t.Errorf("ISL has a direction: %q", e.Better)
	}
	joined := strings.Join(res.Notes, "\n")
	if !strings.Contains(joined, "counts 64") {
		t.Errorf("no note that the records are 10 of the export's 64:\n%s", joined)
	}
	// p99 cannot be tested, so its gate fails closed; avg rose 75%.
	if len(res.Gates) != 2 || res.Gates[0].Status != GateNotTested || res.Gates[1].Status != GateFail || !res.Failed() || res.Summary.GatesFailed != 2 {
		t.Errorf("gates %+v", res.Gates)
	}
	if s := res.Summary; s.Regressed == 0 || s.NotTested == 0 || s.Improved+s.Regressed+s.NoSignificantChange+s.Changed+s.NotTested != len(res.Metrics) {
		t.Errorf("summary %+v", s)
	}
}

// multiSide is a multi-run side whose runs export a TTFT p99, a
// throughput and their request and error counts.
func multiSide(dir string, p99, thr []float64, errs []int) *Side {
	s := &Side{Dir: dir, Multi: true}
	for i := range p99 {
		s.Runs = append(s.Runs, Run{Dir: dir, Requests: 100, Errors: errs[i], Export: map[string]ExportMetric{
			"time_to_first_token": {Unit: "ms", Stats: map[string]float64{"p99": p99[i]}},
			"request_throughput":  {Unit: "requests/sec", Stats: map[string]float64{"avg": thr[i]}},
		}})
	}
	return s
}

// TestCompareRuns: two multi-run sides by Welch over runs, with
// TestWelchHandComputed's numbers.
func TestCompareRuns(t *testing.T) {
	base := multiSide("base", []float64{10, 12, 14}, []float64{5, 5.5, 6}, []int{0, 0, 0})
	nw := multiSide("new", []float64{17, 19, 21, 23}, []float64{5, 5.5, 6, 5.5}, []int{0, 1, 0, 0})
	res := mustCompare(t, base, nw, Options{})
	if res.Inputs.Method != MethodRuns || res.Inputs.New.Runs != 4 || res.Inputs.New.Layout != "multi_run" {
		t.Errorf("inputs %+v", res.Inputs)
	}
	e := mustEntry(t, res, "time_to_first_token", "p99")
	if e.Verdict != Regressed || e.Method != EntryWelchRuns || !near(float64(e.CIAbsLow), 3.5365770, 1e-6) || !near(float64(e.CIAbsHigh), 12.4634230, 1e-6) || e.NNew != 4 {
		t.Errorf("p99 %+v", e)
	}
	if e := mustEntry(t, res, "request_throughput", "avg"); e.Verdict != NoChange || e.Method != EntryWelchRuns {
		t.Errorf("throughput %+v", e)
	}
	// Error rates 0,0,0 against 0,1,0,0 percent: no significant change.
	if e := mustEntry(t, res, ErrorRateTag, ErrorRateStat); e.Verdict != NoChange || e.Method != EntryWelchRuns || !near(float64(e.New), 0.25, 1e-12) {
		t.Errorf("error rate %+v", e)
	}
	if len(res.Metrics) != 3 {
		t.Errorf("%d entries, want the 3 both sides have", len(res.Metrics))
	}
}

// TestComparePooled: a multi-run side against a single run pools the
// runs' requests and says so.
func TestComparePooled(t *testing.T) {
	v := lognormalN(400, 1)
	multi := &Side{Dir: "multi", Multi: true}
	for i := range 4 {
		r := side("time_to_first_token", v[i*100:(i+1)*100]).Runs[0]
		multi.Runs = append(multi.Runs, r)
	}
	single := side("time_to_first_token", lognormalN(300, 2))
	res := mustCompare(t, single, multi, Options{})
	if res.Inputs.Method != MethodPooled || !strings.Contains(strings.Join(res.Notes, " "), "pooled") {
		t.Errorf("method %s, notes %q", res.Inputs.Method, res.Notes)
	}
	if e := mustEntry(t, res, "time_to_first_token", "p50"); e.NNew != 400 || e.NBase != 300 || e.Method != EntryBootstrap {
		t.Errorf("p50 %+v", e)
	}
}

func lognormalN(n int, seed uint64) []float64 {
	return lognormal(rand.New(rand.NewPCG(seed, seed)), n, 40, 0.5)
}

func TestCompareOptions(t *testing.T) {
	s := side("time_to_first_token", []float64{1, 2, 3})
	for _, o := range []Options{{Level: 1.5}, {Level: -0.1}, {Resamples: 10}, {Resamples: -1}} {
		if _, err := Compare(t.Context(), s, s, o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	if _, err := Compare(t.Context(), s, &Side{}, Options{}); err == nil {
		t.Error("an empty side accepted")
	}
}

// TestJSON: compare.json's shape: its keys in order, no value as null,
// a workload metric's direction as null; it reads back.
func TestJSON(t *testing.T) {
	base := load(t, filepath.Join(fixtures, "qwen_concurrency1"))
	nw := load(t, filepath.Join(fixtures, "qwen_concurrency2"))
	g, _ := ParseGate("error_rate:+1")
	res := mustCompare(t, base, nw, Options{Seed: 7, Gates: []Gate{g}})
	b, err := res.JSON()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"inputs": {`, `"method": "requests"`, `"seed": 7`, `"ci_rel_low": null`, `"better": null`, `"better": "lower"`,
		`"gates_failed": 0`, `"expr": "error_rate:+1"`, `"passed": true`} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("compare.json lacks %s", want)
		}
	}
	order := []string{`"inputs"`, `"metrics"`, `"gates"`, `"summary"`, `"notes"`}
	for i := 1; i < len(order); i++ {
		if bytes.Index(b, []byte(order[i-1])) > bytes.Index(b, []byte(order[i])) {
			t.Errorf("%s after %s", order[i-1], order[i])
		}
	}
	entryKeys := []string{"tag", "stat", "unit", "base", "new", "change_abs", "change_rel", "ci_rel_low", "ci_rel_high", "verdict", "better", "n_base", "n_new"}
	var back Result
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	var raw struct{ Metrics []map[string]any }
	_ = json.Unmarshal(b, &raw)
	for _, k := range entryKeys {
		if _, ok := raw.Metrics[0][k]; !ok {
			t.Errorf("entry lacks %q", k)
		}
	}
	if len(back.Metrics) != len(res.Metrics) || !math.IsNaN(float64(back.Metrics[len(back.Metrics)-1].ChangeRel)) {
		t.Errorf("read back %d entries; error rate change %v", len(back.Metrics), back.Metrics[len(back.Metrics)-1].ChangeRel)
	}
	b2, _ := res.JSON()
	if !bytes.Equal(b, b2) {
		t.Error("compare.json differs between two renderings")
	}
}

// TestTable: regressions first and marked; every line within the width
// asked for, the names shortened before anything is cut.
func TestTable(t *testing.T) {
	base := load(t, filepath.Join(fixtures, "qwen_concurrency1"))
	nw := load(t, filepath.Join(fixtures, "qwen_concurrency4"))
	g, _ := ParseGate("time_to_first_token:avg:+5%")
	res := mustCompare(t, base, nw, Options{Seed: 1, Gates: []Gate{g}})
	full := res.Table(0)
	lines := strings.Split(full, "\n")
	var first string
	for _, l := range lines {
		if strings.HasPrefix(l, "!") || strings.Contains(l, "no_significant_change") || strings.Contains(l, "not_tested") {
			first = l
			break
		}
	}
	if !strings.HasPrefix(first, "! ") || !strings.Contains(first, Regressed) {
		t.Errorf("first row %q, want a regression marked !\n%s", first, full)
	}
	if !strings.Contains(full, "time_to_first_token (ms)") || !strings.Contains(full, "gate time_to_first_token:avg:+5%: FAIL") || !strings.Contains(full, "(workload)") {
		t.Errorf("table:\n%s", full)
	}
	for _, width := range []int{120, 80, 60, 40} {
		out := res.Table(width)
		for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			if n := len([]rune(l)); n > width {
				t.Errorf("width %d: line of %d: %q", width, n, l)
			}
		}
		if width == 80 && (!strings.Contains(out, "TTFT  ") || !strings.Contains(out, "[") || !strings.Contains(out, "3630")) {
			t.Errorf("width 80: want short names with intervals:\n%s", out)
		}
	}
	t.Logf("\n%s", res.Table(100))
}

func TestFormatNum(t *testing.T) {
	for _, tc := range []struct {
		x    float64
		want string
	}{{3652.145, "3652"}, {200, "200"}, {123.456, "123.5"}, {31.2764, "31.28"}, {0.25043, "0.25"}, {0.0123456, "0.0123"}, {math.NaN(), "-"}} {
		if got := formatNum(tc.x); got != tc.want {
			t.Errorf("formatNum(%v) = %q, want %q", tc.x, got, tc.want)
		}
	}
}

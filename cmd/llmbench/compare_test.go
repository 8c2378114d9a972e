package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/internal/browsertest"
)

// compareRun profiles the built-in server at the given TTFT, jittered by
// 8 ms from the same seeded sequence each time (the n-th request to
// arrive draws the n-th jitter, so every run draws the same 300 whatever
// the order of arrival), with no prefix cache: two runs of one setting
// differ by the client's noise, far below the spread the intervals are
// drawn from; 300 requests leave 3 beyond the p99, the fewest its
// bootstrap interval takes. One at a time: under the race detector four
// clients at once added to the time to first token as much as the 4 ms
// to detect.
func compareRun(t *testing.T, dir, ttftMs string) { compareRunJitter(t, dir, ttftMs, "8", "1") }

// compareRunJitter is compareRun with the server's TTFT jitter and the
// run's concurrency.
func compareRunJitter(t *testing.T, dir, ttftMs, jitterMs, concurrency string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run([]string{"llmbench", "profile", "--mock", "-m", "mock-model", "--streaming", "--concurrency", concurrency, "--request-count", "300",
		"--osl", "4", "--mock-prefix-caching=false", "--mock-ttft-ms", ttftMs, "--mock-ttft-jitter-ms", jitterMs, "--mock-itl-ms", "1", "--random-seed", "5",
		"--no-server-metrics", "--artifact-dir", dir, "--ui", "none"}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("profile at TTFT %s ms: exit %d\n%s", ttftMs, code, stderr.String())
	}
}

type compareEntry struct {
	Tag     string   `json:"tag"`
	Stat    string   `json:"stat"`
	Rel     *float64 `json:"change_rel"`
	Lo      *float64 `json:"ci_rel_low"`
	Hi      *float64 `json:"ci_rel_high"`
	Verdict string   `json:"verdict"`
}

func readCompare(t *testing.T, path string) map[string]compareEntry {
	t.Helper()
	var doc struct {
		Metrics []compareEntry `json:"metrics"`
	}
	readJSONFile(t, path, &doc)
	out := map[string]compareEntry{}
	for _, e := range doc.Metrics {
		out[e.Tag+"_"+e.Stat] = e
	}
	return out
}

// TestCompareFlagsARegression: TTFT 20 ms against 24 ms is a regression
// the gate catches (exit 1); two runs of the same setting show no
// significant change in TTFT and pass the same gate.
//
// The two runs of one setting draw the same server jitter (one seed), so
// what differs between them is the machine: a loaded CI machine (other
// packages' tests) delays one run's every request by a few ms, a real
// difference the comparison rightly calls significant against 8 ms of
// jitter (+9.5 %, interval +3.3 to +15.6, once; and -7 % at 100 ms with
// 40 ms of jitter). They run at TTFT 200 ms with 100 ms of jitter: the
// mean's standard error is then about 8 ms, against which a loaded
// machine's shift of several ms is noise, as it is in a real deployment's
// comparison.
func TestCompareFlagsARegression(t *testing.T) {
	root := t.TempDir()
	base, slower := filepath.Join(root, "base"), filepath.Join(root, "slower")
	sameBase, same := filepath.Join(root, "same-base"), filepath.Join(root, "same")
	compareRun(t, base, "20")
	compareRun(t, slower, "24")
	compareRunJitter(t, sameBase, "200", "100", "32")
	compareRunJitter(t, same, "200", "100", "32")

	var stdout, stderr bytes.Buffer
	out := filepath.Join(root, "regressed.json")
	code := run([]string{"llmbench", "compare", base, slower, "--fail-on", "time_to_first_token:avg:+5%", "--output", out}, &stdout, &stderr)
	if code != exitFailed || !strings.Contains(stderr.String(), "--fail-on time_to_first_token:avg:+5% failed") {
		t.Fatalf("20 ms against 24 ms: exit %d, stderr %q\n%s", code, stderr.String(), stdout.String())
	}
	got := readCompare(t, out)
	for _, stat := range []string{"avg", "p50"} {
		e := got["time_to_first_token_"+stat]
		// +4 ms on about 21: about +19 %, inside the interval.
		if e.Verdict != "regressed" || e.Rel == nil || *e.Rel < 0.1 || *e.Rel > 0.35 || e.Lo == nil || *e.Lo <= 0 {
			t.Errorf("TTFT %s: verdict %s, change %v [%v, %v]; want regressed by about 19 %%", stat, e.Verdict, deref(e.Rel), deref(e.Lo), deref(e.Hi))
		}
	}
	if e := got["time_to_first_token_p99"]; e.Rel == nil || *e.Rel <= 0 {
		t.Errorf("TTFT p99: change %v, want an increase", deref(e.Rel))
	}
	if !strings.Contains(stdout.String(), "regressed") {
		t.Errorf("the table does not say regressed:\n%s", stdout.String())
	}
	// compare.html, beside compare.json, says so to a person.
	if browsertest.Chromium() != "" || os.Getenv("CI") != "" {
		shown := openReport(t, filepath.Join(root, "compare.html"))
		if v, err := shown.page.Text("#verdict-time_to_first_token-avg"); err != nil || v != "regressed" {
			t.Errorf("compare.html shows TTFT avg as %q (%v), want regressed", v, err)
		}
		if !shown.has("compare_ttft_cdf") {
			t.Errorf("compare.html has no TTFT distributions: %+v", shown.charts)
		}
	}

	stdout.Reset()
	stderr.Reset()
	out = filepath.Join(root, "same.json")
	code = run([]string{"llmbench", "compare", "--fail-on", "time_to_first_token:avg:+5%", sameBase, same, "--output", out}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("identical settings: exit %d, stderr %q\n%s", code, stderr.String(), stdout.String())
	}
	got = readCompare(t, out)
	// Not p99: a live run's tail carries the machine's load at the time
	// (in CI, other packages' tests), a real difference between the two
	// runs that the test cannot hold constant (+22 % once, interval
	// [+4.9, +33.6]). The p99's false-alarm rate is checked where the
	// data is fixed: on recorded TTFTs (internal/compare, FalseAlarm).
	for _, stat := range []string{"avg", "p50"} {
		if e := got["time_to_first_token_"+stat]; e.Verdict != "no_significant_change" {
			t.Errorf("identical settings, TTFT %s: verdict %s, change %v [%v, %v]", stat, e.Verdict, deref(e.Rel), deref(e.Lo), deref(e.Hi))
		}
	}
	if _, err := os.Stat(filepath.Join(same, "compare.json")); err == nil {
		t.Error("--output was not honoured")
	}
}

func TestCompareUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"only-one"}, "give two artifact folders"},
		{[]string{"a", "b", "c"}, "give two artifact folders"},
		{[]string{t.TempDir(), t.TempDir()}, "profile_export"},
		{[]string{"a", "b", "--fail-on", "time_to_first_token:p99"}, "--fail-on"},
		{[]string{"a", "b", "--frobnicate"}, "unknown flag --frobnicate"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(append([]string{"llmbench", "compare"}, c.args...), &stdout, &stderr)
		if code != exitUsage || !strings.Contains(stderr.String(), c.want) || strings.Count(strings.TrimSpace(stderr.String()), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line with %q", c.args, code, stderr.String(), c.want)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"llmbench", "compare", "--help"}, &stdout, &stderr); code != exitOK || !strings.Contains(stdout.String(), "--fail-on GATE") {
		t.Errorf("--help: exit %d\n%s", code, stdout.String())
	}
}

// TestCompareReadsAIPerfExports: AIPerf's own folders load and compare.
func TestCompareReadsAIPerfExports(t *testing.T) {
	fixtures := filepath.Join("..", "..", "..", "shared", "fixtures", "aiperf-exports")
	var stdout, stderr bytes.Buffer
	out := filepath.Join(t.TempDir(), "c.json")
	code := run([]string{"llmbench", "compare", filepath.Join(fixtures, "qwen_concurrency1"), filepath.Join(fixtures, "qwen_concurrency4"), "--output", out}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	got := readCompare(t, out)
	if e, ok := got["time_to_first_token_p50"]; !ok || e.Rel == nil {
		t.Errorf("TTFT p50 not compared: %+v", got)
	}
	var raw map[string]json.RawMessage
	readJSONFile(t, out, &raw)
	for _, k := range []string{"inputs", "metrics", "gates", "summary"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("compare.json lacks %q", k)
		}
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

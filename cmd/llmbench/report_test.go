package main

import (
	"bytes"
	"flag"
	"fmt"
	"image"
	"image/draw"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/internal/browsertest"
)

// shownReport is what a person sees of a report in Chromium.
type shownReport struct {
	page *browsertest.Page
	// charts are the page's charts: id, points drawn, canvas width.
	charts []struct {
		ID     string `json:"id"`
		Points int    `json:"points"`
		Canvas int    `json:"canvas"`
	}
}

// openReport opens a report in headless Chromium and fails the test on
// any console error, any network request, or any chart left empty.
func openReport(t *testing.T, path string) *shownReport {
	t.Helper()
	p := browsertest.Open(t, path, browsertest.Options{Ready: "window.reportReady === true"})
	s := &shownReport{page: p}
	if errs := p.ConsoleErrors(); len(errs) > 0 {
		t.Errorf("%s: console errors: %q", path, errs)
	}
	if reqs := p.Requests(); len(reqs) > 0 {
		t.Errorf("%s: network requests: %q", path, reqs)
	}
	err := p.Eval(`Array.from(document.querySelectorAll("figure.chart")).map(f => ({
		id: f.dataset.chart, points: Number(f.dataset.points || 0),
		canvas: f.querySelector("canvas") ? f.querySelector("canvas").width : 0}))`, &s.charts)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.charts) == 0 {
		t.Errorf("%s: no chart", path)
	}
	for _, c := range s.charts {
		if c.Points == 0 || c.Canvas == 0 {
			t.Errorf("%s: chart %s is empty: %d points on a canvas %d px wide", path, c.ID, c.Points, c.Canvas)
		}
	}
	return s
}

func (s *shownReport) has(id string) bool {
	for _, c := range s.charts {
		if c.ID == id {
			return true
		}
	}
	return false
}

// TestReportInBrowser runs the README's command (fewer requests) and
// opens its report.html as a person would: it loads from disk with no
// network request and no console error, every chart is drawn, and the
// TTFT p50 and p99 it shows are the export's.
func TestReportInBrowser(t *testing.T) {
	if browsertest.Chromium() == "" && os.Getenv("CI") == "" {
		t.Skip("no Chromium: install Debian's chromium (.ci/run does)")
	}
	quickRuns(t)
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run([]string{"llmbench", "profile", "--mock", "--model", "mock-model", "--endpoint-type", "chat", "--streaming",
		"--concurrency", "4", "--request-count", "60", "--output-tokens-mean", "16", "--random-seed", "1", "--slice-duration", "1",
		"--server-metrics-formats", "json", "csv", "jsonl", "parquet", "--mock-gpus", "2", "--mock-error-every", "20",
		"--output-artifact-dir", dir}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	path := filepath.Join(dir, "report.html")
	if !strings.Contains(stdout.String(), path) {
		t.Errorf("the artifact list does not name %s:\n%s", path, stdout.String())
	}
	shown := openReport(t, path)
	for _, id := range []string{"ttft_over_time", "itl_over_time", "latency_over_time", "dispersed_throughput_over_time",
		"ttft_cdf", "server_kv_cache_usage", "server_requests", "server_token_rates", "gpu_power_over_time", "errors_over_time",
		"timeslices_ttft", "timeslices_itl", "gpu_utilization_and_throughput_over_time"} {
		if !shown.has(id) {
			t.Errorf("no chart %s", id)
		}
	}
	var export struct {
		TTFT map[string]any `json:"time_to_first_token"`
	}
	readJSONFile(t, filepath.Join(dir, "profile_export_aiperf.json"), &export)
	for _, st := range []string{"p50", "p99"} {
		text, err := shown.page.Text("#stat-time_to_first_token-" + st)
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("%.2f", export.TTFT[st].(float64))
		if text != want {
			t.Errorf("TTFT %s shown %q, the export has %s", st, text, want)
		}
	}
	// The tables are in the HTML itself, for a reader without JavaScript.
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`<td id="stat-time_to_first_token-p99">`)) || !bytes.Contains(b, []byte(`id="server-histograms"`)) {
		t.Error("the summary or server-histogram table is not in the HTML")
	}
}

// TestPlotAIPerfFolders draws AIPerf's own exports: one folder as a run's
// page, the three as runs side by side, with PNGs named as AIPerf names
// its plots.
func TestPlotAIPerfFolders(t *testing.T) {
	fixtures := "../../../shared/fixtures/aiperf-exports"
	if _, err := os.Stat(fixtures); err != nil {
		t.Skipf("no AIPerf fixtures: %v", err)
	}
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	one := filepath.Join(out, "one")
	if code := run([]string{"llmbench", "plot", filepath.Join(fixtures, "qwen_concurrency1"), "--output", one}, &stdout, &stderr); code != exitOK {
		t.Fatalf("plot one folder: exit %d\n%s", code, stderr.String())
	}
	three := filepath.Join(out, "three")
	args := []string{"llmbench", "plot", "--png", "--output", three}
	for _, c := range []string{"1", "2", "4"} {
		args = append(args, filepath.Join(fixtures, "qwen_concurrency"+c))
	}
	stdout.Reset()
	if code := run(args, &stdout, &stderr); code != exitOK {
		t.Fatalf("plot three folders: exit %d\n%s", code, stderr.String())
	}
	for _, name := range []string{"ttft_vs_throughput.png", "pareto_curve_throughput_per_gpu_vs_latency.png", "report.html"} {
		if _, err := os.Stat(filepath.Join(three, name)); err != nil {
			t.Errorf("plot --png wrote no %s: %v\n%s", name, err, stdout.String())
		}
	}
	if browsertest.Chromium() == "" && os.Getenv("CI") == "" {
		t.Skip("no Chromium: install Debian's chromium (.ci/run does)")
	}
	shown := openReport(t, filepath.Join(one, "report.html"))
	if !shown.has("ttft_over_time") || !shown.has("gpu_power_over_time") {
		t.Errorf("an AIPerf run's page lacks its TTFT or GPU charts: %+v", shown.charts)
	}
	if shown := openReport(t, filepath.Join(three, "report.html")); !shown.has("ttft_vs_throughput") {
		t.Errorf("the three runs' page has no ttft_vs_throughput: %+v", shown.charts)
	}
}

// TestMultiRunReport: --num-profile-runs writes a report of the runs at
// the top of its folder, each metric's runs with the interval.
func TestMultiRunReport(t *testing.T) {
	quickRuns(t)
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run([]string{"llmbench", "profile", "--mock", "--model", "mock-model", "--streaming", "--concurrency", "2",
		"--request-count", "12", "--osl", "8", "--num-profile-runs", "3", "--output-artifact-dir", dir, "--ui", "none"}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	checkTopReport(t, dir, "Multi-run", stderr.String())
	if browsertest.Chromium() == "" && os.Getenv("CI") == "" {
		t.Skip("no Chromium: install Debian's chromium (.ci/run does)")
	}
	shown := openReport(t, filepath.Join(dir, "report.html"))
	if !shown.has("time_to_first_token_p99_across_runs") {
		t.Errorf("no TTFT p99 across the runs: %+v", shown.charts)
	}
}

func TestPlotUsage(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{nil, "give one or more artifact folders"},
		{[]string{"--bogus"}, "unknown flag --bogus"},
		{[]string{t.TempDir()}, "no run found"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(append([]string{"llmbench", "plot"}, tt.args...), &stdout, &stderr)
		if code != exitUsage || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("plot %q: exit %d, stderr %q; want exit 2 saying %q", tt.args, code, stderr.String(), tt.want)
		}
	}
}

var reportScreenshot = flag.String("report-screenshot", "", "write a screenshot of the README command's report.html to this PNG (docs/report.png)")

// TestReportScreenshot renders the README's main command's report and
// saves the top of it as the README shows it:
//
//	go test ./cmd/llmbench -run TestReportScreenshot -report-screenshot ../../docs/report.png
func TestReportScreenshot(t *testing.T) {
	if *reportScreenshot == "" {
		t.Skip("-report-screenshot not given")
	}
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run([]string{"llmbench", "profile", "--mock", "--model", "mock-model", "--endpoint-type", "chat", "--streaming",
		"--concurrency", "8", "--request-count", "200", "--output-tokens-mean", "64", "--random-seed", "1",
		"--slice-duration", "1", "--server-metrics-formats", "json", "csv", "jsonl", "parquet", "--mock-gpus", "2",
		"--output-artifact-dir", dir, "--ui", "none"}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	shown := openReport(t, filepath.Join(dir, "report.html"))
	b, err := shown.page.Screenshot()
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	// The headline, the summary and the requests over time.
	top := image.NewRGBA(image.Rect(0, 0, img.Bounds().Dx(), min(img.Bounds().Dy(), 2000)))
	draw.Draw(top, top.Bounds(), img, img.Bounds().Min, draw.Src)
	var out bytes.Buffer
	if err := png.Encode(&out, top); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(*reportScreenshot, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestExportLevelSummary: --export-level summary writes no per-request
// file; the aggregate export still counts every request, and the report
// says why it has no per-request charts. raw is refused in one line.
func TestExportLevelSummary(t *testing.T) {
	quickRuns(t)
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run([]string{"llmbench", "profile", "--mock", "--model", "mock-model", "--streaming", "--request-count", "20",
		"--osl", "8", "--export-level", "summary", "--output-artifact-dir", dir}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "profile_export.jsonl")); err == nil {
		t.Error("--export-level summary wrote profile_export.jsonl")
	}
	if strings.Contains(stdout.String(), "profile_export.jsonl") {
		t.Errorf("the artifact list names profile_export.jsonl:\n%s", stdout.String())
	}
	var export struct {
		Count struct {
			Avg float64 `json:"avg"`
		} `json:"request_count"`
		Config struct {
			Output struct {
				Level string `json:"export_level"`
			} `json:"output"`
		} `json:"input_config"`
	}
	readJSONFile(t, filepath.Join(dir, "profile_export_aiperf.json"), &export)
	if export.Count.Avg != 20 || export.Config.Output.Level != "summary" {
		t.Errorf("export: request_count %v, export_level %q; want 20, summary", export.Count.Avg, export.Config.Output.Level)
	}
	html, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil || !bytes.Contains(html, []byte("holds no per-request records")) {
		t.Errorf("the report does not say why it has no per-request charts (%v)", err)
	}
	stderr.Reset()
	if code := run([]string{"llmbench", "profile", "--mock", "--model", "m", "--export-level", "everything"}, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "use summary, records or raw") {
		t.Errorf("--export-level everything: exit %d, %q; want exit 2 naming the levels", code, stderr.String())
	}
}

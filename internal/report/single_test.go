package report

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/internal/artifacts"
	"github.com/llmbench/llmbench/internal/chart"
	"github.com/llmbench/llmbench/internal/stats"
)

// testRun is a real run of the built-in server: 12 requests at
// concurrency 2, every 5th answered with HTTP 500, one GPU.
func testRun(t *testing.T) *artifacts.Run {
	t.Helper()
	r, err := artifacts.LoadRun("../artifacts/testdata/run", artifacts.DefaultNames)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func findChart(t *testing.T, p *Page, id string) chart.Chart {
	t.Helper()
	for _, c := range p.Charts() {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("no chart %s", id)
	return chart.Chart{}
}

func findCell(p *Page, id string) (Cell, bool) {
	for _, s := range p.Sections {
		for _, t := range s.Tables {
			for _, row := range t.Rows {
				for _, c := range row {
					if c.ID == id {
						return c, true
					}
				}
			}
		}
	}
	return Cell{}, false
}

func TestSingleRunPage(t *testing.T) {
	r := testRun(t)
	p := SingleRun(r, "llmbench test")
	// The summary shows the export's numbers, as the console does.
	for _, tag := range []string{"time_to_first_token", "request_latency", "inter_token_latency"} {
		for _, st := range []string{"avg", "p50", "p99", "max"} {
			c, ok := findCell(p, "stat-"+tag+"-"+st)
			want, _ := r.Stat(tag, st)
			if !ok || c.Text != number(want, true) {
				t.Errorf("%s %s: cell %q, want %q", tag, st, c.Text, number(want, true))
			}
		}
	}
	var good, failed int
	var latencies []float64
	for _, rec := range r.Records {
		if rec.Failed {
			failed++
			continue
		}
		good++
		latencies = append(latencies, float64(rec.EndNs-rec.StartNs)/1e9)
	}
	// Every successful request is a point; the p50 line is the export's.
	ttft := findChart(t, p, "ttft_over_time")
	if n := len(ttft.Series[0].Y); n != good {
		t.Errorf("ttft_over_time draws %d points, want %d", n, good)
	}
	p50, _ := r.Stat("time_to_first_token", "p50")
	if ttft.Series[1].Label != "p50" || ttft.Series[1].Y[0] != p50 {
		t.Errorf("p50 line %+v, want %v", ttft.Series[1], p50)
	}
	// Requests completed per second, times each slice's length, add up to
	// the successes; requests in flight integrate to the time they took.
	thr := findChart(t, p, "request_throughput_over_time")
	doneSum, busy := 0.0, 0.0
	for i := 0; i+1 < len(thr.Series[0].X); i++ {
		w := thr.Series[0].X[i+1] - thr.Series[0].X[i]
		doneSum += thr.Series[0].Y[i] * w
		busy += thr.Series[1].Y[i] * w
	}
	if math.Abs(doneSum-float64(good)) > 1e-6 {
		t.Errorf("requests/s integrate to %v, want %d", doneSum, good)
	}
	wantBusy := 0.0
	for _, rec := range r.Records {
		wantBusy += float64(rec.EndNs-rec.StartNs) / 1e9
	}
	if math.Abs(busy-wantBusy) > 1e-6 {
		t.Errorf("requests in flight integrate to %v s, want %v s", busy, wantBusy)
	}
	// The errors chart counts the failures by type.
	errs := findChart(t, p, "errors_over_time")
	total := 0.0
	for i, y := range errs.Series[0].Y {
		if i < len(errs.Series[0].Y)-1 { // the closing point repeats the last
			total += y
		}
	}
	if errs.Series[0].Label != "InternalServerError" || int(total) != failed {
		t.Errorf("errors chart %q counts %v, want InternalServerError %d", errs.Series[0].Label, total, failed)
	}
	// A CDF ends at 100 % at the largest value.
	cdf := findChart(t, p, "latency_cdf")
	s := cdf.Series[0]
	lat, _ := r.Stat("request_latency", "max")
	if s.Y[len(s.Y)-1] != 100 || s.X[len(s.X)-1] != lat {
		t.Errorf("latency CDF ends at (%v, %v), want (%v, 100)", s.X[len(s.X)-1], s.Y[len(s.Y)-1], lat)
	}
	for _, id := range []string{"server_kv_cache_usage", "server_requests", "server_token_rates", "gpu_power_over_time"} {
		if c := findChart(t, p, id); c.Empty() {
			t.Errorf("chart %s is empty", id)
		}
	}
	if !strings.Contains(p.Warnings[len(p.Warnings)-1], "requests failed") {
		t.Errorf("warnings %q do not name the failures", p.Warnings)
	}
	html, err := Render(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`id="stat-time_to_first_token-p99"`, `id="chart-ttft_over_time"`, "Content-Security-Policy"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("the page has no %s", want)
		}
	}
}

func TestCounterBins(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name     string
		t, num   []float64
		den      []float64
		starts   []float64
		w        float64
		want     []float64
		wantGaps []bool
	}{
		// Scrapes at 0, 1, 2 s of a counter at 0, 10, 30: 10/s then 20/s;
		// slices of 0.5 s read it by interpolation.
		{name: "rates", t: []float64{0, 1, 2}, num: []float64{0, 10, 30}, starts: []float64{0, 0.5, 1, 1.5}, w: 0.5, want: []float64{10, 10, 20, 20}},
		// A reset from 30 to 5 is a restart: the increase is 5.
		{name: "reset", t: []float64{0, 1, 2}, num: []float64{20, 30, 5}, starts: []float64{0, 1}, w: 1, want: []float64{10, 5}},
		// Hits over queries: 5 of 10, then 0 of 0 (a gap).
		{name: "ratio", t: []float64{0, 1, 2}, num: []float64{0, 5, 5}, den: []float64{0, 10, 10}, starts: []float64{0, 1}, w: 1, want: []float64{50, nan}},
		// Slices before the first scrape are gaps.
		{name: "before", t: []float64{1, 2}, num: []float64{0, 4}, starts: []float64{0, 1}, w: 1, want: []float64{nan, 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := counterBins(tt.t, tt.num, tt.den, tt.starts, tt.w)
			if !slices.EqualFunc(got, tt.want, func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }) {
				t.Errorf("counterBins = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestChartsJSON(t *testing.T) {
	b, err := chartsJSON([]chart.Chart{{ID: "a</script>", Title: "x", Series: []chart.Series{{Label: "s", Style: chart.Line, X: []float64{1, 2}, Y: []float64{math.NaN(), 1234567.89}}}}})
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"id":"a\u003c/script\u003e","title":"x","x":{"label":"","log":false,"range":null},"y":{"label":"","log":false,"range":null},"series":[{"label":"s","style":"line","right":false,"color":"","x":[1,2],"y":[null,1234568]}]}]`
	if string(b) != want {
		t.Errorf("chartsJSON =\n%s\nwant\n%s", b, want)
	}
	if _, err := chartsJSON([]chart.Chart{{ID: "bad", Series: []chart.Series{{X: []float64{1}, Y: nil}}}}); err == nil {
		t.Error("a series with columns of different lengths is accepted")
	}
}

// TestTenThousandRequestsPage: a 10,000-request run's page stays under
// 3 MB, its scatters thinned to maxScatter points with the slowest
// request kept, its percentile lines those of all the requests.
func TestTenThousandRequestsPage(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	const n = 10000
	slowest := 0.0
	for i := range n {
		start := int64(1_700_000_000_000_000_000) + int64(i)*10_000_000
		ttft := 20 + float64(i%37)
		if i == 4321 {
			ttft = 900 // one stall
		}
		slowest = max(slowest, ttft)
		lat := ttft + 300
		fmt.Fprintf(&b, `{"metadata":{"request_start_ns":%d,"request_end_ns":%d,"benchmark_phase":"profiling"},"metrics":{"time_to_first_token":{"value":%g,"unit":"ms"},"inter_token_latency":{"value":%g,"unit":"ms"},"request_latency":{"value":%g,"unit":"ms"},"input_sequence_length":{"value":%d,"unit":"tokens"},"output_sequence_length":{"value":30,"unit":"tokens"}},"error":null}`+"\n",
			start, start+int64(lat*1e6), ttft, 10+float64(i%7)/10, lat, 100+i%50)
	}
	if err := os.WriteFile(filepath.Join(dir, artifacts.RecordsFile), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := artifacts.LoadRun(dir, artifacts.DefaultNames, RecordTags...)
	if err != nil {
		t.Fatal(err)
	}
	p := SingleRun(r, "test")
	html, err := Render(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(html) > 3<<20 {
		t.Errorf("the page is %d bytes, more than 3 MB", len(html))
	}
	c := findChart(t, p, "ttft_over_time")
	if got := len(c.Series[0].Y); got > maxScatter || !slices.Contains(c.Series[0].Y, slowest) || !strings.Contains(c.Note, "of 10000 requests drawn") {
		t.Errorf("ttft_over_time: %d points, slowest kept %v, note %q", got, slices.Contains(c.Series[0].Y, slowest), c.Note)
	}
	// Without an export the p99 line is computed from all 10,000 values
	// (numpy's linear method): 900 is the only value above 56, so p99 is
	// within the 20..56 cycle.
	var all []float64
	for _, rec := range r.Records {
		all = append(all, rec.Values["time_to_first_token"])
	}
	slices.Sort(all)
	want := stats.PercentileSorted(all, 99)
	if c.Series[2].Label != "p99" || c.Series[2].Y[0] != want {
		t.Errorf("p99 line %v, want %v over all requests", c.Series[2].Y, want)
	}
	t.Logf("page: %d bytes", len(html))
}

package compare

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// fixtures are real AIPerf artifact folders (10 of their 64 records).
const fixtures = "../../../shared/fixtures/aiperf-exports"

// TestLoadAIPerfFixtures: AIPerf's folders load as single runs, with
// their records and export.
func TestLoadAIPerfFixtures(t *testing.T) {
	for _, c := range []string{"1", "2", "4"} {
		dir := filepath.Join(fixtures, "qwen_concurrency"+c)
		s, err := Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		if s.Multi || len(s.Runs) != 1 {
			t.Fatalf("%s: multi=%v, %d runs; want one single run", dir, s.Multi, len(s.Runs))
		}
		r := s.Runs[0]
		if !r.HasRecords || r.Requests != 10 || r.Errors != 0 || len(r.Values["time_to_first_token"]) != 10 {
			t.Errorf("%s: records %v, %d requests, %d errors, %d TTFTs", dir, r.HasRecords, r.Requests, r.Errors, len(r.Values["time_to_first_token"]))
		}
		if _, ok := r.Values["inter_chunk_latency"]; ok {
			t.Errorf("%s: the inter_chunk_latency lists were read as values", dir)
		}
		if r.Units["time_to_first_token"] != "ms" || r.Export["request_throughput"].Unit != "requests/sec" || r.Export["request_count"].Stats["avg"] != 64 {
			t.Errorf("%s: units %v, export %v", dir, r.Units["time_to_first_token"], r.Export["request_throughput"])
		}
		if _, ok := r.Export["input_config"]; ok {
			t.Errorf("%s: input_config read as a metric", dir)
		}
	}
	// The first fixture's first TTFT, from the file.
	s, _ := Load(filepath.Join(fixtures, "qwen_concurrency1"))
	if got := s.Runs[0].Values["time_to_first_token"][0]; got != 31.742933999999998 {
		t.Errorf("first TTFT %v, want 31.742933999999998", got)
	}
}

// writeRun writes a run folder: records (JSONL lines) and an export.
func writeRun(t *testing.T, dir string, lines []string, export string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if lines != nil {
		if err := os.WriteFile(filepath.Join(dir, RecordsFile), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if export != "" {
		if err := os.WriteFile(filepath.Join(dir, ExportFile), []byte(export), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func record(phase string, ttft float64, failed bool) string {
	if failed {
		// AIPerf keeps the ISL of a failed request; it must not count.
		return `{"metadata":{"benchmark_phase":"` + phase + `"},"metrics":{"input_sequence_length":{"value":999,"unit":"tokens"}},"error":{"code":500,"type":"HTTPError","message":"boom"}}`
	}
	v := strconv.FormatFloat(ttft, 'g', -1, 64)
	return `{"metadata":{"benchmark_phase":"` + phase + `"},"metrics":{"time_to_first_token":{"value":` + v + `,"unit":"ms"},"inter_chunk_latency":{"value":[1,2],"unit":"ms"},"input_sequence_length":{"value":100,"unit":"tokens"}},"error":null}`
}

// export is a profile_export_aiperf.json with a throughput, 2 requests
// and a TTFT, besides entries that are no metrics.
func export(thr, ttft string) string {
	return `{"request_throughput":{"unit":"requests/sec","avg":` + thr + `},"request_count":{"unit":"requests","avg":2},` +
		`"time_to_first_token":{"unit":"ms","avg":` + ttft + `,"p50":` + ttft + `,"p90":1,"p95":1,"p99":1},` +
		`"error_request_count":null,"input_config":{"x":1},"was_cancelled":false,"start_time":"2025-11-07T13:38:54"}`
}

// TestLoadRecords: only profiling records count; a failed one counts as
// a request and an error, and none of its values.
func TestLoadRecords(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, dir, []string{
		record("warmup", 500, false),
		record("profiling", 10, false),
		"",
		record("profiling", 0, true),
		record("profiling", 12, false),
	}, export("1.5", "11"))
	s, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := s.Runs[0]
	if r.Requests != 3 || r.Errors != 1 {
		t.Errorf("%d requests, %d errors; want 3, 1", r.Requests, r.Errors)
	}
	if got := r.Values["time_to_first_token"]; len(got) != 2 || got[0] != 10 || got[1] != 12 {
		t.Errorf("TTFTs %v, want [10 12]", got)
	}
	if got := r.Values["input_sequence_length"]; len(got) != 2 {
		t.Errorf("ISLs %v: a failed request's ISL was counted", got)
	}
}

// TestLoadMultiRun: both multi-run layouts load as multi, runs in order;
// a run folder without artifacts is skipped and named.
func TestLoadMultiRun(t *testing.T) {
	for _, layout := range []string{"profile_runs", ""} {
		dir := t.TempDir()
		runs := filepath.Join(dir, layout)
		writeRun(t, filepath.Join(runs, "run_0002"), nil, export("2", "20"))
		writeRun(t, filepath.Join(runs, "run_0001"), []string{record("profiling", 10, false)}, export("1", "10"))
		if err := os.MkdirAll(filepath.Join(runs, "run_0003"), 0o755); err != nil {
			t.Fatal(err)
		}
		if layout != "" {
			if err := os.MkdirAll(filepath.Join(dir, "aggregate"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		s, err := Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		if !s.Multi || len(s.Runs) != 2 || len(s.Skipped) != 1 || !strings.HasSuffix(s.Skipped[0], "run_0003") {
			t.Fatalf("layout %q: multi=%v runs=%d skipped=%v", layout, s.Multi, len(s.Runs), s.Skipped)
		}
		if s.Runs[0].Export["request_throughput"].Stats["avg"] != 1 || s.Runs[1].Export["request_throughput"].Stats["avg"] != 2 {
			t.Errorf("layout %q: runs out of order", layout)
		}
		// A run without records counts its requests from the export.
		if r := s.Runs[1]; r.HasRecords || r.Requests != 2 || r.Errors != 0 {
			t.Errorf("layout %q: run 2: records %v, %d requests, %d errors", layout, r.HasRecords, r.Requests, r.Errors)
		}
	}
}

// TestLoadErrors: a folder that is no artifact folder says what was
// looked for; a broken file names itself.
func TestLoadErrors(t *testing.T) {
	empty := t.TempDir()
	if err := os.WriteFile(filepath.Join(empty, "run1_profile_export_aiperf.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(empty)
	for _, want := range []string{empty, ExportFile, RecordsFile, "profile_runs/run_0001", "--profile-export-prefix"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("empty folder: error %v, want it to name %q", err, want)
		}
	}
	if _, err := Load(filepath.Join(empty, "missing")); err == nil {
		t.Error("no error for a missing folder")
	}
	broken := t.TempDir()
	writeRun(t, broken, []string{record("profiling", 1, false), `{"metadata":`}, "")
	if _, err := Load(broken); err == nil || !strings.Contains(err.Error(), "line 2") || !strings.Contains(err.Error(), RecordsFile) {
		t.Errorf("broken JSONL: error %v, want its file and line", err)
	}
	failed := t.TempDir()
	if err := os.MkdirAll(filepath.Join(failed, "profile_runs", "run_0001"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(failed); err == nil || !strings.Contains(err.Error(), "every run failed") {
		t.Errorf("multi-run with no artifacts: error %v", err)
	}
}

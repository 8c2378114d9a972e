package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/internal/duckdbtest"
)

// faultCase is one run of profile against the simulated server with a
// fault injected, and what the run must report.
type faultCase struct {
	name string
	args []string
	// exit is the expected exit code.
	exit int
	// failed requests of 6, with this error type, code and message part.
	failed           int
	errType, errPart string
	errCode          int
	// warning is a part of the invalid-result warning on stderr, "" for none.
	warning string
}

func faultCases() []faultCase {
	const invalid = "InvalidInferenceResultError"
	all := func(name string, streaming bool, fault, part, warning string) faultCase {
		args := []string{"--mock-fault", fault}
		if streaming {
			args = append(args, "--streaming")
		}
		return faultCase{name: name, args: args, exit: exitFailed, failed: 6, errType: invalid, errPart: part, warning: warning}
	}
	return []faultCase{
		all("stream/empty body", true, "empty-body", "empty response body", "without generating anything"),
		all("stream/no data lines", true, "no-data", "the stream has no SSE data: lines", "without generating anything"),
		all("stream/empty choices", true, "empty-choices", "every chunk had empty choices or empty content", "without generating anything"),
		all("stream/content null", true, "null-content", "every chunk had empty choices or empty content", "without generating anything"),
		all("stream/html page", true, "html", "HTML page", "does not reach the inference API"),
		all("stream/plain json", true, "ignore-stream", "got a plain JSON body", "server and --streaming disagree"),
		all("stream/gzip", true, "gzip", "gzip-compressed although llmbench asked for no compression", "a proxy between"),
		all("stream/truncated", true, "truncate", "ended without [DONE] and without a finish_reason", "streams are cut"),
		all("whole/empty body", false, "empty-body", "empty response body", "without generating anything"),
		all("whole/no choices", false, "empty-choices", "the response has no choices", "without generating anything"),
		all("whole/content null", false, "null-content", "carry no content (content null or empty)", "without generating anything"),
		all("whole/html page", false, "html", "HTML page", "does not reach the inference API"),
		all("whole/sse stream", false, "force-stream", "got an SSE stream", "server and --streaming disagree"),
		all("whole/gzip", false, "gzip", "gzip-compressed", "a proxy between"),
		{name: "http 500", args: []string{"--mock-error-every", "1"}, exit: exitFailed, failed: 6,
			errType: "InternalServerError", errCode: 500, errPart: "simulated internal server error"},
		{name: "dropped connection", args: []string{"--streaming", "--mock-drop-every", "1"}, exit: exitFailed, failed: 6,
			errType: "ConnectionError", errPart: "unexpected EOF"},
		{name: "garbage chunk", args: []string{"--streaming", "--mock-garbage-every", "1"}, exit: exitFailed, failed: 6,
			errType: "ResponseParseError", errPart: "parse chat response"},
		{name: "hang", args: []string{"--mock-fault", "hang", "--request-timeout-seconds", "0.2"}, exit: exitFailed, failed: 6,
			errType: "TimeoutError", errCode: 408, errPart: "timed out after 0.2 seconds"},
		{name: "wrong path", args: []string{"--endpoint", "/v2/nope"}, exit: exitFailed, failed: 6,
			errType: "NotFound", errCode: 404, errPart: "404 Not Found for POST http://127.0.0.1:"},
		// A minority of failures: the run succeeds and no warning is printed.
		{name: "some truncated", args: []string{"--streaming", "--mock-fault", "truncate:3"}, exit: exitOK, failed: 2,
			errType: invalid, errPart: "ended without [DONE]"},
		{name: "no fault", args: []string{"--streaming"}, exit: exitOK},
	}
}

// TestFaultInjection runs profile against every fault the simulated
// server can inject and checks the error recorded, the counts, that every
// request sent is in the JSONL exactly once, that every export is valid,
// and the exit code. The Parquet files are read back by DuckDB at the end.
func TestFaultInjection(t *testing.T) {
	t.Setenv("AIPERF_SERVER_METRICS_COLLECTION_INTERVAL", "0.05")
	t.Setenv("AIPERF_SERVER_METRICS_COLLECTION_FLUSH_PERIOD", "0")
	var parquets []string
	base := t.TempDir() // outlives the subtests, for the DuckDB pass
	for i, tc := range faultCases() {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(base, fmt.Sprint(i))
			args := append([]string{"llmbench", "profile", "-m", "m", "--mock", "--concurrency", "2", "--request-count", "6", "--osl", "6",
				"--isl", "16", "--random-seed", "3", "--mock-ttft-ms", "1", "--mock-itl-ms", "1", "--artifact-dir", dir, "--ui-type", "none"}, tc.args...)
			var stdout, stderr bytes.Buffer
			code := run(args, &stdout, &stderr)
			if code != tc.exit {
				t.Fatalf("exit %d, want %d\nstderr: %s", code, tc.exit, stderr.String())
			}
			agg, lines := readArtifacts(t, dir)
			checkEveryRequestOnce(t, lines, 6)
			failed := 0
			for _, l := range lines {
				if l.Error == nil {
					continue
				}
				failed++
				e := l.Error
				if e.Type != tc.errType || e.Code != tc.errCode {
					t.Errorf("request %d: error %s %d, want %s %d", l.Metadata.SessionNum, e.Type, e.Code, tc.errType, tc.errCode)
				}
				if _, ok := l.Metrics["error_isl"]; !ok {
					t.Errorf("request %d: no error_isl", l.Metadata.SessionNum)
				}
			}
			if failed != tc.failed {
				t.Fatalf("%d failed requests, want %d", failed, tc.failed)
			}
			if got := metric(t, agg, "request_count").Avg; got != float64(6-tc.failed) {
				t.Errorf("request_count %v, want %d", got, 6-tc.failed)
			}
			if tc.failed > 0 {
				if got := metric(t, agg, "error_request_count").Avg; got != float64(tc.failed) {
					t.Errorf("error_request_count %v, want %d", got, tc.failed)
				}
				checkErrorSummary(t, agg, tc)
			}
			switch {
			case tc.warning == "" && strings.Contains(stderr.String(), "without usable content"):
				t.Errorf("unexpected invalid-result warning:\n%s", stderr.String())
			case tc.warning != "" && (strings.Count(stderr.String(), "without usable content") != 1 || !strings.Contains(stderr.String(), tc.warning)):
				t.Errorf("want one warning naming %q, stderr:\n%s", tc.warning, stderr.String())
			}
			if tc.exit == exitFailed && !strings.Contains(stderr.String(), "every request failed: 6 errors (most often "+tc.errType) {
				t.Errorf("no every-request-failed line:\n%s", stderr.String())
			}
			checkExportsValid(t, dir)
			parquets = append(parquets, filepath.Join(dir, "server_metrics_export.parquet"))
		})
	}
	if t.Failed() {
		return
	}
	// One DuckDB run opens every Parquet file the suite wrote.
	list := make([]string, len(parquets))
	for i, p := range parquets {
		list[i] = "'" + p + "'"
	}
	rows := duckdbtest.Query(t, fmt.Sprintf("SELECT filename, count(*) AS n, count(DISTINCT metric_name) AS metrics FROM read_parquet([%s], filename=true, union_by_name=true) GROUP BY filename", strings.Join(list, ",")))
	if len(rows) != len(parquets) {
		t.Fatalf("DuckDB read %d of %d Parquet files: %v", len(rows), len(parquets), rows)
	}
	for _, r := range rows {
		// DuckDB's JSON rows give BIGINTs as strings.
		if n, _ := strconv.Atoi(fmt.Sprint(r["metrics"])); n < 5 {
			t.Errorf("%v: %v metrics", r["filename"], r["metrics"])
		}
	}
}

func checkEveryRequestOnce(t *testing.T, lines []line, n int) {
	t.Helper()
	if len(lines) != n {
		t.Fatalf("%d JSONL lines, want %d", len(lines), n)
	}
	seen, ids := map[int]bool{}, map[string]bool{}
	for _, l := range lines {
		if seen[l.Metadata.SessionNum] || ids[l.Metadata.XRequestID] {
			t.Fatalf("request %d (%s) recorded twice", l.Metadata.SessionNum, l.Metadata.XRequestID)
		}
		seen[l.Metadata.SessionNum], ids[l.Metadata.XRequestID] = true, true
	}
	for i := range n {
		if !seen[i] {
			t.Fatalf("request %d missing from the JSONL", i)
		}
	}
}

func checkErrorSummary(t *testing.T, agg map[string]json.RawMessage, tc faultCase) {
	t.Helper()
	var summary []struct {
		Details struct {
			Code    int    `json:"code"`
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error_details"`
		Count int `json:"count"`
	}
	if err := json.Unmarshal(agg["error_summary"], &summary); err != nil || len(summary) == 0 {
		t.Fatalf("error_summary %s: %v", agg["error_summary"], err)
	}
	total := 0
	for _, s := range summary {
		total += s.Count
		if s.Details.Type != tc.errType || !strings.Contains(s.Details.Message, tc.errPart) {
			t.Errorf("error_summary entry %+v, want %s containing %q", s.Details, tc.errType, tc.errPart)
		}
		if tc.errType == "InvalidInferenceResultError" && !strings.HasPrefix(s.Details.Message, "Invalid inference result: ") {
			t.Errorf("message %q lacks AIPerf's prefix", s.Details.Message)
		}
	}
	if total != tc.failed {
		t.Errorf("error_summary counts %d errors, want %d", total, tc.failed)
	}
}

// checkExportsValid parses every JSON export and checks that each section
// of each CSV export is rectangular.
func checkExportsValid(t *testing.T, dir string) {
	t.Helper()
	for _, name := range []string{"profile_export_aiperf.json", "inputs.json", "server_metrics_export.json"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !json.Valid(b) {
			t.Errorf("%s: not valid JSON (%v)", name, err)
		}
	}
	for _, name := range []string{"profile_export_aiperf.csv", "server_metrics_export.csv"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		for i, section := range strings.Split(strings.TrimSpace(string(b)), "\n\n") {
			r := csv.NewReader(strings.NewReader(section)) // FieldsPerRecord 0: all rows as wide as the first
			if rows, err := r.ReadAll(); err != nil || len(rows) == 0 {
				t.Errorf("%s section %d is not rectangular CSV: %v\n%s", name, i, err, section)
			}
		}
	}
}

// TestServerRestartMidRun: the simulated server restarts its metrics (a
// reset of every counter) during profiling. Each reset series is warned
// about once, and its total counts across the reset: more than nothing,
// never more than the run generated.
func TestServerRestartMidRun(t *testing.T) {
	t.Setenv("AIPERF_SERVER_METRICS_COLLECTION_INTERVAL", "0.05")
	t.Setenv("AIPERF_SERVER_METRICS_COLLECTION_FLUSH_PERIOD", "0")
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run([]string{"llmbench", "profile", "-m", "m", "--mock", "--streaming", "--concurrency", "2", "--request-count", "24", "--osl", "10",
		"--mock-ttft-ms", "5", "--mock-itl-ms", "5", "--mock-metrics-reset-after", "4",
		"--artifact-dir", dir, "--ui-type", "none"}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if n := strings.Count(stderr.String(), "WARNING  Server metric vllm:generation_tokens{"); n != 1 {
		t.Fatalf("%d reset warnings for vllm:generation_tokens, want 1:\n%s", n, stderr.String())
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "server_metrics_export.json"))
	var doc struct {
		Metrics map[string]struct {
			Series []struct {
				Stats map[string]float64 `json:"stats"`
			} `json:"series"`
		} `json:"metrics"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	total := doc.Metrics["vllm:generation_tokens"].Series[0].Stats["total"]
	if total <= 0 || total > 240 {
		t.Fatalf("generation tokens total %v across the restart, want within (0, 240]", total)
	}
}

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/llmbench/llmbench/internal/duckdbtest"
	"github.com/llmbench/llmbench/internal/mockserver"
)

type metricJSON struct {
	Unit string  `json:"unit"`
	Avg  float64 `json:"avg"`
	P50  float64 `json:"p50"`
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
}

type line struct {
	Metadata struct {
		SessionNum     int    `json:"session_num"`
		XRequestID     string `json:"x_request_id"`
		ConversationID string `json:"conversation_id"`
		Phase          string `json:"benchmark_phase"`
		CreditNs       *int64 `json:"credit_issued_ns"`
		StartNs        int64  `json:"request_start_ns"`
		EndNs          *int64 `json:"request_end_ns"`
	} `json:"metadata"`
	Metrics map[string]struct {
		Value json.RawMessage `json:"value"`
		Unit  string          `json:"unit"`
	} `json:"metrics"`
	Error *struct {
		Code    int    `json:"code"`
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

func readArtifacts(t *testing.T, dir string) (map[string]json.RawMessage, []line) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "profile_export_aiperf.json"))
	if err != nil {
		t.Fatal(err)
	}
	var agg map[string]json.RawMessage
	if err := json.Unmarshal(raw, &agg); err != nil {
		t.Fatalf("profile_export_aiperf.json: %v", err)
	}
	f, err := os.Open(filepath.Join(dir, "profile_export.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []line
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("jsonl line %d: %v", len(lines), err)
		}
		lines = append(lines, l)
	}
	return agg, lines
}

func metric(t *testing.T, agg map[string]json.RawMessage, tag string) metricJSON {
	t.Helper()
	raw, ok := agg[tag]
	if !ok {
		t.Fatalf("profile_export_aiperf.json has no %s", tag)
	}
	var m metricJSON
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s: %v", tag, err)
	}
	return m
}

// checkClientTiming: every record says when it was due, no later than it
// went out; the lateness is summarised; latencies from the due instant
// exist only in rate mode, where they are never below the usual ones; the
// client's own load is reported.
func checkClientTiming(t *testing.T, agg map[string]json.RawMessage, lines []line, rateMode bool) {
	t.Helper()
	for _, l := range lines {
		if c := l.Metadata.CreditNs; c == nil || *c > l.Metadata.StartNs || l.Metadata.StartNs-*c > int64(time.Second) {
			t.Fatalf("request %d: due %v, sent %d", l.Metadata.SessionNum, l.Metadata.CreditNs, l.Metadata.StartNs)
		}
	}
	if m := metric(t, agg, "schedule_lateness"); m.Unit != "ms" || m.Min < 0 || m.Max > 1000 {
		t.Fatalf("schedule_lateness %+v", m)
	}
	_, hasTTFT := agg["time_to_first_token_from_schedule"]
	_, hasLatency := agg["request_latency_from_schedule"]
	if hasTTFT != rateMode || hasLatency != rateMode {
		t.Fatalf("latencies from the schedule present: %v %v, rate mode %v", hasTTFT, hasLatency, rateMode)
	}
	if rateMode {
		if from, usual := metric(t, agg, "time_to_first_token_from_schedule"), metric(t, agg, "time_to_first_token"); from.Min < usual.Min || from.Avg < usual.Avg {
			t.Fatalf("TTFT from the schedule %+v below the usual %+v", from, usual)
		}
	}
	var load struct {
		Cores     int      `json:"cores"`
		CPU       *float64 `json:"cpu_utilization"`
		P99       *float64 `json:"timer_delay_p99_ms"`
		Samples   int      `json:"samples"`
		Saturated *bool    `json:"saturated"`
	}
	if err := json.Unmarshal(agg["client_load"], &load); err != nil || load.Cores < 1 || load.CPU == nil || *load.CPU <= 0 || load.P99 == nil || load.Samples < 1 || load.Saturated == nil {
		t.Fatalf("client_load %s (%v)", agg["client_load"], err)
	}
}

// TestProfileRateModeTiming: in rate mode, requests carry their scheduled
// instants and latencies are also measured from them.
func TestProfileRateModeTiming(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run([]string{"llmbench", "profile", "--model", "m", "--mock", "--endpoint-type", "chat", "--streaming",
		"--request-rate", "200", "--request-count", "30", "--output-tokens-mean", "8", "--random-seed", "3",
		"--mock-ttft-ms", "5", "--mock-itl-ms", "1", "--artifact-dir", dir, "--ui-type", "none", "--no-server-metrics"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\nstderr: %s", code, stderr.String())
	}
	agg, lines := readArtifacts(t, dir)
	if len(lines) != 30 {
		t.Fatalf("%d lines", len(lines))
	}
	checkClientTiming(t, agg, lines, true)
}

func TestProfileEndToEnd(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run([]string{"llmbench", "profile", "--model", "e2e/model", "--mock", "--endpoint-type", "chat", "--streaming",
		"--concurrency", "4", "--request-count", "40", "--warmup-request-count", "4",
		"--synthetic-input-tokens-mean", "32", "--output-tokens-mean", "16", "--random-seed", "1", "--num-dataset-entries", "10",
		"--mock-ttft-ms", "20", "--mock-itl-ms", "2", "--mock-prefix-caching=false", "--api-key", "sk-e2e-secret", "-H", "Authorization: Bearer sk-e2e-secret",
		"--artifact-dir", dir, "--ui-type", "simple"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\nstderr: %s", code, stderr.String())
	}
	agg, lines := readArtifacts(t, dir)

	// Every request sent is in the JSONL exactly once: 4 warm-up + 40.
	if len(lines) != 44 {
		t.Fatalf("%d JSONL lines, want 44", len(lines))
	}
	seen := map[int]bool{}
	ids := map[string]bool{}
	phases := map[string]int{}
	for _, l := range lines {
		seen[l.Metadata.SessionNum] = true
		ids[l.Metadata.XRequestID] = true
		phases[l.Metadata.Phase]++
		if l.Error != nil {
			t.Fatalf("request %d failed: %+v", l.Metadata.SessionNum, l.Error)
		}
		if l.Metadata.EndNs == nil || *l.Metadata.EndNs <= l.Metadata.StartNs {
			t.Fatalf("request %d: end %v not after start %d", l.Metadata.SessionNum, l.Metadata.EndNs, l.Metadata.StartNs)
		}
		if l.Metrics["output_sequence_length"].Unit != "tokens" || string(l.Metrics["output_sequence_length"].Value) != "16" {
			t.Fatalf("request %d: OSL %s", l.Metadata.SessionNum, l.Metrics["output_sequence_length"].Value)
		}
	}
	for i := range 44 {
		if !seen[i] {
			t.Fatalf("session_num %d missing", i)
		}
	}
	if len(ids) != 44 || phases["warmup"] != 4 || phases["profiling"] != 40 {
		t.Fatalf("%d distinct request ids, phases %v", len(ids), phases)
	}

	// Aggregates cover the 40 profiling requests only.
	if m := metric(t, agg, "request_count"); m.Avg != 40 || m.Unit != "requests" {
		t.Fatalf("request_count %+v", m)
	}
	if m := metric(t, agg, "input_sequence_length"); m.Min != 32 || m.Max != 32 {
		t.Fatalf("ISL %+v, want exactly 32", m)
	}
	if m := metric(t, agg, "output_sequence_length"); m.Min != 16 || m.Max != 16 {
		t.Fatalf("OSL %+v, want exactly 16", m)
	}
	if m := metric(t, agg, "time_to_first_token"); m.Unit != "ms" || m.Avg < 20 || m.Avg > 30 {
		t.Fatalf("TTFT %+v, want about 20 ms", m)
	}
	if m := metric(t, agg, "inter_token_latency"); m.Avg < 1.5 || m.Avg > 3 {
		t.Fatalf("ITL %+v, want about 2 ms", m)
	}
	if m := metric(t, agg, "total_osl"); m.Avg != 640 {
		t.Fatalf("total_osl %+v, want 40*16", m)
	}
	// benchmark_duration: from the first profiling request's start to the
	// last one's last response (start + request_latency).
	dur := metric(t, agg, "benchmark_duration").Avg
	firstStart, lastEnd := int64(math.MaxInt64), 0.0
	for _, l := range lines {
		if l.Metadata.Phase == "profiling" {
			var latMs float64
			json.Unmarshal(l.Metrics["request_latency"].Value, &latMs)
			firstStart = min(firstStart, l.Metadata.StartNs)
			lastEnd = max(lastEnd, float64(l.Metadata.StartNs)+latMs*1e6)
		}
	}
	if want := (lastEnd - float64(firstStart)) / 1e9; math.Abs(dur-want) > 1e-6 {
		t.Fatalf("benchmark_duration %v, want (last response - first start)/1e9 = %v", dur, want)
	}
	if got, want := metric(t, agg, "request_throughput").Avg, 40/dur; math.Abs(got-want) > 1e-9*want {
		t.Fatalf("request_throughput %v, want %v", got, want)
	}
	if got, want := metric(t, agg, "output_token_throughput").Avg, 640/dur; math.Abs(got-want) > 1e-9*want {
		t.Fatalf("output_token_throughput %v, want %v", got, want)
	}

	checkClientTiming(t, agg, lines, false)

	csv, _ := os.ReadFile(filepath.Join(dir, "profile_export_aiperf.csv"))
	if !bytes.HasPrefix(csv, []byte("Metric,avg,min,max,sum,p1,p5,p10,p25,p50,p75,p90,p95,p99,std\n")) ||
		!bytes.Contains(csv, []byte("\nRequest Count,40.00\n")) {
		t.Fatalf("csv:\n%s", csv)
	}
	var inputs struct {
		Data []struct {
			SessionID string            `json:"session_id"`
			Payloads  []json.RawMessage `json:"payloads"`
		} `json:"data"`
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "inputs.json"))
	if err := json.Unmarshal(raw, &inputs); err != nil || len(inputs.Data) != 10 {
		t.Fatalf("inputs.json: %v, %d sessions", err, len(inputs.Data))
	}
	var payload struct {
		Model     string `json:"model"`
		MaxTokens int    `json:"max_completion_tokens"`
		Stream    bool   `json:"stream"`
	}
	var compact bytes.Buffer
	_ = json.Compact(&compact, inputs.Data[0].Payloads[0])
	first := compact.Bytes()
	if err := json.Unmarshal(first, &payload); err != nil || payload.Model != "e2e/model" || payload.MaxTokens != 16 || !payload.Stream {
		t.Fatalf("first payload %+v (%v)", payload, err)
	}
	// AIPerf's payload: chat's limit is max_completion_tokens; a stream asks
	// for its usage chunk, where vLLM puts its per-request metrics
	// (--server-timings auto; off sends AIPerf's payload exactly, which asks
	// for usage only with --use-server-token-count).
	if !bytes.HasPrefix(first, []byte(`{"messages":[{"role":"user","content":`)) ||
		!bytes.HasSuffix(first, []byte(`"model":"e2e/model","stream":true,"max_completion_tokens":16,"stream_options":{"include_usage":true}}`)) {
		t.Fatalf("first payload %s", first)
	}
	// Requests cycle through the dataset: request i uses entry i mod 10.
	for _, l := range lines {
		if want := inputs.Data[l.Metadata.SessionNum%10].SessionID; l.Metadata.ConversationID != want {
			t.Fatalf("request %d: conversation %s, want inputs.json session %s", l.Metadata.SessionNum, l.Metadata.ConversationID, want)
		}
	}
	// No secret anywhere: artifacts (the report among them), stdout, stderr.
	if _, err := os.Stat(filepath.Join(dir, "report.html")); err != nil {
		t.Fatalf("no report.html: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		if bytes.Contains(b, []byte("sk-e2e-secret")) {
			t.Fatalf("%s contains the API key", e.Name())
		}
	}
	if strings.Contains(stdout.String()+stderr.String(), "sk-e2e-secret") {
		t.Fatal("console output contains the API key")
	}
	if !strings.Contains(stdout.String(), "Time to First Token (ms)") || !strings.Contains(stdout.String(), "profile_export.jsonl") {
		t.Fatalf("console table missing:\n%s", stdout.String())
	}
}

func TestProfileErrorsAccounted(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	// 35 requests: every 5th gets a 500 (7), every 7th not already failed has
	// its connection dropped (7, 14, 21, 28: 4). 24 succeed.
	code := run([]string{"llmbench", "profile", "-m", "m", "--mock", "--concurrency", "3", "--request-count", "35", "--osl", "8",
		"--mock-ttft-ms", "0", "--mock-itl-ms", "0", "--mock-error-every", "5", "--mock-drop-every", "7",
		"--artifact-dir", dir, "--ui-type", "none"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	agg, lines := readArtifacts(t, dir)
	if len(lines) != 35 {
		t.Fatalf("%d lines, want 35", len(lines))
	}
	types := map[string]int{}
	for _, l := range lines {
		if l.Error != nil {
			types[l.Error.Type]++
			if _, ok := l.Metrics["error_isl"]; !ok || len(l.Metrics) != 1 {
				t.Fatalf("failed request %d has metrics %v, want error_isl only", l.Metadata.SessionNum, l.Metrics)
			}
		}
	}
	if types["InternalServerError"] != 7 || types["ConnectionError"] != 4 || len(types) != 2 {
		t.Fatalf("error types %v", types)
	}
	if m := metric(t, agg, "request_count"); m.Avg != 24 {
		t.Fatalf("request_count %v, want 24", m.Avg)
	}
	if m := metric(t, agg, "error_request_count"); m.Avg != 11 {
		t.Fatalf("error_request_count %v, want 11", m.Avg)
	}
	var summary []struct {
		Details struct {
			Code int    `json:"code"`
			Type string `json:"type"`
		} `json:"error_details"`
		Count int `json:"count"`
	}
	if err := json.Unmarshal(agg["error_summary"], &summary); err != nil || len(summary) != 2 || summary[0].Count != 7 || summary[0].Details.Code != 500 || summary[1].Count != 4 {
		t.Fatalf("error_summary %s", agg["error_summary"])
	}
	if stdout.Len() != 0 {
		t.Fatalf("--ui-type none printed:\n%s", stdout.String())
	}
}

func TestUsageErrors(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"llmbench", "profile"}, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "--model is required") {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	stderr.Reset()
	if code := run([]string{"llmbench", "frobnicate"}, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "unknown command") {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
}

// TestProfileServerMetricsTwoEndpoints runs profile against the in-process
// vLLM-like server, with a second, SGLang-like server added through
// --server-metrics, and reads every server metrics export back.
func TestProfileServerMetricsTwoEndpoints(t *testing.T) {
	cfg := mockserver.DefaultConfig()
	cfg.MetricsProfile = "sglang"
	_, sgURL := serveMock(t, cfg)
	t.Setenv("AIPERF_SERVER_METRICS_COLLECTION_INTERVAL", "0.05")
	t.Setenv("AIPERF_SERVER_METRICS_COLLECTION_FLUSH_PERIOD", "0.2")

	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run([]string{"llmbench", "profile", "-m", "m", "--mock", "--streaming", "--concurrency", "4", "--request-count", "24",
		"--warmup-request-count", "4", "--osl", "10", "--mock-ttft-ms", "10", "--mock-itl-ms", "3",
		"--server-metrics", strings.TrimPrefix(sgURL, "http://"), "--server-metrics-formats", "json", "csv", "jsonl", "parquet",
		"--slice-duration", "0.1", "--profile-export-prefix", "run1.json", "--artifact-dir", dir, "--ui-type", "none"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	checkClientTimeslices(t, filepath.Join(dir, "run1_timeslices.json"), 24, 100_000_000)
	for _, f := range []string{"run1.jsonl", "run1.json", "run1.csv", "run1_timeslices.csv", "run1_server_metrics.json", "run1_server_metrics.csv", "run1_server_metrics.jsonl", "run1_server_metrics.parquet"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Fatalf("%s: %v", f, err)
		}
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "run1_server_metrics.json"))
	var doc struct {
		BenchmarkID string `json:"benchmark_id"`
		Summary     struct {
			Configured []string                  `json:"endpoints_configured"`
			Successful []string                  `json:"endpoints_successful"`
			Info       map[string]map[string]any `json:"endpoint_info"`
		} `json:"summary"`
		Metrics map[string]struct {
			Type   string `json:"type"`
			Unit   string `json:"unit"`
			Series []struct {
				EndpointURL string             `json:"endpoint_url"`
				Stats       map[string]float64 `json:"stats"`
			} `json:"series"`
		} `json:"metrics"`
		InputConfig map[string]any `json:"input_config"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Summary.Configured) != 2 || len(doc.Summary.Successful) != 2 || len(doc.Summary.Info) != 2 {
		t.Fatalf("summary %+v", doc.Summary)
	}
	var agg map[string]json.RawMessage
	raw, _ = os.ReadFile(filepath.Join(dir, "run1.json"))
	json.Unmarshal(raw, &agg)
	var id string
	json.Unmarshal(agg["benchmark_id"], &id)
	if doc.BenchmarkID == "" || doc.BenchmarkID != id {
		t.Fatalf("benchmark ids %q and %q differ", doc.BenchmarkID, id)
	}
	// Warm-up excluded: the vLLM counters count exactly the 24 profiling
	// requests, 10 tokens each. The SGLang server served nothing.
	succ := doc.Metrics["vllm:request_success"]
	if len(succ.Series) != 1 || succ.Series[0].Stats["total"] != 24 {
		t.Fatalf("vllm:request_success %+v", succ)
	}
	if gen := doc.Metrics["vllm:generation_tokens"].Series[0].Stats["total"]; gen != 240 {
		t.Fatalf("vllm:generation_tokens total %v, want 240", gen)
	}
	if h := doc.Metrics["vllm:time_to_first_token_seconds"].Series[0].Stats; h["count"] != 24 || h["avg"] < 0.01 || h["p50_estimate"] <= 0 {
		t.Fatalf("TTFT histogram %v", h)
	}
	sgl := doc.Metrics["sglang:generation_tokens"]
	if sgl.Type != "counter" || len(sgl.Series) != 1 || sgl.Series[0].EndpointURL != sgURL+"/metrics" || sgl.Series[0].Stats["total"] != 0 {
		t.Fatalf("sglang:generation_tokens %+v", sgl)
	}
	if _, ok := doc.Metrics["vllm:num_requests_running"]; !ok {
		t.Fatal("no vllm gauge")
	}
	// Units come from the engines' HELP text first: vLLM's KV-cache gauge is
	// a 0..1 ratio ("1 means 100 percent usage"), not a percent.
	for name, unit := range map[string]string{"vllm:kv_cache_usage_perc": "ratio", "vllm:time_to_first_token_seconds": "seconds",
		"vllm:generation_tokens": "tokens", "vllm:request_success": "requests", "sglang:token_usage": "ratio"} {
		if got := doc.Metrics[name].Unit; got != unit {
			t.Errorf("%s unit %q, want %q", name, got, unit)
		}
	}
	// JSONL: every scrape, warm-up included, from both endpoints.
	raw, _ = os.ReadFile(filepath.Join(dir, "run1_server_metrics.jsonl"))
	perEndpoint := map[string]int{}
	for _, line := range bytes.Split(bytes.TrimSpace(raw), []byte("\n")) {
		var l struct {
			EndpointURL string                     `json:"endpoint_url"`
			Metrics     map[string]json.RawMessage `json:"metrics"`
		}
		if err := json.Unmarshal(line, &l); err != nil {
			t.Fatalf("jsonl line: %v", err)
		}
		perEndpoint[l.EndpointURL]++
	}
	for _, ep := range doc.Summary.Successful {
		if fetches := doc.Summary.Info[ep]["total_fetches"].(float64); perEndpoint[ep] != int(fetches) || fetches < 3 {
			t.Fatalf("%s: %d JSONL lines, %v fetches", ep, perEndpoint[ep], fetches)
		}
	}
	csv, _ := os.ReadFile(filepath.Join(dir, "run1_server_metrics.csv"))
	// AIPerf's layout: Endpoint (host:port), Type, Metric, Unit, statistics.
	if !bytes.Contains(csv, []byte("\n"+strings.TrimPrefix(sgURL, "http://")+",counter,sglang:generation_tokens,tokens,0.0000,0.0000,")) {
		t.Fatalf("csv lacks the sglang counter:\n%s", csv)
	}
	// The Parquet gauge rows are the samples the JSON statistics used.
	running := doc.Metrics["vllm:num_requests_running"].Series[0].Stats["avg"]
	rows := duckdbtest.Query(t, "SELECT AVG(value) AS a FROM read_parquet('"+filepath.Join(dir, "run1_server_metrics.parquet")+"') WHERE metric_name = 'vllm:num_requests_running'")
	if got, _ := strconv.ParseFloat(fmt.Sprint(rows[0]["a"]), 64); math.Abs(got-running) > 1e-9*math.Max(1, running) {
		t.Fatalf("DuckDB AVG %v, JSON stats.avg %v", rows[0]["a"], running)
	}
}

func TestNoServerMetrics(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := run([]string{"llmbench", "profile", "-m", "m", "--mock", "--request-count", "2", "--no-server-metrics", "--mock-ttft-ms", "0", "--mock-itl-ms", "0",
		"--artifact-dir", dir, "--ui-type", "none"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "server_metrics*"))
	if len(matches) != 0 || stderr.Len() != 0 {
		t.Fatalf("--no-server-metrics wrote %v, logged %q", matches, stderr.String())
	}
}

// checkClientTimeslices: consecutive slices of width ns, complete but for
// the last, whose request counts add up to the run's.
func checkClientTimeslices(t *testing.T, path string, requests int, width int64) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Timeslices []struct {
			StartNs  int64       `json:"start_ns"`
			EndNs    int64       `json:"end_ns"`
			Complete bool        `json:"is_complete"`
			Count    *metricJSON `json:"request_count"`
		} `json:"timeslices"`
		InputConfig map[string]any `json:"input_config"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil || len(doc.Timeslices) == 0 || doc.InputConfig == nil {
		t.Fatalf("%s: %v, %d slices", path, err, len(doc.Timeslices))
	}
	total := 0.0
	for i, s := range doc.Timeslices {
		if s.EndNs-s.StartNs != width || i > 0 && s.StartNs != doc.Timeslices[i-1].EndNs || s.Count == nil {
			t.Fatalf("slice %d: %+v", i, s)
		}
		if i < len(doc.Timeslices)-1 && !s.Complete {
			t.Fatalf("slice %d of %d incomplete", i, len(doc.Timeslices))
		}
		total += s.Count.Avg
	}
	if total != float64(requests) {
		t.Fatalf("slices hold %v requests, want %d", total, requests)
	}
}

package export

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmbench/llmbench/internal/goldentest"

	"github.com/llmbench/llmbench/internal/metrics"
	"github.com/llmbench/llmbench/internal/record"
	"github.com/llmbench/llmbench/internal/stats"
)

// golden compares got with testdata/name (go test -update rewrites it).
func golden(t *testing.T, name string, got []byte) { t.Helper(); goldentest.Check(t, name, got) }

func sampleResults() metrics.Results {
	lat := stats.Summarize([]float64{300, 500})
	// With the one error, [300 500 +Inf] by numpy's nearest index
	// 3q + (1 - q) - 1: p1…p25 (p25: 0.5, to even) 300, p50 500, the rest
	// +Inf; avg, max and sum +Inf, no std: all left out of the JSON.
	inf, nan := math.Inf(1), math.NaN()
	adj := stats.Summary{Count: 3, Sum: inf, Avg: inf, Min: 300, Max: inf, Std: nan,
		P: [9]float64{300, 300, 300, 300, 500, inf, inf, inf, inf}}
	// A curve's statistics: avg, min, max, p50…p99, std; no count or sum.
	conc := stats.Summary{Sum: nan, Avg: 1.7, Min: 1, Max: 2, Std: 0.458257569495584,
		P: [9]float64{nan, nan, nan, nan, 2, nan, 2, 2, 2}}
	credit := stats.Summarize([]float64{0, 4})
	effective := stats.Summarize([]float64{304, 509})
	ts := int64(1_763_700_000_123_456_789)
	end := ts + 1_500_000_000
	return metrics.Results{
		Metrics: []metrics.Result{
			{Def: metrics.RecordDefs[metrics.RequestLatency], Dist: &lat},
			{Def: metrics.DefRequestCount, Value: 2},
			{Def: metrics.DefErrorRequestCount, Value: 1},
			{Def: metrics.DefMinRequestTimestamp, Value: float64(ts), Exact: &ts},
			{Def: metrics.DefMaxResponseTimestamp, Value: float64(end), Exact: &end},
			{Def: metrics.DefBenchmarkDuration, Value: 1.5},
			{Def: metrics.DefRequestThroughput, Value: 2 / 1.5},
			{Def: metrics.AdjustedDef(metrics.RequestLatency), Dist: &adj},
			{Def: metrics.DefEffectiveConcurrency, Dist: &conc},
			{Def: metrics.DefCreditToStartLatency, Dist: &credit},
			{Def: metrics.DefEffectiveLatency, Dist: &effective},
		},
		Errors:       []metrics.ErrorCount{{Error: record.Error{Code: 500, Type: "InternalServerError", Message: `engine "0" died`}, Count: 1}},
		RequestCount: 2, ErrorCount: 1, DurationSec: 1.5,
	}
}

func TestProfileJSONGolden(t *testing.T) {
	start := time.Date(2026, 11, 21, 12, 0, 0, 123456000, time.UTC)
	seed := int64(7)
	s := Summary{
		Version: "0.1.0", BenchmarkID: "00000000-0000-4000-8000-000000000000",
		Results: sampleResults(), Start: start, End: start.Add(1500 * time.Millisecond),
		InputConfig: map[string]any{"endpoint": map[string]any{"model_names": []string{"m"}, "api_key": "<redacted>"}},
		RunInfo:     RunInfo{BenchmarkID: "00000000-0000-4000-8000-000000000000", RandomSeed: &seed, CLICommand: "llmbench profile -m m"},
	}
	got, err := ProfileJSON(s)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "profile_export_aiperf.json", got)

	var parsed map[string]any
	if err := json.Unmarshal(got, &parsed); err != nil {
		t.Fatalf("not valid JSON: %v", err)
	}
	lat := parsed["request_latency"].(map[string]any)
	// p90 of {300, 500}: 300 + 0.9*200 = 480; population std 100; sum 800.
	if lat["p90"] != 480.0 || lat["std"] != 100.0 || lat["unit"] != "ms" || lat["count"] != 2.0 || lat["sum"] != 800.0 {
		t.Fatalf("request_latency %v", lat)
	}
	// Non-finite statistics are left out, as AIPerf's exporter drops them.
	if adj := parsed["adj_request_latency"].(map[string]any); len(adj) != 8 || adj["p50"] != 500.0 || adj["min"] != 300.0 || adj["count"] != 3.0 {
		t.Fatalf("adj_request_latency %v", adj)
	}
	if conc := parsed["effective_concurrency"].(map[string]any); len(conc) != 9 || conc["avg"] != 1.7 || conc["count"] != nil {
		t.Fatalf("effective_concurrency %v", conc)
	}
	// AIPerf's newest: the timestamps are internal, and nothing is null.
	if _, ok := parsed["min_request_timestamp"]; ok || bytes.Contains(got, []byte("null")) {
		t.Fatalf("internal metrics or nulls written:\n%s", got)
	}
	// Key order (C1): identity, declared metrics, metadata, other metrics.
	var keys []string
	dec := json.NewDecoder(bytes.NewReader(got))
	dec.Token()
	for dec.More() {
		k, _ := dec.Token()
		keys = append(keys, k.(string))
		var skip json.RawMessage
		dec.Decode(&skip)
	}
	want := []string{"schema_version", "aiperf_version", "benchmark_id", "request_throughput", "request_latency", "request_count",
		"benchmark_duration", "error_request_count", "input_config", "run_info", "was_cancelled", "error_summary",
		"start_time", "end_time", "adj_request_latency", "effective_concurrency", "credit_to_start_latency", "effective_latency",
		"llmbench_version"}
	if !slices.Equal(keys, want) {
		t.Fatalf("keys %v\nwant %v", keys, want)
	}
}

func TestProfileCSVGolden(t *testing.T) {
	golden(t, "profile_export_aiperf.csv", ProfileCSV(sampleResults()))
}

func TestRecordWriterGolden(t *testing.T) {
	dir := t.TempDir()
	clock := record.ClockAt(1_763_700_000_000_000_000)
	rw, err := NewRecordWriter(dir, ProfileFiles("").Records, clock)
	if err != nil {
		t.Fatal(err)
	}
	ok := &record.Record{SessionNum: 0, ConversationID: "conv-a", CorrelationID: "corr-a", XRequestID: "req-a", Phase: record.PhaseProfiling,
		Streaming: true, CreditIssuedPerf: 400, StartPerf: 1000, EndPerf: 301_000_000, Trace: record.HTTPTrace{FirstByte: 2_000_000}}
	var v metrics.Values
	for i := range v.V {
		v.V[i] = math.NaN()
	}
	v.V[metrics.RequestLatency] = 300.5
	v.V[metrics.OutputSequenceLength] = 4
	v.ICL = []float64{50, 60.25}
	if err := rw.Write(ok, &v); err != nil {
		t.Fatal(err)
	}
	bad := &record.Record{SessionNum: 1, ConversationID: "conv-b", XRequestID: "req-b", Phase: record.PhaseWarmup,
		StartPerf: 5000, EndPerf: 9000, Cancelled: true, CancelledPerf: 9000,
		Err: &record.Error{Code: 499, Type: "RequestCancellationError", Message: "request was cancelled before it completed"}}
	var ev metrics.Values
	for i := range ev.V {
		ev.V[i] = math.NaN()
	}
	ev.V[metrics.ErrorISL] = 550
	if err := rw.Write(bad, &ev); err != nil {
		t.Fatal(err)
	}
	if err := rw.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "profile_export.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "profile_export.jsonl", got)
	for i, line := range bytes.Split(bytes.TrimSpace(got), []byte("\n")) {
		if !json.Valid(line) {
			t.Fatalf("line %d is not valid JSON: %s", i, line)
		}
	}
}

// TestRecordsOnDiskWithinOneSecond: a finished record reaches the file
// without Close, so a SIGKILL loses at most the last second; Flush puts it
// there at once.
func TestRecordsOnDiskWithinOneSecond(t *testing.T) {
	dir := t.TempDir()
	clock := record.NewClock()
	rw, err := NewRecordWriter(dir, "r.jsonl", clock)
	if err != nil {
		t.Fatal(err)
	}
	defer rw.Close()
	var v metrics.Values
	for i := range v.V {
		v.V[i] = math.NaN()
	}
	lines := func() int {
		b, _ := os.ReadFile(filepath.Join(dir, "r.jsonl"))
		return bytes.Count(b, []byte("\n"))
	}
	rw.Write(&record.Record{SessionNum: 0, StartPerf: 1, EndPerf: 2}, &v)
	written := time.Now()
	// The flusher runs every FlushInterval (0.25 s); the deadline allows a
	// loaded machine's scheduling delay on top, within the promised second.
	for lines() < 1 {
		if time.Since(written) > time.Second {
			t.Fatalf("record not on disk %v after it was written", time.Since(written))
		}
		time.Sleep(10 * time.Millisecond)
	}
	rw.Write(&record.Record{SessionNum: 1, StartPerf: 1, EndPerf: 2}, &v)
	if err := rw.Flush(); err != nil || lines() != 2 {
		t.Fatalf("after Flush: %d lines on disk (%v), want 2", lines(), err)
	}
}

func TestInputsJSON(t *testing.T) {
	got, err := InputsJSON([]InputSession{{SessionID: "s1", Payloads: []json.RawMessage{json.RawMessage(`{"model":"m"}`)}}})
	if err != nil {
		t.Fatal(err)
	}
	var parsed struct {
		Data []struct {
			SessionID string           `json:"session_id"`
			Payloads  []map[string]any `json:"payloads"`
		} `json:"data"`
	}
	if err := json.Unmarshal(got, &parsed); err != nil || len(parsed.Data) != 1 || parsed.Data[0].SessionID != "s1" || parsed.Data[0].Payloads[0]["model"] != "m" {
		t.Fatalf("inputs.json %s (%v)", got, err)
	}
}

// TestInputsJSONMatchesMarshalIndent: written in one pass, inputs.json is
// byte for byte what json.MarshalIndent makes of small payloads; a large
// one goes out compact, and reads back the same.
func TestInputsJSONMatchesMarshalIndent(t *testing.T) {
	small := []InputSession{
		{SessionID: "s1", Payloads: []json.RawMessage{json.RawMessage(`{"messages":[{"role":"user","content":"hi"}],"model":"m","stream":true}`), json.RawMessage(`{"a":[1,2,{"b":null}],"c":"d\"e"}`)}},
		{SessionID: "s\"2", Payloads: []json.RawMessage{}},
		{SessionID: "s3", Payloads: []json.RawMessage{json.RawMessage(`{}`)}},
	}
	got, err := InputsJSON(small)
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.MarshalIndent(struct {
		Data []InputSession `json:"data"`
	}{small}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want)+"\n" {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	big := json.RawMessage(`{"image":"` + strings.Repeat("QUJD", 40<<10) + `","model":"m"}`)
	got, err = InputsJSON([]InputSession{{SessionID: "s", Payloads: []json.RawMessage{big}}})
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Data []InputSession `json:"data"`
	}
	if err := json.Unmarshal(got, &back); err != nil || string(back.Data[0].Payloads[0]) != string(big) {
		t.Fatalf("the large payload does not read back as sent (%v)", err)
	}
}

func TestWriteFileAtomic(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nested", "dir")
	if err := WriteFile(dir, "a.txt", []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(dir, "a.txt", []byte("two")); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	b, _ := os.ReadFile(filepath.Join(dir, "a.txt"))
	if len(entries) != 1 || string(b) != "two" {
		t.Fatalf("dir has %d entries, content %q; want only a.txt = two", len(entries), b)
	}
}

// FuzzAppendJSONString: the fast string writer writes what encoding/json
// writes, for any string (control characters, quotes, HTML characters,
// invalid UTF-8, U+2028).
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "chatcmpl-1f3a", `say "hi"\`, "a\x01b", "<&>", "caf\u00e9", "\xff", "\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := appendJSONString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Fatalf("%q: got %s, want %s", s, got[1:], want)
		}
	})
}

// TestCSVLabels: AIPerf's CSV names (aiperf-implementation-notes C2), which
// scripts index with .loc[...].
func TestCSVLabels(t *testing.T) {
	for _, tc := range []struct {
		def  metrics.Def
		want string
	}{
		{metrics.DefRequestCount, "Request Count"},
		{metrics.DefUsageDiscrepancy, "Usage Discrepancy Count"},
		{metrics.RecordDefs[metrics.HTTPReqWaiting], "HTTP Waiting (TTFB) (ms)"},
		{metrics.RecordDefs[metrics.HTTPReqDuration], "HTTP Duration (excl. conn) (ms)"},
		{metrics.RecordDefs[metrics.UsagePromptTokensDiffPct], "Usage Prompt Diff % (%)"},
		{metrics.RecordDefs[metrics.UsageCompletionTokensDiffPct], "Usage Completion Diff % (%)"},
		{metrics.RecordDefs[metrics.UsageReasoningTokensDiffPct], "Usage Reasoning Diff % (%)"},
		{metrics.RecordDefs[metrics.HTTPReqConnectionReused], "HTTP Connection Reused (ratio)"},
		{metrics.RecordDefs[metrics.HTTPReqDataSent], "HTTP Data Sent (KB)"},
		{metrics.RecordDefs[metrics.HTTPReqChunksReceived], "HTTP Chunks Received"},
		{metrics.RecordDefs[metrics.RequestLatency], "Request Latency (ms)"},
	} {
		if got := CSVLabel(tc.def); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.def.Tag, got, tc.want)
		}
	}
}

// TestTimeslicesGolden: AIPerf's timeslice shapes; the CSV's rows are
// checked against the JSON's values by hand in the golden files.
func TestTimeslicesGolden(t *testing.T) {
	lat := stats.Summarize([]float64{10, 30})
	slices := []Timeslice{
		{StartNs: 1_000_000_000, EndNs: 2_000_000_000, Complete: true, Results: metrics.Results{Metrics: []metrics.Result{
			{Def: metrics.RecordDefs[metrics.RequestLatency], Dist: &lat},
			{Def: metrics.DefRequestCount, Value: 2},
		}}},
		{StartNs: 2_000_000_000, EndNs: 3_000_000_000, Results: metrics.Results{Metrics: []metrics.Result{
			{Def: metrics.DefRequestCount, Value: 0},
		}}},
	}
	j, err := TimeslicesJSON(slices, map[string]any{"loadgen": map[string]any{"concurrency": 2}})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "profile_export_aiperf_timeslices.json", j)
	var doc struct {
		Timeslices []map[string]json.RawMessage `json:"timeslices"`
	}
	if err := json.Unmarshal(j, &doc); err != nil || len(doc.Timeslices) != 2 {
		t.Fatalf("%v %d", err, len(doc.Timeslices))
	}
	golden(t, "profile_export_aiperf_timeslices.csv", TimeslicesCSV(slices))
	lines := strings.Split(strings.TrimSpace(string(TimeslicesCSV(slices))), "\n")
	// The header; slice 0: request_count's avg, request_latency's 14
	// statistics (avg, min, max, sum, p1…p99, std); slice 1: one row.
	if len(lines) != 1+15+1 || lines[0] != "Timeslice,Start_NS,End_NS,Metric,Unit,Stat,Value" ||
		lines[16] != "1,2000000000,3000000000,Request Count,requests,avg,0.00" {
		t.Fatalf("csv:\n%s", strings.Join(lines, "\n"))
	}
}

// TestProfileCSVOwnRowsLast: llmbench's own metrics (schedule lateness)
// follow AIPerf's rows, which keep their tag order and their positions.
func TestProfileCSVOwnRowsLast(t *testing.T) {
	d := stats.Summarize([]float64{1, 2, 3})
	rs := metrics.Results{Metrics: []metrics.Result{
		{Def: metrics.RecordDefs[metrics.TimeToFirstToken], Dist: &d},
		{Def: metrics.RecordDefs[metrics.ScheduleLateness], Dist: &d},
		{Def: metrics.RecordDefs[metrics.RequestLatency], Dist: &d},
		{Def: metrics.DefGoodRequestFraction, Value: 0.5},
		{Def: metrics.DefRequestCount, Value: 3},
	}}
	var first []string
	for _, line := range strings.Split(string(ProfileCSV(rs)), "\n") {
		if name, _, ok := strings.Cut(line, ","); ok {
			first = append(first, name)
		}
	}
	want := []string{"Metric", "Request Latency (ms)", "Time to First Token (ms)", "Schedule Lateness (ms)", "Metric", "GoodRequestFraction (ratio)", "Request Count"}
	if !slices.Equal(first, want) {
		t.Fatalf("rows %q\nwant %q", first, want)
	}
}

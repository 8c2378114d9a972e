package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// orderedKeys returns a JSON object's keys in file order.
func orderedKeys(t *testing.T, raw []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not a JSON object: %.80s", raw)
	}
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// objects reads a JSON object as its members.
func objects(t *testing.T, raw []byte) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%v: %.80s", err, raw)
	}
	return m
}

// isSubsequence reports whether every element of sub appears in seq, in
// the same order.
func isSubsequence(sub, seq []string) bool {
	i := 0
	for _, s := range seq {
		if i < len(sub) && sub[i] == s {
			i++
		}
	}
	return i == len(sub)
}

// Where llmbench's exports may differ from the November 2025 AIPerf files,
// because the newest AIPerf differs from them the same way
// (aiperf-implementation-notes C1, C3) or because the data is not there.
var (
	// Keys the older file has and the newest AIPerf does not write.
	droppedByNewest = map[string]string{
		"min_request_timestamp":  "INTERNAL in the newest AIPerf",
		"max_response_timestamp": "INTERNAL in the newest AIPerf",
		"prefill_throughput":     "renamed prefill_throughput_per_user (tokens/sec/user)",
		"telemetry_data":         "written only when a DCGM exporter answered (this run has no GPUs; TestGPUEnergyAgainstPowerModel reads it)",
	}
	// Statistics the newest adds to every record metric (schema 1.1).
	addedStats = []string{"count", "sum"}
)

// TestAIPerfExportShapes compares a streaming chat run's exports with real
// AIPerf files of the same kind, key by key: every metric AIPerf wrote is
// there with the same unit and the same statistics in the same order, the
// top-level keys come in AIPerf's order, and each JSONL line has AIPerf's
// metadata keys in order and its metrics with their units. The only
// differences allowed are the ones listed above and null fields, which
// the newest AIPerf omits.
func TestAIPerfExportShapes(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run([]string{"llmbench", "profile", "-m", "m", "--mock", "--streaming", "--concurrency", "2", "--request-count", "8",
		"--synthetic-input-tokens-mean", "100", "--output-tokens-mean", "20", "--extra-inputs", "ignore_eos:true",
		"--goodput", "time_to_first_token:1000 inter_token_latency:1000",
		"--mock-ttft-ms", "5", "--mock-itl-ms", "1", "--no-server-metrics", "--artifact-dir", dir, "--ui-type", "none"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	fixture := filepath.Join("testdata", "aiperf-nov2025")
	theirsRaw, err := os.ReadFile(filepath.Join(fixture, "profile_export_aiperf.json"))
	if err != nil {
		t.Fatal(err)
	}
	oursRaw, err := os.ReadFile(filepath.Join(dir, "profile_export_aiperf.json"))
	if err != nil {
		t.Fatal(err)
	}
	theirs, ours := objects(t, theirsRaw), objects(t, oursRaw)

	var expected []string // their keys that ours must have, in order
	for _, k := range orderedKeys(t, theirsRaw) {
		if why := droppedByNewest[k]; why != "" {
			if _, ok := ours[k]; ok {
				t.Errorf("%s: written, but the newest AIPerf leaves it out (%s)", k, why)
			}
			continue
		}
		if string(theirs[k]) == "null" {
			continue // a metric that run did not have, written as null then
		}
		expected = append(expected, k)
		if _, ok := ours[k]; !ok {
			t.Errorf("%s: missing", k)
			continue
		}
		var block struct {
			Unit *string `json:"unit"`
		}
		if json.Unmarshal(theirs[k], &block) != nil || block.Unit == nil {
			continue // not a metric: input_config, error_summary, …
		}
		var mine struct {
			Unit string `json:"unit"`
		}
		json.Unmarshal(ours[k], &mine)
		if mine.Unit != *block.Unit {
			t.Errorf("%s: unit %q, AIPerf's %q", k, mine.Unit, *block.Unit)
		}
		want := orderedKeys(t, theirs[k])
		if len(want) > 2 { // a distribution: AIPerf's statistics, then count and sum
			want = append(want, addedStats...)
		}
		if got := orderedKeys(t, ours[k]); !slices.Equal(got, want) {
			t.Errorf("%s: statistics %v, want %v", k, got, want)
		}
	}
	if got := orderedKeys(t, oursRaw); !isSubsequence(expected, got) {
		t.Errorf("top-level keys out of AIPerf's order:\n got %v\nwant %v as a subsequence", got, expected)
	}
	if got := orderedKeys(t, oursRaw)[:3]; !slices.Equal(got, []string{"schema_version", "aiperf_version", "benchmark_id"}) {
		t.Errorf("first keys %v", got)
	}
	if _, ok := ours["prefill_throughput_per_user"]; !ok {
		t.Error("prefill_throughput_per_user missing")
	}
	// The goodput metrics, null in that run, in their declared places.
	keys := orderedKeys(t, oursRaw)
	if !isSubsequence([]string{"input_sequence_length", "goodput", "good_request_count", "output_token_count"}, keys) {
		t.Errorf("goodput keys out of order: %v", keys)
	}
	var good struct {
		Avg float64 `json:"avg"`
	}
	if json.Unmarshal(ours["good_request_count"], &good); good.Avg != 8 {
		t.Errorf("good_request_count %s, want all 8 within the lax SLOs", ours["good_request_count"])
	}

	// profile_export.jsonl: a profiling line of each.
	theirLine := firstLine(t, filepath.Join(fixture, "profile_export.jsonl"))
	ourLine := firstLine(t, filepath.Join(dir, "profile_export.jsonl"))
	if got, want := orderedKeys(t, ourLine), []string{"metadata", "metrics"}; !slices.Equal(got, want) {
		t.Errorf("line keys %v, want %v (error only when there is one)", got, want)
	}
	theirMeta, ourMeta := objects(t, objects(t, theirLine)["metadata"]), objects(t, ourLine)["metadata"]
	var wantMeta []string
	for _, k := range orderedKeys(t, objects(t, theirLine)["metadata"]) {
		// conversation_id was null in this version; the newest fills it
		// from the dataset, as llmbench does.
		if string(theirMeta[k]) != "null" || k == "conversation_id" {
			wantMeta = append(wantMeta, k)
		}
		if k == "turn_index" {
			wantMeta = append(wantMeta, "credit_issued_ns") // the newest's
		}
	}
	if got := orderedKeys(t, ourMeta); !slices.Equal(got, wantMeta) {
		t.Errorf("metadata keys\n got %v\nwant %v", got, wantMeta)
	}
	type valueUnit struct {
		Unit string `json:"unit"`
	}
	var theirMetrics, ourMetrics map[string]valueUnit
	json.Unmarshal(objects(t, theirLine)["metrics"], &theirMetrics)
	json.Unmarshal(objects(t, ourLine)["metrics"], &ourMetrics)
	for k, m := range theirMetrics {
		if droppedByNewest[k] != "" {
			continue
		}
		if got, ok := ourMetrics[k]; !ok || got.Unit != m.Unit {
			t.Errorf("record metric %s: %+v (present %v), AIPerf's unit %q", k, got, ok, m.Unit)
		}
	}
	for _, k := range []string{"http_req_data_sent", "http_req_data_received", "http_req_chunks_sent", "http_req_chunks_received", "http_req_connection_reused"} {
		if _, ok := ourMetrics[k]; !ok {
			t.Errorf("record metric %s missing", k)
		}
	}
}

func firstLine(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	if !sc.Scan() {
		t.Fatalf("%s: empty", path)
	}
	return append([]byte(nil), sc.Bytes()...)
}

// TestWorkersMaxNoted: AIPerf's --workers-max (or --max-workers) runs, with
// one line saying it changes nothing in llmbench's single process.
func TestWorkersMaxNoted(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"llmbench", "profile", "--mock", "-m", "mock-model", "--max-workers", "8", "--request-count", "2",
		"--no-server-metrics", "--artifact-dir", t.TempDir(), "--ui", "none"}, &stdout, &stderr)
	if code != exitOK || !strings.Contains(stderr.String(), "--workers-max 8 changes nothing here") {
		t.Errorf("exit %d, stderr %q; want exit 0 and the note", code, stderr.String())
	}
}

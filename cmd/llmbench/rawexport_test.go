package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExportLevelRaw runs --export-level raw against the built-in server:
// profile_export_raw.jsonl has a line for every record of
// profile_export.jsonl (same request ids), each with its payload as sent
// (the secret extra input redacted), status 200 and every server-sent
// event, the stream's [DONE] last.
func TestExportLevelRaw(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run([]string{"llmbench", "profile", "--mock", "-m", "mock-model", "--streaming", "--mock-ttft-ms", "5", "--mock-itl-ms", "1",
		"--osl", "8", "--concurrency", "2", "--request-count", "10", "--export-level", "raw", "--extra-inputs", "api_key:sk-test-123",
		"--no-server-metrics", "--artifact-dir", dir, "--ui", "none", "--random-seed", "1"}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	_, lines := readArtifacts(t, dir)
	ids := map[string]bool{}
	for _, l := range lines {
		ids[l.Metadata.XRequestID] = true
	}
	raw, err := os.ReadFile(filepath.Join(dir, "profile_export_raw.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "sk-test-123") {
		t.Error("the secret extra input reached profile_export_raw.jsonl")
	}
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var x struct {
			Metadata struct {
				XRequestID string `json:"x_request_id"`
			} `json:"metadata"`
			Payload struct {
				Model    string `json:"model"`
				Stream   bool   `json:"stream"`
				Messages []any  `json:"messages"`
			} `json:"payload"`
			Status    int `json:"status"`
			Responses []struct {
				PerfNs  int64 `json:"perf_ns"`
				Packets []struct{ Name, Value string }
			} `json:"responses"`
		}
		if err := json.Unmarshal(sc.Bytes(), &x); err != nil {
			t.Fatalf("line %d: %v", n, err)
		}
		n++
		if !ids[x.Metadata.XRequestID] {
			t.Errorf("raw line for request %q, which profile_export.jsonl lacks", x.Metadata.XRequestID)
		}
		delete(ids, x.Metadata.XRequestID)
		if x.Payload.Model != "mock-model" || !x.Payload.Stream || len(x.Payload.Messages) != 1 || x.Status != 200 {
			t.Errorf("request %s: payload %+v, status %d", x.Metadata.XRequestID, x.Payload, x.Status)
		}
		r := x.Responses
		if len(r) < 9 || len(r[len(r)-1].Packets) != 1 || r[len(r)-1].Packets[0].Value != "[DONE]" {
			t.Errorf("request %s: %d events, the last %+v; want the 8 tokens' chunks and [DONE] last", x.Metadata.XRequestID, len(r), r[len(r)-1])
		}
		for i := 1; i < len(r); i++ {
			if r[i].PerfNs < r[i-1].PerfNs {
				t.Errorf("request %s: event %d arrived before event %d", x.Metadata.XRequestID, i, i-1)
			}
		}
	}
	if n != 10 || len(ids) != 0 {
		t.Errorf("%d raw lines for 10 requests; %d requests without one", n, len(ids))
	}
}

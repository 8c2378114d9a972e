package main

import (
	"bytes"
	"encoding/json"
	"sort"
	"testing"
)

// peakInFlight is the most requests of one phase that were in flight at
// once, from their start and end times.
func peakInFlight(lines []line, phase string) int {
	type edge struct {
		at    int64
		delta int
	}
	var edges []edge
	for _, l := range lines {
		if l.Metadata.Phase != phase || l.Metadata.EndNs == nil {
			continue
		}
		edges = append(edges, edge{l.Metadata.StartNs, 1}, edge{*l.Metadata.EndNs, -1})
	}
	// An end before a start at the same instant: back to back is not
	// overlapping.
	sort.Slice(edges, func(i, j int) bool {
		return edges[i].at < edges[j].at || edges[i].at == edges[j].at && edges[i].delta < edges[j].delta
	})
	peak, n := 0, 0
	for _, e := range edges {
		n += e.delta
		peak = max(peak, n)
	}
	return peak
}

// TestWarmupConcurrency runs AIPerf's --warmup-concurrency: the warm-up's
// requests go one at a time while the profiling phase keeps 4 in flight,
// read from the records' own start and end times.
func TestWarmupConcurrency(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run([]string{"llmbench", "profile", "--mock", "-m", "mock-model", "--streaming", "--mock-ttft-ms", "20", "--mock-itl-ms", "2",
		"--osl", "8", "--concurrency", "4", "--request-count", "24", "--num-warmup-sessions", "6", "--warmup-concurrency", "1",
		"--no-server-metrics", "--artifact-dir", dir, "--ui", "none", "--random-seed", "1"}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	agg, lines := readArtifacts(t, dir)
	warm, prof := 0, 0
	for _, l := range lines {
		switch l.Metadata.Phase {
		case "warmup":
			warm++
		case "profiling":
			prof++
		}
	}
	if warm != 6 || prof != 24 {
		t.Fatalf("%d warm-up and %d profiling records, want 6 and 24", warm, prof)
	}
	if p := peakInFlight(lines, "warmup"); p != 1 {
		t.Errorf("warm-up requests in flight at once: %d, want 1 (--warmup-concurrency 1)", p)
	}
	if p := peakInFlight(lines, "profiling"); p != 4 {
		t.Errorf("profiling requests in flight at once: %d, want 4", p)
	}
	var cfg struct {
		Loadgen struct {
			WarmupConcurrency int `json:"warmup_concurrency"`
			WarmupCount       int `json:"warmup_request_count"`
		} `json:"loadgen"`
	}
	if err := json.Unmarshal(agg["input_config"], &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Loadgen.WarmupConcurrency != 1 || cfg.Loadgen.WarmupCount != 6 {
		t.Errorf("input_config.loadgen %+v, want warmup_concurrency 1 and warmup_request_count 6", cfg.Loadgen)
	}
}

// TestPrefillConcurrency runs AIPerf's --prefill-concurrency: of 8
// requests in flight, at most 2 wait for their first token at once, read
// from the records (each request's start to its first token), while more
// than 2 are in flight in all.
func TestPrefillConcurrency(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run([]string{"llmbench", "profile", "--mock", "-m", "mock-model", "--streaming", "--mock-ttft-ms", "40", "--mock-itl-ms", "5",
		"--osl", "20", "--concurrency", "8", "--prefill-concurrency", "2", "--request-count", "40",
		"--no-server-metrics", "--artifact-dir", dir, "--ui", "none", "--random-seed", "1"}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	agg, lines := readArtifacts(t, dir)
	if len(lines) != 40 {
		t.Fatalf("%d records, want 40", len(lines))
	}
	prefill := make([]line, len(lines))
	for i, l := range lines {
		var ttft float64
		if err := json.Unmarshal(l.Metrics["time_to_first_token"].Value, &ttft); err != nil || l.Error != nil {
			t.Fatalf("record %d: ttft %s, error %+v", i, l.Metrics["time_to_first_token"].Value, l.Error)
		}
		end := l.Metadata.StartNs + int64(ttft*1e6)
		prefill[i] = l
		prefill[i].Metadata.EndNs = &end
	}
	if p := peakInFlight(prefill, "profiling"); p != 2 {
		t.Errorf("requests waiting for their first token at once: %d, want 2 (--prefill-concurrency 2)", p)
	}
	if p := peakInFlight(lines, "profiling"); p <= 2 || p > 8 {
		t.Errorf("requests in flight at once: %d, want more than the 2 in prefill and at most 8", p)
	}
	var cfg struct {
		Loadgen struct {
			Prefill int `json:"prefill_concurrency"`
		} `json:"loadgen"`
	}
	if err := json.Unmarshal(agg["input_config"], &cfg); err != nil || cfg.Loadgen.Prefill != 2 {
		t.Errorf("input_config.loadgen.prefill_concurrency %d (%v), want 2", cfg.Loadgen.Prefill, err)
	}
}

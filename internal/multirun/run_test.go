package multirun

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmbench/llmbench/internal/benchmark"
	"github.com/llmbench/llmbench/internal/config"
)

// TestRunRecordsAFailedRun: three runs against a server that fails every
// request of the second; that run is recorded in failed_runs, the other
// two are aggregated, the warm-up runs only before the first, every run
// uses the same seed, and the cooldown is waited between runs.
func TestRunRecordsAFailedRun(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Run 1: 1 warm-up + 4 requests (1-5); run 2: 6-9; run 3: 10-13.
		if i := n.Add(1); i >= 6 && i <= 9 {
			http.Error(w, `{"error":"overloaded"}`, http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"choices":[{"message":{"content":"one two three"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}}`))
	}))
	defer srv.Close()
	dir := t.TempDir()
	p := config.Default()
	p.Endpoint.ModelNames = []string{"m"}
	p.Tokenizer.Name = "builtin"
	p.Endpoint.URLs = []string{srv.URL}
	p.Loadgen.RequestCount = 4
	p.Loadgen.WarmupRequestCount = 1
	p.Output.ArtifactDir = dir
	p.ServerMetrics.Disabled = true
	p.MultiRun.NumRuns = 3
	p.MultiRun.Cooldown = 5 * time.Second
	if err := p.Finish(); err != nil {
		t.Fatal(err)
	}
	var slept []time.Duration
	var heard []string
	out, err := Run(context.Background(), Options{
		Run:   benchmark.Options{Profile: p, Version: "test"},
		OnRun: func(label string, _ *benchmark.Result, err error) { heard = append(heard, label+":"+errText(err)) },
		Sleep: func(_ context.Context, d time.Duration) { slept = append(slept, d) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Runs) != 2 || out.Dir != filepath.Join(dir, "aggregate") || out.Cancelled {
		t.Errorf("outcome %+v", out)
	}
	if len(slept) != 2 || slept[0] != 5*time.Second {
		t.Errorf("cooldowns %v, want two of 5s", slept)
	}
	want := []string{"run_0001:", "run_0002:every request failed (4 errors)", "run_0003:"}
	if len(heard) != 3 || heard[0] != want[0] || heard[1] != want[1] || heard[2] != want[2] {
		t.Errorf("runs %q, want %q", heard, want)
	}

	raw, err := os.ReadFile(filepath.Join(dir, "aggregate", "profile_export_aiperf_aggregate.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Metadata struct {
			Type       string      `json:"aggregation_type"`
			Runs       int         `json:"num_profile_runs"`
			Successful int         `json:"num_successful_runs"`
			Failed     []FailedRun `json:"failed_runs"`
			Level      float64     `json:"confidence_level"`
			Cooldown   float64     `json:"cooldown_seconds"`
			Labels     []string    `json:"run_labels"`
		} `json:"metadata"`
		Metrics map[string]map[string]any `json:"metrics"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	m := doc.Metadata
	if m.Type != "confidence" || m.Runs != 3 || m.Successful != 2 || len(m.Failed) != 1 || m.Failed[0].Label != "run_0002" ||
		m.Level != 0.95 || m.Cooldown != 5 || len(m.Labels) != 2 || m.Labels[1] != "run_0003" {
		t.Fatalf("metadata %+v", m)
	}
	// Both successful runs measured 4 requests: mean 4, no spread, and
	// t(0.975, 1) = 12.706204736174698 as in any t table.
	rc := doc.Metrics["request_count_avg"]
	if rc["mean"] != 4.0 || rc["std"] != 0.0 || rc["unit"] != "requests" || math.Abs(rc["t_critical"].(float64)-12.706204736174698) > 1e-9 {
		t.Fatalf("request_count_avg %v", rc)
	}
	// Warm-up only in the first run; the same seed in every run.
	var seeds []float64
	for i, wantLines := range []int{5, 4, 4} {
		label := RunLabel(i)
		lines, _ := os.ReadFile(filepath.Join(dir, "profile_runs", label, "profile_export.jsonl"))
		if got := bytes.Count(lines, []byte("\n")); got != wantLines {
			t.Errorf("%s: %d records, want %d", label, got, wantLines)
		}
		var prof struct {
			RunInfo struct {
				Seed  float64 `json:"random_seed"`
				Trial int     `json:"trial"`
				Label string  `json:"run_label"`
			} `json:"run_info"`
		}
		raw, _ := os.ReadFile(filepath.Join(dir, "profile_runs", label, "profile_export_aiperf.json"))
		if err := json.Unmarshal(raw, &prof); err != nil || prof.RunInfo.Label != label || prof.RunInfo.Trial != i {
			t.Errorf("%s run_info %+v (%v)", label, prof.RunInfo, err)
		}
		seeds = append(seeds, prof.RunInfo.Seed)
	}
	if seeds[0] != seeds[1] || seeds[1] != seeds[2] {
		t.Errorf("seeds %v differ", seeds)
	}
}

// TestRunAllFailed: no run succeeded, so there is nothing to aggregate.
func TestRunAllFailed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusInternalServerError)
	}))
	defer srv.Close()
	p := config.Default()
	p.Endpoint.ModelNames = []string{"m"}
	p.Tokenizer.Name = "builtin"
	p.Endpoint.URLs = []string{srv.URL}
	p.Output.ArtifactDir = t.TempDir()
	p.ServerMetrics.Disabled = true
	p.MultiRun.NumRuns = 2
	if err := p.Finish(); err != nil {
		t.Fatal(err)
	}
	out, err := Run(context.Background(), Options{Run: benchmark.Options{Profile: p, Version: "test"}})
	if err == nil || len(out.Summary.FailedRuns) != 2 || out.Files != nil {
		t.Fatalf("err %v, outcome %+v", err, out)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

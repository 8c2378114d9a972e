package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/llmbench/llmbench/internal/dataset"
	"github.com/llmbench/llmbench/internal/hfhub"
	"github.com/llmbench/llmbench/internal/mockserver"
	"github.com/llmbench/llmbench/internal/tokenizer"
)

// TestGPUEnergyAgainstPowerModel: against the simulated server posing as
// a DCGM exporter for 2 GPUs, the reported energy (per GPU and in total)
// and energy per output token are within 1 % of the exact value of its
// power model. The exact value is read from the server's own meter: the
// load's energy (everything above idle) is the meter's rise over the whole
// test less idle power over that time, all of it inside the profiling
// window; idle power over the window is added, the window read back from
// start_time and end_time.
func TestGPUEnergyAgainstPowerModel(t *testing.T) {
	// A DCGM exporter on this machine's default ports must not join in.
	t.Setenv("AIPERF_GPU_DEFAULT_DCGM_ENDPOINTS", "[]")
	dir := t.TempDir()
	const requests, osl, gpus = 64, 32, 2
	tok, err := tokenizer.Load(context.Background(), tokenizer.BuiltinName, hfhub.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := mockserver.DefaultConfig()
	cfg.TTFT, cfg.ITL, cfg.GPUs, cfg.Language = 20*time.Millisecond, 4*time.Millisecond, gpus, dataset.NewCorpus(tok)
	srv, base := serveMock(t, cfg)
	gpuURL, stopGPUs, err := srv.StartGPUs(context.Background(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer stopGPUs()

	before, beforeAt := srv.GPUEnergyJoules(), time.Now()
	var stdout, stderr bytes.Buffer
	code := run([]string{"llmbench", "profile", "--model", "m", "--tokenizer", "builtin", "--url", base, "--endpoint-type", "chat", "--streaming",
		"--concurrency", "8", "--request-count", strconv.Itoa(requests), "--output-tokens-mean", strconv.Itoa(osl), "--random-seed", "5",
		"--gpu-telemetry", gpuURL, "--artifact-dir", dir, "--no-server-metrics"}, &stdout, &stderr)
	afterAt, after := time.Now(), srv.GPUEnergyJoules()
	if code != 0 {
		t.Fatalf("exit %d\nstderr: %s", code, stderr.String())
	}
	agg, lines := readArtifacts(t, dir)
	if len(lines) != requests {
		t.Fatalf("%d records", len(lines))
	}
	var window struct {
		Summary struct {
			Start string `json:"start_time"`
			End   string `json:"end_time"`
		} `json:"summary"`
	}
	if err := json.Unmarshal(agg["telemetry_data"], &window); err != nil {
		t.Fatal(err)
	}
	var ends [2]time.Time
	for i, s := range []string{window.Summary.Start, window.Summary.End} {
		if ends[i], err = time.ParseInLocation("2006-01-02T15:04:05.000000", s, time.Local); err != nil {
			t.Fatal(err)
		}
	}
	windowSec := ends[1].Sub(ends[0]).Seconds()
	model := mockserver.DefaultGPUPowerProfile()
	exact := make([]float64, gpus)
	var exactTotal float64
	for i := range exact {
		idle := model.IdleWatts + float64(i)*model.IdleStepWatts
		load := after[i] - before[i] - idle*afterAt.Sub(beforeAt).Seconds()
		exact[i] = idle*windowSec + load
		exactTotal += exact[i]
	}
	within := func(what string, got, want float64) {
		t.Helper()
		t.Logf("%s: got %.3f, exact %.3f (%+.3f %%)", what, got, want, 100*(got-want)/want)
		if math.Abs(got-want) > 0.01*want {
			t.Errorf("%s: got %.3f, exact %.3f (%.2f %% off)", what, got, want, 100*(got-want)/want)
		}
	}
	within("nvidia_total_gpu_energy (J)", metric(t, agg, "nvidia_total_gpu_energy").Avg, exactTotal)
	totalOSL := metric(t, agg, "total_osl").Avg
	if totalOSL != requests*osl {
		t.Fatalf("total_osl %v", totalOSL)
	}
	within("nvidia_energy_per_output_token (mJ/token)", metric(t, agg, "nvidia_energy_per_output_token").Avg, 1000*exactTotal/totalOSL)
	if u := metric(t, agg, "nvidia_energy_per_output_token").Unit; u != "mJ/token" {
		t.Errorf("energy per output token unit %q", u)
	}

	// Per GPU: telemetry_data's energy counter increase (MJ).
	var td struct {
		Summary struct {
			Configured   []string `json:"endpoints_configured"`
			Successful   []string `json:"endpoints_successful"`
			EnergySource string   `json:"energy_source"`
		} `json:"summary"`
		Endpoints map[string]struct {
			GPUs map[string]struct {
				Index   int    `json:"gpu_index"`
				Name    string `json:"gpu_name"`
				UUID    string `json:"gpu_uuid"`
				Metrics map[string]map[string]any
			} `json:"gpus"`
		} `json:"endpoints"`
	}
	if err := json.Unmarshal(agg["telemetry_data"], &td); err != nil {
		t.Fatalf("telemetry_data: %v\n%s", err, agg["telemetry_data"])
	}
	if len(td.Endpoints) != 1 || len(td.Summary.Successful) != 1 || td.Summary.EnergySource != "energy_counter" {
		t.Fatalf("telemetry_data summary %+v, %d endpoints", td.Summary, len(td.Endpoints))
	}
	for _, ep := range td.Endpoints {
		if len(ep.GPUs) != gpus {
			t.Fatalf("%d GPUs", len(ep.GPUs))
		}
		for i := range gpus {
			g, ok := ep.GPUs["gpu_"+strconv.Itoa(i)]
			if !ok || g.Index != i || g.Name != "NVIDIA H100 80GB HBM3" || !strings.HasPrefix(g.UUID, "GPU-") {
				t.Fatalf("gpu_%d: %+v", i, g)
			}
			e := g.Metrics["nvidia_energy_consumption"]
			if e["unit"] != "MJ" || len(e) != 2 {
				t.Fatalf("gpu_%d energy %v: want only unit and avg", i, e)
			}
			within("GPU "+strconv.Itoa(i)+" energy (J)", e["avg"].(float64)*1e6, exact[i])
			if p := g.Metrics["nvidia_power_usage"]; p["unit"] != "W" || p["p50"] == nil || p["std"] == nil {
				t.Fatalf("gpu_%d power %v", i, p)
			}
		}
	}

	// One JSONL line per GPU per scrape, in AIPerf 0.12's shape.
	f, err := os.Open(filepath.Join(dir, "gpu_telemetry_export.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	perGPU := map[int]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var row map[string]any
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatalf("jsonl: %v", err)
		}
		for _, key := range []string{"timestamp_ns", "telemetry_source_url", "gpu_index", "gpu_uuid", "gpu_model_name", "pci_bus_id", "device", "hostname", "platform", "telemetry_data"} {
			if _, ok := row[key]; !ok {
				t.Fatalf("jsonl row without %s: %v", key, row)
			}
		}
		if _, ok := row["telemetry_data"].(map[string]any)["nvidia_energy_consumption"]; !ok {
			t.Fatalf("row without energy: %v", row)
		}
		perGPU[int(row["gpu_index"].(float64))]++
	}
	if len(perGPU) != gpus || perGPU[0] < 3 || perGPU[0] != perGPU[1] {
		t.Fatalf("rows per GPU %v", perGPU)
	}

	// The CSV's GPU section and the console's tables.
	csv, err := os.ReadFile(filepath.Join(dir, "profile_export_aiperf.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(csv, []byte("\n\n\nEndpoint,GPU_Index,GPU_Name,GPU_UUID,Platform,Metric,avg,min,max,sum,p1,")) ||
		!bytes.Contains(csv, []byte(",0,NVIDIA H100 80GB HBM3,")) || !bytes.Contains(csv, []byte("NVIDIA Energy per Output Token (mJ/token),")) {
		t.Fatalf("CSV GPU section missing:\n%s", csv)
	}
	out := stdout.String()
	for _, want := range []string{"1/1 telemetry sources reachable", "| GPU 1 | NVIDIA H100 80GB HBM3", "GPU Power Efficiency (NVIDIA)", "NVIDIA Energy per Output Token (mJ/token)"} {
		if !strings.Contains(out, want) {
			t.Errorf("console lacks %q:\n%s", want, out)
		}
	}
}

// TestGPUTelemetryUsage: the combinations AIPerf refuses, and the local
// libraries llmbench has no cgo-free binding for, are one line and exit 2.
func TestGPUTelemetryUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--gpu-telemetry", "localhost:9400", "--no-gpu-telemetry"}, "contradict"},
		{[]string{"--gpu-telemetry", "pynvml"}, "DCGM exporters only"},
		{[]string{"--gpu-telemetry", "gpu0"}, "give DCGM exporter URLs"},
		{[]string{"--gpu-telemetry", "missing.csv"}, "custom metrics file missing.csv"},
		{[]string{"--gpu-counter-window", "sometimes"}, "use exact or aiperf"},
		{[]string{"--mock-gpus", "2"}, "add --mock"},
	} {
		var stdout, stderr bytes.Buffer
		args := append([]string{"llmbench", "profile", "--model", "m"}, tc.args...)
		if code := run(args, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), tc.want) || strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line with %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}

// TestMockGPUs: --mock-gpus makes the in-process server a DCGM exporter
// whose telemetry is collected and shown without --gpu-telemetry; without
// it, the default DCGM ports (nothing listens there in tests) are probed
// without a word, and no GPU export is written.
func TestMockGPUs(t *testing.T) {
	for _, tc := range []struct {
		gpus string
		want bool
	}{{"1", true}, {"0", false}} {
		dir := t.TempDir()
		var stdout, stderr bytes.Buffer
		code := run([]string{"llmbench", "profile", "--model", "m", "--mock", "--streaming", "--concurrency", "2", "--request-count", "8",
			"--output-tokens-mean", "8", "--mock-ttft-ms", "5", "--mock-itl-ms", "2", "--mock-gpus", tc.gpus, "--artifact-dir", dir, "--no-server-metrics"}, &stdout, &stderr)
		if code != 0 {
			t.Fatalf("--mock-gpus %s: exit %d\nstderr: %s", tc.gpus, code, stderr.String())
		}
		agg, _ := readArtifacts(t, dir)
		_, hasData := agg["telemetry_data"]
		_, hasEnergy := agg["nvidia_total_gpu_energy"]
		_, err := os.Stat(filepath.Join(dir, "gpu_telemetry_export.jsonl"))
		shown := strings.Contains(stdout.String(), "| GPU 0 | NVIDIA H100 80GB HBM3")
		if hasData != tc.want || hasEnergy != tc.want || (err == nil) != tc.want || shown != tc.want {
			t.Errorf("--mock-gpus %s: telemetry_data %v, energy %v, jsonl %v, tables %v; want all %v", tc.gpus, hasData, hasEnergy, err == nil, shown, tc.want)
		}
		if strings.Contains(stderr.String(), "GPU telemetry") {
			t.Errorf("--mock-gpus %s: a GPU telemetry warning: %s", tc.gpus, stderr.String())
		}
	}
}

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/internal/mockserver"
)

// TestGPUEnergyAgainstPowerModel: against the built-in server posing as a
// DCGM exporter for 2 GPUs, the reported energy (per GPU and in total) and
// energy per output token are within 1 % of the exact value of the mock's
// power model, computed here from the records alone: GPU i draws
// idle_i over the window, SeqWatts/N per running sequence and TokenJoules/N
// per generated token.
func TestGPUEnergyAgainstPowerModel(t *testing.T) {
	dir := t.TempDir()
	const requests, osl, gpus = 64, 32, 2
	var stdout, stderr bytes.Buffer
	code := run([]string{"llmbench", "profile", "--model", "m", "--mock", "--endpoint-type", "chat", "--streaming",
		"--concurrency", "8", "--request-count", strconv.Itoa(requests), "--output-tokens-mean", strconv.Itoa(osl), "--random-seed", "5",
		"--mock-ttft-ms", "20", "--mock-itl-ms", "4", "--mock-gpus", strconv.Itoa(gpus), "--artifact-dir", dir, "--no-server-metrics"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\nstderr: %s", code, stderr.String())
	}
	agg, lines := readArtifacts(t, dir)
	if len(lines) != requests {
		t.Fatalf("%d records", len(lines))
	}

	// The exact energy: ∫running dt is the sum of the requests' latencies
	// (each runs on the server from admission to its last token, its
	// latency less a fraction of a millisecond of network), the window is
	// benchmark_duration, the tokens the server generated are osl each.
	var runningSec float64
	for _, l := range lines {
		var ms float64
		if err := json.Unmarshal(l.Metrics["request_latency"].Value, &ms); err != nil {
			t.Fatal(err)
		}
		runningSec += ms / 1000
	}
	durSec := metric(t, agg, "benchmark_duration").Avg
	model := mockserver.DefaultGPUPowerProfile()
	exact := make([]float64, gpus)
	var exactTotal float64
	for i := range exact {
		exact[i] = (model.IdleWatts+float64(i)*model.IdleStepWatts)*durSec +
			model.SeqWatts/gpus*runningSec + model.TokenJoules/gpus*requests*osl
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

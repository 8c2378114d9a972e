package export

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmbench/llmbench/internal/gputelemetry"
)

// report is two GPUs of one DCGM exporter, one of them in a Kubernetes
// pod: a gauge with every statistic and a counter with its increase.
func report() gputelemetry.Report {
	power, energy := &gputelemetry.DefaultFields[0], &gputelemetry.DefaultFields[1]
	gauge := gputelemetry.Stats{Field: power, Avg: 300.5, Min: 290, Max: 310, Sum: 1202, Std: 8.5, Count: 4}
	for i := range gauge.P {
		gauge.P[i] = 290 + float64(i)
	}
	counter := gputelemetry.Stats{Field: energy, Counter: true, Avg: 0.00025, Min: 0.00025, Max: 0.00025, Sum: 0.00025, Count: 1}
	src := "http://gpu-node-01:9400/metrics"
	return gputelemetry.Report{
		Configured: []string{src, "http://gpu-node-02:9400/metrics"}, Successful: []string{src},
		Start: time.Date(2026, 11, 23, 10, 0, 0, 0, time.Local), End: time.Date(2026, 11, 23, 10, 1, 0, 0, time.Local),
		GPUs: []gputelemetry.GPUSummary{
			{GPU: gputelemetry.GPU{Source: src, Index: 0, UUID: "GPU-a", Model: "NVIDIA H100 80GB HBM3", Hostname: "h1", Platform: "nvidia"}, Metrics: []gputelemetry.Stats{gauge, counter}},
			{GPU: gputelemetry.GPU{Source: src, Index: 1, UUID: "GPU-b", Model: "NVIDIA H100 80GB HBM3", Hostname: "h1", Namespace: "llm", Pod: "vllm-0", Platform: "nvidia"}, Metrics: []gputelemetry.Stats{gauge}, Partial: true},
		},
		Energy:        &gputelemetry.Energy{Source: gputelemetry.SourceEnergyCounter},
		CounterWindow: gputelemetry.CounterExact,
	}
}

// TestTelemetryJSON: telemetry_data in AIPerf 0.12's shape, read back with
// encoding/json.
func TestTelemetryJSON(t *testing.T) {
	var td struct {
		Summary   map[string]any `json:"summary"`
		Endpoints map[string]struct {
			GPUs map[string]map[string]any `json:"gpus"`
		} `json:"endpoints"`
	}
	raw := TelemetryJSON(report())
	if err := json.Unmarshal(raw, &td); err != nil {
		t.Fatalf("%v\n%s", err, raw)
	}
	if td.Summary["start_time"] != "2026-11-23T10:00:00.000000" || len(td.Summary["endpoints_configured"].([]any)) != 2 ||
		len(td.Summary["endpoints_successful"].([]any)) != 1 || td.Summary["energy_source"] != "energy_counter" || td.Summary["counter_window"] != "exact" {
		t.Errorf("summary %v", td.Summary)
	}
	gpus := td.Endpoints["gpu-node-01:9400"].GPUs
	g0, g1 := gpus["gpu_0"], gpus["gpu_1"]
	if len(gpus) != 2 || g0["gpu_uuid"] != "GPU-a" || g0["gpu_name"] != "NVIDIA H100 80GB HBM3" || g0["platform"] != "nvidia" || g0["hostname"] != "h1" {
		t.Fatalf("gpus %v", gpus)
	}
	if _, ok := g0["namespace"]; ok || g1["namespace"] != "llm" || g1["pod_name"] != "vllm-0" || g1["partial"] != true {
		t.Errorf("Kubernetes keys: %v / %v", g0, g1)
	}
	m := g0["metrics"].(map[string]any)
	power := m["nvidia_power_usage"].(map[string]any)
	if power["unit"] != "W" || power["avg"] != 300.5 || power["p1"] != 290.0 || power["p99"] != 298.0 || power["std"] != 8.5 || power["count"] != 4.0 {
		t.Errorf("power %v", power)
	}
	if e := m["nvidia_energy_consumption"].(map[string]any); len(e) != 2 || e["unit"] != "MJ" || e["avg"] != 0.00025 {
		t.Errorf("energy %v: a counter has only unit and avg", e)
	}
}

// TestTelemetryCSV: the GPU section after two blank lines, the Kubernetes
// columns when a GPU has them, a counter's row with avg only.
func TestTelemetryCSV(t *testing.T) {
	raw := string(TelemetryCSV(report()))
	if !strings.HasPrefix(raw, "\n\nEndpoint,") {
		t.Fatalf("no two blank lines before the section: %q", raw[:20])
	}
	rows, err := csv.NewReader(strings.NewReader(strings.TrimLeft(raw, "\n"))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	header := "Endpoint,GPU_Index,GPU_Name,GPU_UUID,Platform,Metric,avg,min,max,sum,p1,p5,p10,p25,p50,p75,p90,p95,p99,std,Hostname,Namespace,Pod Name"
	if strings.Join(rows[0], ",") != header || len(rows) != 4 {
		t.Fatalf("rows %q", rows)
	}
	want := [][]string{
		{"gpu-node-01:9400", "0", "NVIDIA H100 80GB HBM3", "GPU-a", "nvidia", "GPU Power Usage (W)", "300.50", "290.00", "310.00", "1202.00", "290.00", "291.00", "292.00", "293.00", "294.00", "295.00", "296.00", "297.00", "298.00", "8.50", "h1", "", ""},
		{"gpu-node-01:9400", "0", "NVIDIA H100 80GB HBM3", "GPU-a", "nvidia", "Energy Consumption (MJ)", "0.00025", "", "", "", "", "", "", "", "", "", "", "", "", "", "h1", "", ""},
		{"gpu-node-01:9400", "1", "NVIDIA H100 80GB HBM3", "GPU-b", "nvidia", "GPU Power Usage (W)", "300.50", "290.00", "310.00", "1202.00", "290.00", "291.00", "292.00", "293.00", "294.00", "295.00", "296.00", "297.00", "298.00", "8.50", "h1", "llm", "vllm-0"},
	}
	for i, w := range want {
		if strings.Join(rows[i+1], "|") != strings.Join(w, "|") {
			t.Errorf("row %d\n got %q\nwant %q", i+1, rows[i+1], w)
		}
	}
	if TelemetryCSV(gputelemetry.Report{}) != nil {
		t.Error("a section without GPUs")
	}
}

// TestTelemetryWriter: no file until the first row; then one JSON line
// per row in AIPerf 0.12's keys.
func TestTelemetryWriter(t *testing.T) {
	dir := t.TempDir()
	w := NewTelemetryWriter(dir, GPUTelemetryFile(""))
	if err := w.Write(nil); err != nil || w.Written() {
		t.Fatalf("written without rows: %v", err)
	}
	g := &gputelemetry.GPU{Source: "http://h:9400/metrics", Index: 3, UUID: "GPU-c", Model: "M", PCIBusID: "00000000:18:00.0", Device: "nvidia3", Hostname: "h", Pod: "p", Platform: "nvidia"}
	f := &gputelemetry.DefaultFields[0]
	if err := w.Write([]gputelemetry.Row{{GPU: g, TimestampNs: 1700000000123456789, Values: []gputelemetry.Value{{Field: f, V: 612.5}}}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "gpu_telemetry_export.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"timestamp_ns":1700000000123456789,"telemetry_source_url":"http://h:9400/metrics","gpu_index":3,"gpu_uuid":"GPU-c","gpu_model_name":"M","pci_bus_id":"00000000:18:00.0","device":"nvidia3","hostname":"h","pod_name":"p","platform":"nvidia","telemetry_data":{"nvidia_power_usage":612.5}}` + "\n"
	if string(raw) != want {
		t.Fatalf("got  %s\nwant %s", raw, want)
	}
	if GPUTelemetryFile("run1") != "run1_gpu_telemetry.jsonl" {
		t.Error(GPUTelemetryFile("run1"))
	}
}

// TestTelemetryJSONSameIndex: GPUs of one host:port with the same index
// (a Service over several nodes' exporters) keep apart keys.
func TestTelemetryJSONSameIndex(t *testing.T) {
	r := report()
	twin := r.GPUs[0]
	twin.GPU.UUID = "GPU-z"
	r.GPUs = append(r.GPUs, twin)
	var td struct {
		Endpoints map[string]struct {
			GPUs map[string]map[string]any `json:"gpus"`
		} `json:"endpoints"`
	}
	if err := json.Unmarshal(TelemetryJSON(r), &td); err != nil {
		t.Fatal(err)
	}
	gpus := td.Endpoints["gpu-node-01:9400"].GPUs
	if len(gpus) != 3 || gpus["gpu_0"]["gpu_uuid"] != "GPU-a" || gpus["gpu_0_GPU-z"]["gpu_uuid"] != "GPU-z" {
		t.Fatalf("gpus %v", gpus)
	}
}

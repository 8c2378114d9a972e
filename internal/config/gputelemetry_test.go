package config

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestGPUTelemetryItems: --gpu-telemetry's items sorted as AIPerf sorts
// them, alone or with values, with credentials kept out of what is written.
func TestGPUTelemetryItems(t *testing.T) {
	args := ExpandListArgs([]string{"-m", "m", "--gpu-telemetry", "dashboard", "bob:s3cret-gpu@node1:9400", "http://node2:9500/dcgm", "--streaming"}, ListFlags)
	p, err := parse(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	g := p.GPUTelemetry
	want := []string{"http://node1:9400/metrics", "http://node2:9500/dcgm"}
	if !g.Show || !g.Dashboard || !slices.Equal(g.URLs, want) || g.Users[want[0]].Username() != "bob" {
		t.Fatalf("%+v", g)
	}
	if !slices.Equal(g.DefaultURLs, []string{"http://localhost:9400/metrics", "http://localhost:9401/metrics"}) || g.CounterWindow != CounterWindowExact {
		t.Fatalf("defaults %v %q", g.DefaultURLs, g.CounterWindow)
	}
	raw, err := json.Marshal(p.Redacted())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "s3cret-gpu") || !strings.Contains(string(raw), `"gpu_telemetry":{"show":true`) {
		t.Fatalf("input_config %s", raw)
	}
	if got := NewRedactor(p).Redact("scraping http://bob:s3cret-gpu@node1:9400"); strings.Contains(got, "s3cret-gpu") {
		t.Fatalf("redactor kept the password: %s", got)
	}

	// Alone, it only shows the tables; absent, nothing is shown.
	if p, err := parse(t, "-m", "m", "--gpu-telemetry"); err != nil || !p.GPUTelemetry.Show || len(p.GPUTelemetry.URLs) != 0 {
		t.Fatalf("--gpu-telemetry alone: %+v %v", p.GPUTelemetry, err)
	}
	if p, _ := parse(t, "-m", "m"); p.GPUTelemetry.Show || p.GPUTelemetry.Disabled {
		t.Fatalf("default %+v", p.GPUTelemetry)
	}
}

func TestGPUTelemetryEnv(t *testing.T) {
	p := Default()
	env := map[string]string{"AIPERF_GPU_DEFAULT_DCGM_ENDPOINTS": `["http://a:1/metrics", "b:2"]`, "AIPERF_GPU_COLLECTION_INTERVAL": "0.5"}
	if err := p.ApplyEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }); err != nil {
		t.Fatal(err)
	}
	p.Endpoint.ModelNames = []string{"m"}
	if err := p.Finish(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.GPUTelemetry.DefaultURLs, []string{"http://a:1/metrics", "http://b:2/metrics"}) || p.GPUTelemetry.Interval != 500*time.Millisecond {
		t.Fatalf("%v %v", p.GPUTelemetry.DefaultURLs, p.GPUTelemetry.Interval)
	}
	env = map[string]string{"AIPERF_GPU_COLLECTION_INTERVAL": "0"}
	q := Default()
	if err := q.ApplyEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }); err == nil {
		t.Fatal("a zero interval accepted")
	}
}

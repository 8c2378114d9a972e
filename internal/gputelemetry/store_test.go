package gputelemetry

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/internal/scrape"
	"github.com/llmbench/llmbench/internal/stats"
)

const source = "http://gpu-node-01:9400/metrics"

// snapshot parses a fixture as one scrape taken at ms milliseconds.
func snapshot(t testing.TB, file string, ms int64) *scrape.Snapshot {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fams, err := scrape.Parse(f)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return &scrape.Snapshot{Endpoint: source, FirstByteNs: ms * 1e6, Families: fams}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// TestDefaultExposition reads dcgm-exporter's default counters for two
// GPUs: identity from the labels, values in AIPerf's units, and nothing
// for the fields the defaults do not have.
func TestDefaultExposition(t *testing.T) {
	s := NewStore(DefaultFields)
	rows := s.Add(snapshot(t, "dcgm_default.prom", 0))
	if len(rows) != 2 {
		t.Fatalf("%d rows, want one per GPU", len(rows))
	}
	g := rows[0].GPU
	want := GPU{Source: source, Index: 0, UUID: "GPU-3f1a9c2e-7b4d-4e8a-9c61-2d5b8e0f4a17", Model: "NVIDIA H100 80GB HBM3",
		PCIBusID: "00000000:18:00.0", Device: "nvidia0", Hostname: "gpu-node-01", Platform: "nvidia"}
	if *g != want {
		t.Fatalf("GPU 0 %+v\nwant %+v", *g, want)
	}
	if rows[1].GPU.Index != 1 || rows[1].GPU.UUID == g.UUID {
		t.Fatalf("GPU 1 %+v", *rows[1].GPU)
	}
	got := map[string]float64{}
	for _, v := range rows[0].Values {
		got[v.Field.Name] = v.V
	}
	// The fixture's GPU 0 lines, scaled by hand.
	for name, v := range map[string]float64{
		"nvidia_power_usage":         612.482,
		"nvidia_energy_consumption":  48213377125e-9, // mJ → MJ
		"nvidia_gpu_utilization":     98,
		"nvidia_memory_utilization":  41,
		"nvidia_memory_used":         73846 * 0.001048576, // MiB → GB
		"nvidia_temperature":         64,
		"nvidia_decoder_utilization": 0,
		"nvidia_encoder_utilization": 0,
		"nvidia_xid_errors":          0,
	} {
		if g, ok := got[name]; !ok || !near(g, v) {
			t.Errorf("%s = %v (present %v), want %v", name, g, ok, v)
		}
	}
	// SM activity and power violation are not default counters.
	if len(got) != 9 {
		t.Errorf("fields %v: want the 9 defaults AIPerf maps", got)
	}
}

// TestKubernetesLabels: namespace and pod come from dcgm-exporter's pod
// mapping.
func TestKubernetesLabels(t *testing.T) {
	rows := NewStore(DefaultFields).Add(snapshot(t, "dcgm_k8s.prom", 0))
	if len(rows) != 1 || rows[0].GPU.Namespace != "llm" || rows[0].GPU.Pod != "vllm-0" || len(rows[0].Values) != 3 {
		t.Fatalf("rows %+v", rows)
	}
}

// sequence is the four fixture scrapes 333 ms apart, then the fourth again
// three times: GPU 0's energy counter resets at the third, GPU 1 is gone
// from the third on.
func sequence(t *testing.T) *Store {
	s := NewStore(DefaultFields)
	for k, file := range []string{"dcgm_seq_1.prom", "dcgm_seq_2.prom", "dcgm_seq_3.prom", "dcgm_seq_4.prom", "dcgm_seq_4.prom", "dcgm_seq_4.prom", "dcgm_seq_4.prom"} {
		s.Add(snapshot(t, file, int64(k)*333))
	}
	return s
}

func metricOf(t *testing.T, g GPUSummary, name string) Stats {
	t.Helper()
	for _, m := range g.Metrics {
		if m.Field.Name == name {
			return m
		}
	}
	t.Fatalf("GPU %d has no %s", g.GPU.Index, name)
	return Stats{}
}

func TestCounterResetAndDisappearingGPU(t *testing.T) {
	s := sequence(t)
	for _, tc := range []struct {
		mode       CounterMode
		gpu0, gpu1 float64 // energy increase, mJ
	}{
		// 1,000,000 → 1,100,000 → reset to 50,000 (counted from 0) →
		// 150,000: 100,000 + 50,000 + 100,000.
		{CounterExact, 250_000, 70_000},
		// AIPerf: last (150,000) − first in window (1,000,000), clamped.
		{CounterAIPerf, 0, 70_000},
	} {
		gpus := s.Summarize(Window{StartNs: 0, EndNs: 1998e6, Mode: tc.mode})
		if len(gpus) != 2 {
			t.Fatalf("%s: %d GPUs", tc.mode, len(gpus))
		}
		e0, e1 := metricOf(t, gpus[0], "nvidia_energy_consumption"), metricOf(t, gpus[1], "nvidia_energy_consumption")
		if !e0.Counter || !near(e0.Avg, tc.gpu0*1e-9) || !near(e1.Avg, tc.gpu1*1e-9) {
			t.Errorf("%s: energy %v MJ and %v MJ, want %v and %v", tc.mode, e0.Avg, e1.Avg, tc.gpu0*1e-9, tc.gpu1*1e-9)
		}
		if e0.Resets != 1 || e1.Resets != 0 {
			t.Errorf("%s: resets %d and %d, want 1 and 0", tc.mode, e0.Resets, e1.Resets)
		}
		// GPU 1 stopped at 333 ms, more than three intervals before the end.
		if gpus[0].Partial || !gpus[1].Partial || gpus[1].LastNs != 333e6 {
			t.Errorf("%s: partial %v %v, GPU 1 last %d", tc.mode, gpus[0].Partial, gpus[1].Partial, gpus[1].LastNs)
		}
	}
	// GPU 0's power readings in the window: 300, 310, 320, 330 ×4.
	p := metricOf(t, s.Summarize(Window{StartNs: 0, EndNs: 1998e6})[0], "nvidia_power_usage")
	vals := []float64{300, 310, 320, 330, 330, 330, 330}
	want := stats.Summarize(slices.Clone(vals))
	if p.Count != 7 || !near(p.Avg, 2250.0/7) || p.Min != 300 || p.Max != 330 || !near(p.Sum, 2250) || !near(p.P[4], 330) || !near(p.Std, stats.StdDev(vals, 1)) || !near(p.P[0], want.P[0]) {
		t.Errorf("power stats %+v", p)
	}
	// One reading: std 0, as AIPerf's ddof-1 std with one sample.
	one := metricOf(t, s.Summarize(Window{StartNs: 300e6, EndNs: 400e6})[0], "nvidia_power_usage")
	if one.Count != 1 || one.Avg != 310 || one.Std != 0 {
		t.Errorf("one reading %+v", one)
	}
}

// TestCounterReadAtBoundaries: a window boundary between two readings
// reads the counter by linear interpolation.
func TestCounterReadAtBoundaries(t *testing.T) {
	s := sequence(t)
	// GPU 1: 5,000,000 at 0 ms, 5,070,000 at 333 ms; window [111, 222] ms
	// covers a third of that interval: 23,333.33 mJ. (GPU 1 is not partial
	// in so short a window.)
	gpus := s.Summarize(Window{StartNs: 111e6, EndNs: 222e6})
	if e := metricOf(t, gpus[1], "nvidia_energy_consumption"); math.Abs(e.Avg*1e9-70_000.0/3) > 1e-3 {
		t.Errorf("GPU 1 energy %v mJ, want 23333.33", e.Avg*1e9)
	}
}

// TestEnergy: the platform's energy from the counters, else from the
// power readings, and AIPerf's power-times-duration in aiperf mode.
func TestEnergy(t *testing.T) {
	s := sequence(t)
	w := Window{StartNs: 0, EndNs: 1998e6}
	e, ok := s.Energy(w)
	// Counters: 250 J (GPU 0) + 70 J (GPU 1); average power over 1.998 s.
	if !ok || e.Source != SourceEnergyCounter || !near(e.Joules, 320) || !near(e.AvgPowerW, 320/1.998) || e.GPUs != 2 {
		t.Fatalf("energy %+v", e)
	}
	// Total power: GPU 0's average reading plus GPU 1's (200, 210).
	if !near(e.TotalPowerW, 2250.0/7+205) {
		t.Errorf("total power %v", e.TotalPowerW)
	}

	// Without the energy field: the power readings integrated. GPU 0:
	// trapezoids over 0–999 ms, then 330 W to 1998 ms; GPU 1 (gone at
	// 333 ms, so partial): its two readings.
	fields := slices.DeleteFunc(slices.Clone(DefaultFields), func(f Field) bool { return f.Name == EnergyField })
	s = NewStore(fields)
	for k, file := range []string{"dcgm_seq_1.prom", "dcgm_seq_2.prom", "dcgm_seq_3.prom", "dcgm_seq_4.prom", "dcgm_seq_4.prom", "dcgm_seq_4.prom", "dcgm_seq_4.prom"} {
		s.Add(snapshot(t, file, int64(k)*333))
	}
	gpu0 := 0.333*(305+315+325) + 330*0.999
	gpu1 := 0.333 * 205
	e, ok = s.Energy(w)
	if !ok || e.Source != SourcePowerIntegral || !near(e.Joules, gpu0+gpu1) {
		t.Fatalf("integrated energy %+v, want %v J", e, gpu0+gpu1)
	}
	w.Mode = CounterAIPerf
	e, _ = s.Energy(w)
	if want := (2250.0/7 + 205) * 1.998; !near(e.Joules, want) || !near(e.AvgPowerW, 2250.0/7+205) {
		t.Fatalf("AIPerf's integration %+v, want %v J", e, want)
	}
}

// TestEnergyMixed: a GPU without the energy counter adds its integrated
// power; the source says the GPUs differ.
func TestEnergyMixed(t *testing.T) {
	s := NewStore(DefaultFields)
	for k, file := range []string{"dcgm_seq_1.prom", "dcgm_seq_2.prom", "dcgm_seq_3.prom", "dcgm_seq_4.prom", "dcgm_seq_4.prom", "dcgm_seq_4.prom", "dcgm_seq_4.prom"} {
		snap := snapshot(t, file, int64(k)*333)
		for i, f := range snap.Families {
			if f.Name == "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" {
				snap.Families[i].Series = slices.DeleteFunc(f.Series, func(ser scrape.Series) bool { return strings.Contains(ser.Key, `gpu="1"`) })
			}
		}
		s.Add(snap)
	}
	e, ok := s.Energy(Window{StartNs: 0, EndNs: 1998e6})
	// GPU 0's counter, 250 J; GPU 1's power, 200 → 210 W over 333 ms.
	if want := 250 + 0.333*205; !ok || e.Source != SourceMixed || !near(e.Joules, want) || e.GPUs != 2 {
		t.Fatalf("energy %+v, want %v J mixed", e, want)
	}
}

// TestEfficiency checks each energy metric's formula on round numbers.
func TestEfficiency(t *testing.T) {
	e := Energy{Platform: "nvidia", Joules: 1000, TotalPowerW: 480, AvgPowerW: 500, HasPower: true, HasEnergy: true}
	in := Inputs{TotalOSL: 4000, TotalISL: 6000, RequestCount: 100, Concurrency: 8,
		RequestLatencyAvgMs: 250, RequestThroughput: 50, OutputTokenThroughput: 2000, Goodput: 40, HasGoodput: true}
	want := map[string]float64{
		"nvidia_total_gpu_power":         480,
		"nvidia_total_gpu_energy":        1000,
		"nvidia_average_gpu_power":       500,
		"nvidia_output_tokens_per_joule": 4,
		"nvidia_energy_per_output_token": 250, // mJ
		"nvidia_energy_per_total_token":  100, // mJ
		"nvidia_energy_per_request":      10,
		"nvidia_energy_delay_product":    2.5, // 10 J × 0.25 s
		"nvidia_energy_per_user":         125,
		"nvidia_performance_per_watt":    0.1,
		"nvidia_output_tps_per_watt":     4,
		"nvidia_goodput_per_watt":        0.08,
	}
	got := Efficiency(e, in)
	if len(got) != len(want) {
		t.Fatalf("%d metrics, want %d: %+v", len(got), len(want), got)
	}
	for _, m := range got {
		if w, ok := want[m.Tag]; !ok || !near(m.Value, w) {
			t.Errorf("%s = %v, want %v", m.Tag, m.Value, w)
		}
	}
	// No energy: total power alone. No tokens: no token metrics.
	if got := Efficiency(Energy{Platform: "nvidia", TotalPowerW: 480, HasPower: true}, in); len(got) != 1 || got[0].Tag != "nvidia_total_gpu_power" {
		t.Errorf("without energy: %+v", got)
	}
	in.TotalOSL, in.TotalISL = 0, 0 // an endpoint that produces no tokens
	for _, m := range Efficiency(e, in) {
		if strings.Contains(m.Tag, "token") || strings.Contains(m.Tag, "tps") {
			t.Errorf("token metric %s without tokens", m.Tag)
		}
	}
}

func TestReadCustomFields(t *testing.T) {
	in := `# extra DCGM fields
DCGM_FI_DEV_POWER_USAGE, gauge, already mapped (in W).
DCGM_FI_DEV_SM_CLOCK, gauge, SM clock frequency (in MHz).
DCGM_FI_PROF_PIPE_TENSOR_ACTIVE, gauge, Ratio of cycles the tensor (HMMA) pipe is active.
DCGM_FI_DEV_PCIE_REPLAY_COUNTER, counter, Total number of PCIe retries.

DCGM_FI_DEV_FB_RESERVED, gauge, framebuffer memory reserved (in MiB).
`
	got, err := ReadCustomFields(strings.NewReader(in), DefaultFields)
	if err != nil {
		t.Fatal(err)
	}
	want := []Field{
		{Name: "nvidia_sm_clock", Source: "DCGM_FI_DEV_SM_CLOCK", Display: "SM Clock Frequency", Unit: "MHz", Scale: 1},
		{Name: "nvidia_pipe_tensor_active", Source: "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", Display: "Ratio Of Cycles The Tensor", Unit: "count", Scale: 1},
		{Name: "nvidia_pcie_replay_counter", Source: "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", Display: "Total Number Of PCIe Retries", Unit: "count", Scale: 1, Counter: true},
		{Name: "nvidia_fb_reserved", Source: "DCGM_FI_DEV_FB_RESERVED", Display: "Framebuffer Memory Reserved", Unit: "MiB", Scale: 1},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
	if got, err := ReadCustomFields(strings.NewReader("DCGM_FI_CUSTOM_Y, gauge, été (in W)"), nil); err != nil || got[0].Name != "nvidia_dcgm_fi_custom_y" || got[0].Display != "Été" || got[0].Unit != "W" {
		t.Errorf("DCGM_FI_ kept for other groups, UTF-8 title: %+v %v", got, err)
	}
	for _, bad := range []string{"DCGM_FI_DEV_X", "DCGM_FI_DEV_X, histogram, h", "POWER, gauge, h", "DCGM_FI_DEV_X, gauge, a\nDCGM_FI_PROF_X, gauge, b"} {
		if _, err := ReadCustomFields(strings.NewReader(bad), nil); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// FuzzReadCustomFields: any input gives fields or an error, never a panic,
// and every field it gives is a DCGM field with a name and a unit.
func FuzzReadCustomFields(f *testing.F) {
	f.Add("DCGM_FI_DEV_SM_CLOCK, gauge, SM clock frequency (in MHz).\n")
	f.Add("# c\nDCGM_FI_X,counter,\n")
	f.Add("DCGM_FI_DEV_A, gauge, (in )\n")
	f.Fuzz(func(t *testing.T, in string) {
		fields, err := ReadCustomFields(strings.NewReader(in), DefaultFields)
		if err != nil {
			return
		}
		for _, fl := range fields {
			if !strings.HasPrefix(fl.Source, "DCGM_FI_") || !strings.HasPrefix(fl.Name, "nvidia_") || fl.Unit == "" || fl.Scale != 1 {
				t.Fatalf("field %+v from %q", fl, in)
			}
		}
	})
}

// BenchmarkStoreAdd is the per-scrape cost of taking one dcgm-exporter
// scrape of two GPUs with every default counter.
func BenchmarkStoreAdd(b *testing.B) {
	snap := snapshot(b, "dcgm_default.prom", 0)
	s := NewStore(DefaultFields)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		snap.FirstByteNs = int64(i) * 333e6
		s.Add(snap)
	}
}

package mockserver

import (
	"bytes"
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/llmbench/llmbench/internal/endpoint"
)

// gpuEvent changes the running count by delta at a seconds after start.
type gpuEvent struct {
	at    float64
	delta int64
}

func secs(t0 time.Time, s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

// TestGPUMeterByHand drives the meter with explicit times. Energy of GPU i
// at T: (72+2i)·T + 9/N·∫running + 0.15/N·tokens.
func TestGPUMeterByHand(t *testing.T) {
	tests := []struct {
		name   string
		n      int
		events []gpuEvent
		tokens int
		at     float64
		want   []float64 // J per GPU
		busy   float64   // s
	}{
		// ∫running = 1·1 + 3·2 = 7 s; 9·7/2 = 31.5, 0.15·10/2 = 0.75.
		{"brief", 2, []gpuEvent{{1, 1}, {2, 2}, {4, -3}}, 10, 5, []float64{72*5 + 31.5 + 0.75, 74*5 + 31.5 + 0.75}, 3},
		{"idle", 1, nil, 0, 2.5, []float64{180}, 0},
		// ∫running = 0.25 + 1 = 1.25 s, still running at the end: 9·1.25/4 = 2.8125, 0.15·3/4 = 0.1125.
		{"running at read", 4, []gpuEvent{{0.5, 1}, {0.75, -1}, {1, 1}}, 3, 2, []float64{144 + 2.925, 148 + 2.925, 152 + 2.925, 156 + 2.925}, 1.25},
		// An admission stamped before the previous event counts its sequence time from its own
		// time (its busy time from the previous event's): ∫running = 1 + 1.5 = 2.5 s.
		{"late admission", 1, []gpuEvent{{2, 1}, {1.5, 1}, {3, -2}}, 0, 3, []float64{72*3 + 22.5}, 1},
		// A release stamped before the previous event counts at the previous event's time:
		// ∫running = 1·1 + 2·1 = 3 s.
		{"late release", 1, []gpuEvent{{1, 1}, {2, 1}, {3, -1}, {2.5, -1}}, 0, 4, []float64{72*4 + 27}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t0 := time.Unix(1000, 0)
			m := newGPUMeter(tt.n, DefaultGPUPowerProfile(), 1, t0)
			for _, e := range tt.events {
				m.change(secs(t0, e.at), e.delta)
			}
			for range tt.tokens {
				m.token()
			}
			got := m.energyAt(secs(t0, tt.at))
			r := m.read(secs(t0, tt.at))
			for i, w := range tt.want {
				if math.Abs(got[i]-w) > 1e-9 || math.Abs(r.energy[i]-w) > 1e-9 {
					t.Errorf("GPU %d: energy %v, read %v J, want %v", i, got[i], r.energy[i], w)
				}
				if p := w / tt.at; math.Abs(r.power[i]-p) > 1e-9 {
					t.Errorf("GPU %d: power %v W, want %v", i, r.power[i], p)
				}
			}
			if b := tt.busy / tt.at; math.Abs(r.busy-b) > 1e-12 {
				t.Errorf("busy %v, want %v", r.busy, b)
			}
		})
	}
}

func TestGPUMeterWindowsAndNil(t *testing.T) {
	t0 := time.Unix(1000, 0)
	m := newGPUMeter(2, DefaultGPUPowerProfile(), 1, t0)
	m.read(secs(t0, 10)) // idle window
	m.change(secs(t0, 11), 4)
	for range 100 {
		m.token()
	}
	r := m.read(secs(t0, 12))
	// Window 10–12 s: 4 sequences for 1 s, 100 tokens. GPU 0: 72·2 + 9·4/2 + 0.15·100/2 = 169.5 J.
	if want := 169.5 / 2; math.Abs(r.power[0]-want) > 1e-9 {
		t.Errorf("window power %v W, want %v", r.power[0], want)
	}
	if r.busy != 0.5 || r.running != 4 || r.tokenRate != 50 || !r.active {
		t.Errorf("window busy %v, running %v, token rate %v, active %v; want 0.5, 4, 50, true", r.busy, r.running, r.tokenRate, r.active)
	}
	if r := m.read(secs(t0, 12)); r.power[1] != 74+9*4/2 || r.busy != 1 {
		t.Errorf("empty window: power %v, busy %v; want the instantaneous 92 W, 1", r.power[1], r.busy)
	}

	var none *gpuMeter
	if newGPUMeter(0, DefaultGPUPowerProfile(), 1, t0) != nil {
		t.Fatal("a meter for 0 GPUs should be nil")
	}
	none.change(t0, 1)
	none.token()
	if none.energyAt(t0) != nil {
		t.Error("nil meter reported energy")
	}
}

func parseExposition(t *testing.T, b []byte) map[string]*dto.MetricFamily {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("parse exposition: %v\n%s", err, b)
	}
	return fams
}

var uuidRE = regexp.MustCompile(`^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// checkGPUFamilies checks every family's type, one series per GPU, and
// dcgm-exporter's labels; it returns the values by family, per GPU.
func checkGPUFamilies(t *testing.T, fams map[string]*dto.MetricFamily, n int) map[string][]float64 {
	t.Helper()
	vals := map[string][]float64{}
	for _, f := range gpuFamilies {
		fam, ok := fams[f.name]
		if !ok {
			t.Fatalf("no family %s", f.name)
		}
		if got := fam.GetType().String(); got != map[string]string{"gauge": "GAUGE", "counter": "COUNTER"}[f.typ] {
			t.Errorf("%s: type %s, want %s", f.name, got, f.typ)
		}
		if len(fam.Metric) != n {
			t.Fatalf("%s: %d series, want %d", f.name, len(fam.Metric), n)
		}
		vals[f.name] = make([]float64, n)
		uuids := map[string]bool{}
		for _, m := range fam.Metric {
			l := map[string]string{}
			for _, p := range m.Label {
				l[p.GetName()] = p.GetValue()
			}
			i, err := strconv.Atoi(l["gpu"])
			if err != nil || i < 0 || i >= n || len(l) != 7 || !uuidRE.MatchString(l["UUID"]) || uuids[l["UUID"]] ||
				l["device"] != "nvidia"+l["gpu"] || l["modelName"] != gpuModelName || l["Hostname"] != gpuHostname ||
				l["DCGM_FI_DRIVER_VERSION"] != gpuDriverVersion || !regexp.MustCompile(`^00000000:[0-9A-F]{2}:00\.0$`).MatchString(l["pci_bus_id"]) {
				t.Errorf("%s: labels %v", f.name, l)
				continue
			}
			uuids[l["UUID"]] = true
			vals[f.name][i] = m.GetGauge().GetValue() + m.GetCounter().GetValue()
		}
	}
	return vals
}

func TestGPUExpositionByHand(t *testing.T) {
	t0 := time.Unix(1000, 0)
	m := newGPUMeter(2, DefaultGPUPowerProfile(), 7, t0)
	for _, e := range []gpuEvent{{1, 1}, {2, 2}, {4, -3}} {
		m.change(secs(t0, e.at), e.delta)
	}
	for range 10 {
		m.token()
	}
	r := m.read(secs(t0, 5))
	r.kvFrac = 0.5
	b := m.appendExposition(nil, &r)
	for _, line := range []string{"# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).\n# TYPE DCGM_FI_DEV_POWER_USAGE gauge\n", "} 78.450\n", "} 392250\n", "} 0.223750\n"} {
		if !bytes.Contains(b, []byte(line)) {
			t.Errorf("exposition lacks %q:\n%s", line, b)
		}
	}
	vals := checkGPUFamilies(t, parseExposition(t, b), 2)
	// Window 0–5 s: busy 3 s with 7/3 sequences on average, 10 tokens.
	// FB used: 1024 + 16384/2 + 0.5·61440/2 = 24576 MiB.
	want := map[string][2]float64{
		"DCGM_FI_DEV_SM_CLOCK":                 {1980, 1980},
		"DCGM_FI_DEV_MEM_CLOCK":                {2619, 2619},
		"DCGM_FI_DEV_GPU_TEMP":                 {38, 38}, // 30 + 78.45/10, 30 + 80.45/10
		"DCGM_FI_DEV_POWER_USAGE":              {78.45, 80.45},
		"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": {392250, 402250},
		"DCGM_FI_DEV_GPU_UTIL":                 {60, 60},
		"DCGM_FI_DEV_MEM_COPY_UTIL":            {0, 0},
		"DCGM_FI_DEV_ENC_UTIL":                 {0, 0},
		"DCGM_FI_DEV_DEC_UTIL":                 {0, 0},
		"DCGM_FI_DEV_XID_ERRORS":               {0, 0},
		"DCGM_FI_DEV_POWER_VIOLATION":          {0, 0},
		"DCGM_FI_DEV_FB_FREE":                  {81559 - 24576, 81559 - 24576},
		"DCGM_FI_DEV_FB_USED":                  {24576, 24576},
		"DCGM_FI_PROF_SM_ACTIVE":               {0.22375, 0.22375}, // 0.6 · (0.3 + (7/3)/32)
	}
	for name, w := range want {
		for i := range w {
			if math.Abs(vals[name][i]-w[i]) > 1e-9 {
				t.Errorf("%s GPU %d = %v, want %v", name, i, vals[name][i], w[i])
			}
		}
	}
	if r2 := m.read(secs(t0, 6)); !bytes.Contains(m.appendExposition(nil, &r2), []byte("} 345\n")) {
		t.Error("SM clock not idle after an idle window")
	}
}

// gpuScrape scrapes h, bracketed by the exact energy before and after.
func gpuScrape(t *testing.T, s *Server, h http.Handler) (vals map[string][]float64, before, after []float64, mid time.Time) {
	t.Helper()
	t0 := time.Now()
	before = s.GPUEnergyJoules()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	after = s.GPUEnergyJoules()
	mid = t0.Add(time.Since(t0) / 2)
	if w.Code != http.StatusOK || w.Header().Get("Content-Type") != "text/plain; version=0.0.4" {
		t.Fatalf("GET /metrics: %d %q", w.Code, w.Header().Get("Content-Type"))
	}
	return checkGPUFamilies(t, parseExposition(t, w.Body.Bytes()), len(before)), before, after, mid
}

func TestGPUEndpointAgainstMeter(t *testing.T) {
	cfg := DefaultConfig()
	cfg.GPUs = 3
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := s.GPUHandler()
	v1, _, after1, mid1 := gpuScrape(t, s, h)
	time.Sleep(400 * time.Millisecond)
	v2, before2, after2, mid2 := gpuScrape(t, s, h)
	const energy, power = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "DCGM_FI_DEV_POWER_USAGE"
	for i := range cfg.GPUs {
		if mj := v2[energy][i]; mj < math.Floor(before2[i]*1000) || mj > math.Floor(after2[i]*1000) {
			t.Errorf("GPU %d: counter %v mJ outside the exact %v..%v J", i, mj, before2[i], after2[i])
		}
		if v1[energy][i] > math.Floor(after1[i]*1000) {
			t.Errorf("GPU %d: first counter %v mJ above the exact %v J", i, v1[energy][i], after1[i])
		}
		// The brackets' midpoints stand for the scrape instants: a
		// preemption inside a bracket on a loaded machine moves them, so
		// 5 %; the idle check below is exact.
		want := (v2[energy][i] - v1[energy][i]) / 1000 / mid2.Sub(mid1).Seconds()
		if got := v2[power][i]; math.Abs(got-want) > 0.05*want {
			t.Errorf("GPU %d: power %v W, want ΔmJ/Δt = %v W", i, got, want)
		}
		if idle := 72 + 2*float64(i); math.Abs(v2[power][i]-idle) > 1e-3 {
			t.Errorf("GPU %d: idle power %v W, want %v", i, v2[power][i], idle)
		}
	}

	none, err := New(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := none.StartGPUs(context.Background(), "127.0.0.1:0"); err == nil {
		t.Error("StartGPUs without GPUs did not fail")
	}
	w := httptest.NewRecorder()
	none.GPUHandler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if w.Code != http.StatusNotFound || none.GPUEnergyJoules() != nil {
		t.Errorf("no GPUs: GET /metrics %d, energy %v", w.Code, none.GPUEnergyJoules())
	}
	cfg.GPUs = 65
	if _, err := New(cfg); err == nil {
		t.Error("65 GPUs accepted")
	}
}

// TestGPUEnergyEndToEnd serves requests and bounds the energy they cost:
// each request runs at least TTFT + (tokens-1)·ITL, and every token adds
// its impulse exactly.
func TestGPUEnergyEndToEnd(t *testing.T) {
	const reqs, tokens, ttft, itl = 4, 10, 20 * time.Millisecond, 5 * time.Millisecond
	cfg := DefaultConfig()
	cfg.GPUs, cfg.TTFT, cfg.ITL = 2, ttft, itl
	s, url := start(t, cfg)
	gpuURL, stop, err := s.StartGPUs(context.Background(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if !regexp.MustCompile(`^http://127\.0\.0\.1:\d+/metrics$`).MatchString(gpuURL) {
		t.Fatalf("GPU metrics URL %q", gpuURL)
	}

	outer0 := time.Now()
	e0 := s.GPUEnergyJoules()
	inner0 := time.Now()
	payload := body(t, endpoint.Chat, "a b c", tokens, true)
	var wg sync.WaitGroup
	for range reqs {
		wg.Go(func() {
			if rec := do(t, url, endpoint.Chat, true, payload); !rec.Valid() {
				t.Errorf("request: %+v", rec.Err)
			}
		})
	}
	wg.Wait()
	inner := time.Since(inner0).Seconds()
	e1 := s.GPUEnergyJoules()
	outer := time.Since(outer0).Seconds()

	p, n := cfg.GPUPower, float64(cfg.GPUs)
	impulses := p.TokenJoules / n * reqs * tokens
	minSeq := reqs * (ttft + (tokens-1)*itl).Seconds()
	for i := range cfg.GPUs {
		idle := p.IdleWatts + float64(i)*p.IdleStepWatts
		lo := idle*inner + p.SeqWatts/n*minSeq + impulses
		hi := idle*outer + p.SeqWatts/n*reqs*outer + impulses
		if d := e1[i] - e0[i]; d < lo-1e-9 || d > hi+1e-9 {
			t.Errorf("GPU %d: energy rose %v J, want %v..%v", i, d, lo, hi)
		}
	}
	s.gpu.mu.Lock()
	gotTokens, running := s.gpu.now.tokens, s.gpu.running
	s.gpu.mu.Unlock()
	if gotTokens != reqs*tokens || running != 0 {
		t.Errorf("meter counted %d tokens, %d running; want %d, 0", gotTokens, running, reqs*tokens)
	}

	resp, err := http.Get(gpuURL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		t.Fatal(err)
	}
	vals := checkGPUFamilies(t, parseExposition(t, buf.Bytes()), cfg.GPUs)
	if u := vals["DCGM_FI_DEV_GPU_UTIL"][0]; u <= 0 || vals["DCGM_FI_DEV_SM_CLOCK"][0] != gpuSMClockBusy {
		t.Errorf("after load: GPU util %v%%, SM clock %v MHz", u, vals["DCGM_FI_DEV_SM_CLOCK"][0])
	}
}

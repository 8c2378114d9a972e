package mockserver

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// The simulated server can pose as NVIDIA's DCGM exporter (dcgm-exporter):
// GPUs whose power follows the load it really serves, metered exactly, so
// GPU telemetry and energy per token can be checked against known values.

// GPUPowerProfile is how much power each simulated GPU draws. GPU i of N
// draws IdleWatts + i*IdleStepWatts + SeqWatts*running/N, plus an energy
// impulse of TokenJoules/N per generated token: the model is tensor
// parallel, so every GPU takes an even share of the work.
type GPUPowerProfile struct {
	IdleWatts     float64 // per GPU, with nothing running; GPU i idles at IdleWatts + i*IdleStepWatts
	IdleStepWatts float64
	SeqWatts      float64 // per running sequence, for the whole server, shared evenly by the GPUs (tensor parallel)
	TokenJoules   float64 // per generated output token, whole server, shared evenly by the GPUs
}

// DefaultGPUPowerProfile is a plausible H100 SXM profile.
func DefaultGPUPowerProfile() GPUPowerProfile {
	return GPUPowerProfile{IdleWatts: 72, IdleStepWatts: 2, SeqWatts: 9, TokenJoules: 0.15}
}

// What the simulated GPUs report besides power, as dcgm-exporter writes it
// for an H100 SXM.
const (
	gpuModelName     = "NVIDIA H100 80GB HBM3"
	gpuHostname      = "llmbench-mock"
	gpuDriverVersion = "550.54.15"
	gpuMaxGPUs       = 64
	gpuSMClockBusy   = 1980 // MHz
	gpuSMClockIdle   = 345  // MHz
	gpuMemClock      = 2619 // MHz
	gpuFBTotalMiB    = 81559
	gpuFBBaseMiB     = 1024  // CUDA context, per GPU
	gpuFBWeightsMiB  = 16384 // model weights, split over the GPUs
	gpuFBKVMiB       = 61440 // KV cache when full, split over the GPUs
	gpuCopyTokensPct = 40    // tokens per second per percent of memory copy utilisation
)

// gpuMeter integrates the simulated GPUs' power exactly. The running count
// is piecewise constant between admissions and releases, so each event adds
// running×Δt to an integral of sequence time kept in integer nanoseconds;
// energy at any instant is a closed form of that integral, the time since
// start and the token count. A time before the last event counts as that
// event's time (but for an admission's sequence time, see change): callers
// take time.Now() before the mutex and may reach it a few nanoseconds out
// of order.
type gpuMeter struct {
	n      int
	prof   GPUPowerProfile
	start  time.Time
	labels []string // per GPU, the label set of every series

	mu      sync.Mutex
	running int64
	now     gpuWindow // the integrals up to the last event
	prev    gpuWindow // the integrals at the previous reading
}

// gpuWindow holds the meter's integrals up to an instant.
type gpuWindow struct {
	at     time.Time
	seqNS  int64 // ∫ running dt
	busyNS int64 // ∫ [running > 0] dt
	tokens int64
}

// newGPUMeter meters n GPUs from start; nil when n is 0, and a nil meter
// does nothing.
func newGPUMeter(n int, prof GPUPowerProfile, seed uint64, start time.Time) *gpuMeter {
	if n <= 0 {
		return nil
	}
	m := &gpuMeter{n: n, prof: prof, start: start, labels: make([]string, n)}
	m.now.at, m.prev.at = start, start
	for i := range n {
		r := rand.New(rand.NewPCG(seed, 0x475055+uint64(i)))
		a, b := r.Uint64(), r.Uint64()
		m.labels[i] = fmt.Sprintf(`gpu="%d",UUID="GPU-%08x-%04x-%04x-%04x-%012x",pci_bus_id="00000000:%02X:00.0",device="nvidia%d",modelName=%q,Hostname=%q,DCGM_FI_DRIVER_VERSION=%q`,
			i, a>>32, a>>16&0xffff, a&0xffff, b>>48, b&0xffffffffffff, 0x18+3*i, i, gpuModelName, gpuHostname, gpuDriverVersion)
	}
	return m
}

// advance integrates the running count up to t; m.mu is held.
func (m *gpuMeter) advance(t time.Time) {
	dt := t.Sub(m.now.at)
	if dt <= 0 {
		return
	}
	m.now.seqNS += m.running * int64(dt)
	if m.running > 0 {
		m.now.busyNS += int64(dt)
	}
	m.now.at = t
}

// change adds delta running sequences at t: +1 on admission, -1 on release.
// An admission told after later events (the engine admits a request at its
// arrival, the server tells the meter once it has parsed it) still counts
// its sequence time from t (its busy time from the later event); a release
// never does, which would take back energy already read.
func (m *gpuMeter) change(t time.Time, delta int64) {
	if m == nil {
		return
	}
	m.mu.Lock()
	if late := m.now.at.Sub(t); late > 0 && delta > 0 {
		m.now.seqNS += delta * int64(late)
	}
	m.advance(t)
	m.running += delta
	m.mu.Unlock()
}

// token counts one generated output token.
func (m *gpuMeter) token() {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.now.tokens++
	m.mu.Unlock()
}

// energy is GPU i's cumulative energy in joules up to w.
func (m *gpuMeter) energy(i int, w gpuWindow) float64 {
	n := float64(m.n)
	idle := m.prof.IdleWatts + float64(i)*m.prof.IdleStepWatts
	return idle*w.at.Sub(m.start).Seconds() + m.prof.SeqWatts/n*float64(w.seqNS)/1e9 + m.prof.TokenJoules/n*float64(w.tokens)
}

// energyAt is every GPU's cumulative energy in joules at t.
func (m *gpuMeter) energyAt(t time.Time) []float64 {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.advance(t)
	e := make([]float64, m.n)
	for i := range e {
		e[i] = m.energy(i, m.now)
	}
	return e
}

// gpuReading is what a scrape reports: cumulative energy, and averages over
// the window since the previous reading.
type gpuReading struct {
	energy    []float64 // J, cumulative since start
	power     []float64 // W, mean over the window
	busy      float64   // share of the window with a sequence running
	active    bool      // a sequence ran at some point in the window
	running   float64   // mean running sequences while busy
	tokenRate float64   // tokens per second over the window
	kvFrac    float64   // KV-cache usage, 0..1, now
}

// read reports at t and starts a new window there. The window is the
// meter's, not the scraper's: with one scraper, as is normal, it is the
// time since that scraper's previous scrape.
func (m *gpuMeter) read(t time.Time) gpuReading {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.advance(t)
	cur, prev := m.now, m.prev
	m.prev = cur
	r := gpuReading{energy: make([]float64, m.n), power: make([]float64, m.n)}
	dt := cur.at.Sub(prev.at).Seconds()
	for i := range m.n {
		r.energy[i] = m.energy(i, cur)
		if dt > 0 {
			r.power[i] = (r.energy[i] - m.energy(i, prev)) / dt
		} else {
			r.power[i] = m.prof.IdleWatts + float64(i)*m.prof.IdleStepWatts + m.prof.SeqWatts*float64(m.running)/float64(m.n)
		}
	}
	busyNS := cur.busyNS - prev.busyNS
	r.active = busyNS > 0 || m.running > 0
	if dt > 0 {
		r.busy = float64(busyNS) / 1e9 / dt
		r.tokenRate = float64(cur.tokens-prev.tokens) / dt
	} else if m.running > 0 {
		r.busy = 1
	}
	if busyNS > 0 {
		r.running = float64(cur.seqNS-prev.seqNS) / float64(busyNS)
	} else {
		r.running = float64(m.running)
	}
	return r
}

// gpuFamily is one metric family of the exposition, with the value of GPU
// i of n in reading r.
type gpuFamily struct {
	name, typ, help string
	value           func(r *gpuReading, i, n int, b []byte) []byte
}

func gpuConst(v int64) func(*gpuReading, int, int, []byte) []byte {
	return func(_ *gpuReading, _, _ int, b []byte) []byte { return strconv.AppendInt(b, v, 10) }
}

func gpuFBUsed(r *gpuReading, n int) int64 {
	return int64(math.Round(gpuFBBaseMiB + gpuFBWeightsMiB/float64(n) + min(1, max(0, r.kvFrac))*gpuFBKVMiB/float64(n)))
}

// gpuFamilies are the families dcgm-exporter serves by default (and
// SM_ACTIVE from its profiling set), in its order, with its help texts.
var gpuFamilies = []gpuFamily{
	{"DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz).", func(r *gpuReading, _, _ int, b []byte) []byte {
		if r.active {
			return strconv.AppendInt(b, gpuSMClockBusy, 10)
		}
		return strconv.AppendInt(b, gpuSMClockIdle, 10)
	}},
	{"DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz).", gpuConst(gpuMemClock)},
	{"DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C).", func(r *gpuReading, i, _ int, b []byte) []byte {
		return strconv.AppendInt(b, int64(math.Round(30+r.power[i]/10)), 10)
	}},
	{"DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).", func(r *gpuReading, i, _ int, b []byte) []byte {
		return strconv.AppendFloat(b, r.power[i], 'f', 3, 64)
	}},
	{"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter", "Total energy consumption since boot (in mJ).", func(r *gpuReading, i, _ int, b []byte) []byte {
		return strconv.AppendInt(b, int64(math.Floor(r.energy[i]*1000)), 10)
	}},
	{"DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %).", func(r *gpuReading, _, _ int, b []byte) []byte {
		return strconv.AppendInt(b, int64(math.Round(r.busy*100)), 10)
	}},
	{"DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %).", func(r *gpuReading, _, _ int, b []byte) []byte {
		return strconv.AppendInt(b, int64(math.Round(min(100, r.tokenRate/gpuCopyTokensPct))), 10)
	}},
	{"DCGM_FI_DEV_ENC_UTIL", "gauge", "Encoder utilization (in %).", gpuConst(0)},
	{"DCGM_FI_DEV_DEC_UTIL", "gauge", "Decoder utilization (in %).", gpuConst(0)},
	{"DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered.", gpuConst(0)},
	{"DCGM_FI_DEV_POWER_VIOLATION", "counter", "Throttling duration due to power constraints (in us).", gpuConst(0)},
	{"DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB).", func(r *gpuReading, _, n int, b []byte) []byte {
		return strconv.AppendInt(b, gpuFBTotalMiB-gpuFBUsed(r, n), 10)
	}},
	{"DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB).", func(r *gpuReading, _, n int, b []byte) []byte {
		return strconv.AppendInt(b, gpuFBUsed(r, n), 10)
	}},
	{"DCGM_FI_PROF_SM_ACTIVE", "gauge", "The ratio of cycles an SM has at least 1 warp assigned.", func(r *gpuReading, _, _ int, b []byte) []byte {
		return strconv.AppendFloat(b, r.busy*min(1, 0.3+r.running/32), 'f', 6, 64)
	}},
}

// appendExposition appends r as dcgm-exporter's Prometheus text exposition.
func (m *gpuMeter) appendExposition(b []byte, r *gpuReading) []byte {
	for _, f := range gpuFamilies {
		b = fmt.Appendf(b, "# HELP %s %s\n# TYPE %s %s\n", f.name, f.help, f.name, f.typ)
		for i, l := range m.labels {
			b = append(append(append(append(b, f.name...), '{'), l...), "} "...)
			b = append(f.value(r, i, m.n, b), '\n')
		}
	}
	return b
}

// GPUEnergyJoules is each simulated GPU's exact cumulative energy in joules
// since the server was created; nil without GPUs.
func (s *Server) GPUEnergyJoules() []float64 { return s.gpu.energyAt(time.Now()) }

// GPUHandler serves GET /metrics as dcgm-exporter would for the simulated
// GPUs. Power, utilisation and clocks are averages since the previous
// scrape of any client: one scraper is the normal case.
func (s *Server) GPUHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", s.serveGPUMetrics)
	return mux
}

func (s *Server) serveGPUMetrics(w http.ResponseWriter, _ *http.Request) {
	if s.gpu == nil {
		http.Error(w, "the mock server simulates no GPUs: set --gpus (--mock-gpus in profile)", http.StatusNotFound)
		return
	}
	r := s.gpu.read(time.Now())
	r.kvFrac = float64(s.state.kvTokens.Load()) / float64(s.state.kvCapacity)
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	_, _ = w.Write(s.gpu.appendExposition(make([]byte, 0, 16<<10), &r))
}

// StartGPUs serves GPUHandler on addr (for example "127.0.0.1:0") until ctx
// ends or stop is called, and returns the URL of its /metrics.
func (s *Server) StartGPUs(ctx context.Context, addr string) (metricsURL string, stop func(), err error) {
	if s.gpu == nil {
		return "", nil, errors.New("mock GPU exporter: the mock server simulates no GPUs; set --gpus (--mock-gpus in profile) above 0")
	}
	base, stop, err := listenAndServe(ctx, addr, s.GPUHandler())
	if err != nil {
		return "", nil, fmt.Errorf("mock GPU exporter: %w", err)
	}
	return base + "/metrics", stop, nil
}

package gputelemetry

import "math"

// Energy sources, as the export names them.
const (
	SourceEnergyCounter = "energy_counter"
	SourcePowerIntegral = "power_integral"
	// SourceMixed: some GPUs had the counter, the others only power.
	SourceMixed = "mixed"
)

// Energy is one platform's energy and power over the profiling window,
// summed over its GPUs.
type Energy struct {
	Platform string
	// Joules is the energy the GPUs used in the window.
	Joules float64
	// TotalPowerW is the sum over GPUs of their average power reading in
	// the window (AIPerf's *_total_gpu_power).
	TotalPowerW float64
	// AvgPowerW is the power the energy metrics divide by: Joules over the
	// window's length (AIPerf: TotalPowerW when the energy came from it).
	AvgPowerW float64
	// Source says where Joules came from: SourceEnergyCounter (each GPU's
	// DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION), SourcePowerIntegral (no GPU
	// had the counter: the power readings integrated) or SourceMixed.
	Source string
	GPUs   int
	// HasPower and HasEnergy say which readings there were at all.
	HasPower, HasEnergy bool
}

// Energy measures the NVIDIA GPUs' energy over w: each GPU's energy
// counter where it has one, else its power readings integrated (Source
// says which, "mixed" when GPUs differ). In CounterAIPerf mode, AIPerf's
// rule: the counters alone when any GPU has one, else the summed average
// power times the window. ok is false when no GPU reported power or energy.
func (s *Store) Energy(w Window) (e Energy, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pi, hasP := s.bySource["DCGM_FI_DEV_POWER_USAGE"]
	ei, hasE := s.bySource["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"]
	e = Energy{Platform: PlatformNVIDIA}
	durSec := float64(w.EndNs-w.StartNs) / 1e9
	var counterJ, integralJ float64
	var fromCounter, fromPower int
	for _, ser := range s.gpus {
		if len(ser.times) == 0 {
			continue
		}
		lo, hi, _ := ser.coverage(w)
		var power float64
		var hasPower, hasCounter bool
		if hasP {
			if st, ok := ser.gaugeStats(pi, w); ok {
				e.TotalPowerW += st.Avg
				e.HasPower = true
			}
			power, hasPower = ser.powerIntegral(pi, lo, hi)
		}
		if hasE {
			if st, ok := ser.counterStats(ei, w, lo, hi, FinalGrace); ok {
				// The field is in MJ (AIPerf's scaling of DCGM's mJ).
				counterJ += st.Avg * 1e6
				e.HasEnergy, hasCounter = true, true
			}
		}
		switch {
		case hasCounter:
			fromCounter++
		case hasPower:
			integralJ += power
			fromPower++
		default:
			continue
		}
		e.GPUs++
	}
	if e.GPUs == 0 {
		return e, false
	}
	switch {
	case w.Mode == CounterAIPerf && e.HasEnergy:
		e.Joules, e.Source = counterJ, SourceEnergyCounter
	case w.Mode == CounterAIPerf:
		// AIPerf: the summed average power times the window.
		e.Joules, e.Source, e.AvgPowerW = e.TotalPowerW*durSec, SourcePowerIntegral, e.TotalPowerW
		return e, true
	default:
		e.Joules = counterJ + integralJ
		switch {
		case fromPower == 0:
			e.Source = SourceEnergyCounter
		case fromCounter == 0:
			e.Source = SourcePowerIntegral
		default:
			e.Source = SourceMixed
		}
	}
	if durSec > 0 {
		e.AvgPowerW = e.Joules / durSec
	}
	return e, true
}

// Inputs are the client-side figures the energy metrics divide by.
type Inputs struct {
	// TotalOSL and TotalISL are the profiling requests' token totals, 0
	// for an endpoint that produces no tokens (no token metrics then).
	TotalOSL, TotalISL float64
	RequestCount       float64
	// Concurrency is the profiling concurrency (0: none set).
	Concurrency int
	// RequestLatencyAvgMs is the average request latency in ms.
	RequestLatencyAvgMs   float64
	RequestThroughput     float64
	OutputTokenThroughput float64
	// Goodput is good requests per second, when --goodput is set.
	Goodput    float64
	HasGoodput bool
}

// Metric is one energy metric: a single value, exported as AIPerf names
// it (<platform>_<name>).
type Metric struct {
	Tag, Header, Unit string
	Value             float64
	LargerIsBetter    bool
}

// Efficiency computes the energy metrics of AIPerf's
// energy_efficiency_analyzer (aiperf-0.12-features e5) from e and the
// client's figures. Only total power when there was no energy; a metric
// whose divisor is zero or missing is left out.
func Efficiency(e Energy, in Inputs) []Metric {
	prefix, vendor := e.Platform+"_", "NVIDIA "
	var out []Metric
	add := func(name, header, unit string, v float64, better bool) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return
		}
		out = append(out, Metric{Tag: prefix + name, Header: vendor + header, Unit: unit, Value: v, LargerIsBetter: better})
	}
	if e.HasPower {
		add("total_gpu_power", "Total GPU Power", "W", e.TotalPowerW, false)
	}
	if e.Joules <= 0 {
		return out
	}
	add("total_gpu_energy", "Total GPU Energy", "J", e.Joules, false)
	if e.AvgPowerW > 0 {
		add("average_gpu_power", "Average GPU Power", "W", e.AvgPowerW, false)
	}
	if in.TotalOSL > 0 {
		add("output_tokens_per_joule", "Output Tokens per Joule", "tokens/J", in.TotalOSL/e.Joules, true)
		add("energy_per_output_token", "Energy per Output Token", "mJ/token", 1000*e.Joules/in.TotalOSL, false)
	}
	if in.TotalOSL > 0 {
		add("energy_per_total_token", "Energy per Total Token", "mJ/token", 1000*e.Joules/(in.TotalISL+in.TotalOSL), false)
	}
	if in.RequestCount > 0 {
		perRequest := e.Joules / in.RequestCount
		add("energy_per_request", "Energy per Request", "joules/request", perRequest, false)
		if in.RequestLatencyAvgMs > 0 {
			add("energy_delay_product", "Energy-Delay Product", "J*s", perRequest*in.RequestLatencyAvgMs/1000, false)
		}
	}
	if in.Concurrency > 0 {
		add("energy_per_user", "Energy per User", "joules/user", e.Joules/float64(in.Concurrency), false)
	}
	if e.AvgPowerW > 0 {
		if in.RequestThroughput > 0 {
			add("performance_per_watt", "Performance per Watt", "requests/sec/W", in.RequestThroughput/e.AvgPowerW, true)
		}
		if in.TotalOSL > 0 && in.OutputTokenThroughput > 0 {
			add("output_tps_per_watt", "Output TPS per Watt", "tokens/sec/W", in.OutputTokenThroughput/e.AvgPowerW, true)
		}
		if in.HasGoodput {
			add("goodput_per_watt", "Goodput per Watt", "good-req/s/W", in.Goodput/e.AvgPowerW, true)
		}
	}
	return out
}

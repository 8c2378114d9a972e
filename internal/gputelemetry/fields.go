// Package gputelemetry turns DCGM exporter scrapes into GPU telemetry as
// AIPerf reports it: one series set per GPU (index, UUID, model, host),
// per-GPU statistics over the profiling window, and the energy metrics
// (energy per token, tokens per joule, performance per watt). Scraping is
// the scrape package's; this package only reads its snapshots.
package gputelemetry

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Field is one telemetry field: a DCGM metric, the name it is exported
// under, and how its raw value is scaled into the exported unit.
type Field struct {
	// Name is the exported name (nvidia_power_usage).
	Name string
	// Source is the DCGM metric read (DCGM_FI_DEV_POWER_USAGE).
	Source string
	// Display is the name a person reads (GPU Power Usage).
	Display string
	Unit    string
	// Scale multiplies the raw value (mJ → MJ: 1e-9).
	Scale float64
	// Counter fields report only their increase over the window.
	Counter bool
}

// Label is the field's name in tables and the CSV: its display name and
// unit.
func (f Field) Label() string {
	if f.Unit == "" || f.Unit == "count" {
		return f.Display
	}
	return f.Display + " (" + f.Unit + ")"
}

// DefaultFields are the DCGM fields AIPerf 0.12 reads, in the order of its
// CSV rows and console tables (aiperf-0.12-features e2, e4). The scaling is
// AIPerf's: energy mJ → MJ, framebuffer MiB → GB (× 0.001048576), SM
// activity ratio → %, power violation × 0.001 (labelled µs, as AIPerf
// labels it).
var DefaultFields = []Field{
	{Name: "nvidia_power_usage", Source: "DCGM_FI_DEV_POWER_USAGE", Display: "GPU Power Usage", Unit: "W", Scale: 1},
	{Name: "nvidia_energy_consumption", Source: "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", Display: "Energy Consumption", Unit: "MJ", Scale: 1e-9, Counter: true},
	{Name: "nvidia_gpu_utilization", Source: "DCGM_FI_DEV_GPU_UTIL", Display: "GPU Utilization", Unit: "%", Scale: 1},
	{Name: "nvidia_memory_utilization", Source: "DCGM_FI_DEV_MEM_COPY_UTIL", Display: "Memory Copy Utilization", Unit: "%", Scale: 1},
	{Name: "nvidia_memory_used", Source: "DCGM_FI_DEV_FB_USED", Display: "GPU Memory Used", Unit: "GB", Scale: 0.001048576},
	{Name: "nvidia_temperature", Source: "DCGM_FI_DEV_GPU_TEMP", Display: "GPU Temperature", Unit: "°C", Scale: 1},
	{Name: "nvidia_sm_utilization", Source: "DCGM_FI_PROF_SM_ACTIVE", Display: "SM Utilization", Unit: "%", Scale: 100},
	{Name: "nvidia_decoder_utilization", Source: "DCGM_FI_DEV_DEC_UTIL", Display: "Decoder Utilization", Unit: "%", Scale: 1},
	{Name: "nvidia_encoder_utilization", Source: "DCGM_FI_DEV_ENC_UTIL", Display: "Encoder Utilization", Unit: "%", Scale: 1},
	{Name: "nvidia_xid_errors", Source: "DCGM_FI_DEV_XID_ERRORS", Display: "XID Errors", Unit: "count", Scale: 1, Counter: true},
	{Name: "nvidia_power_violation", Source: "DCGM_FI_DEV_POWER_VIOLATION", Display: "Power Violation", Unit: "us", Scale: 0.001, Counter: true},
}

// Energy and power are the fields the energy metrics are computed from.
const (
	PowerField  = "nvidia_power_usage"
	EnergyField = "nvidia_energy_consumption"
)

// unitPattern finds "(in X)" in a custom field's help text.
var unitPattern = regexp.MustCompile(`\(in ([^)]+)\)`)

// customUnits maps the "(in X)" tags AIPerf recognises to its units.
var customUnits = map[string]string{
	"w": "W", "%": "%", "gb": "GB", "mb": "MB", "kb": "KB", "gib": "GiB", "mib": "MiB", "kib": "KiB",
	"mhz": "MHz", "ghz": "GHz", "c": "°C", "°c": "°C", "count": "count", "us": "us", "µs": "us", "ms": "ms", "s": "s",
	"mj": "MJ", "j": "J",
}

// ReadCustomFields reads a custom metrics file as AIPerf does (e1): lines
// `DCGM_FI_<FIELD>, gauge|counter, help`, `#` comments and blank lines
// skipped. Fields already among known are left out. Each is exported as
// nvidia_<field without DCGM_FI_DEV_ or DCGM_FI_PROF_, lower-case>, named by
// the help text before "(" in title case, with the unit of "(in X)"
// (count when none is given or recognised).
func ReadCustomFields(r io.Reader, known []Field) ([]Field, error) {
	have, names := map[string]bool{}, map[string]bool{}
	for _, f := range known {
		have[f.Source], names[f.Name] = true, true
	}
	var out []Field
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.SplitN(line, ",", 3)
		if len(parts) < 2 {
			return nil, fmt.Errorf("line %d: want 'DCGM_FI_<FIELD>, gauge|counter, help', got %q", n, line)
		}
		source, kind := strings.TrimSpace(parts[0]), strings.ToLower(strings.TrimSpace(parts[1]))
		if !strings.HasPrefix(source, "DCGM_FI_") {
			return nil, fmt.Errorf("line %d: %q is not a DCGM field (DCGM_FI_…)", n, source)
		}
		if kind != "gauge" && kind != "counter" {
			return nil, fmt.Errorf("line %d: type %q: use gauge or counter", n, kind)
		}
		if have[source] {
			continue
		}
		have[source] = true
		help := ""
		if len(parts) == 3 {
			help = strings.TrimSpace(parts[2])
		}
		short := strings.TrimPrefix(strings.TrimPrefix(source, "DCGM_FI_DEV_"), "DCGM_FI_PROF_")
		f := Field{Name: "nvidia_" + strings.ToLower(short), Source: source, Scale: 1, Counter: kind == "counter", Unit: "count"}
		if names[f.Name] {
			// DCGM_FI_DEV_X and DCGM_FI_PROF_X would share a name.
			return nil, fmt.Errorf("line %d: %s would be exported as %s, which another field already is", n, source, f.Name)
		}
		names[f.Name] = true
		display, _, _ := strings.Cut(help, "(")
		f.Display = titleCase(strings.TrimRight(strings.TrimSpace(display), "."))
		if f.Display == "" {
			f.Display = titleCase(strings.ReplaceAll(strings.ToLower(short), "_", " "))
		}
		if m := unitPattern.FindStringSubmatch(help); m != nil {
			if u, ok := customUnits[strings.ToLower(strings.TrimSpace(m[1]))]; ok {
				f.Unit = u
			}
		}
		out = append(out, f)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read custom GPU metrics: %w", err)
	}
	return out, nil
}

func titleCase(s string) string {
	words := strings.Fields(s)
	for i, w := range words {
		r, size := utf8.DecodeRuneInString(w)
		words[i] = string(unicode.ToUpper(r)) + w[size:]
	}
	return strings.Join(words, " ")
}

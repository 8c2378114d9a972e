package config

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

// GPUTelemetry configures the collection of GPU telemetry from DCGM
// exporters (AIPerf's --gpu-telemetry, aiperf-0.12-features e1).
type GPUTelemetry struct {
	// Items are --gpu-telemetry's values as given; Finish sorts them into
	// the fields below.
	Items []string `json:"-"`
	// Show is set by --gpu-telemetry (with or without values): the
	// per-GPU tables are printed. Without it telemetry is still collected
	// from the default URLs and exported, but not shown, as AIPerf does.
	Show     bool `json:"show"`
	Disabled bool `json:"disabled"`
	// URLs are the DCGM exporter URLs given, normalised, without
	// credentials; DefaultURLs are always probed too (unless Disabled),
	// silently when nothing answers there.
	URLs        []string         `json:"urls"`
	DefaultURLs []string         `json:"default_urls"`
	Users       CredentialsByURL `json:"-"`
	// Dashboard is AIPerf's live panel, asked for with "dashboard":
	// llmbench has none and says so; the tables come after the run.
	Dashboard bool `json:"dashboard,omitempty"`
	// MetricsFile is a custom DCGM metrics CSV (extends the defaults).
	MetricsFile string `json:"custom_metrics_file,omitempty"`
	// CounterWindow is how counters (energy) are measured over the
	// profiling window: exact (llmbench's) or aiperf.
	CounterWindow string `json:"counter_window"`
	// From AIPERF_GPU_COLLECTION_INTERVAL and AIPERF_GPU_REACHABILITY_TIMEOUT.
	Interval            time.Duration `json:"-"`
	ReachabilityTimeout time.Duration `json:"-"`
}

// Counter windows of --gpu-counter-window.
const (
	CounterWindowExact  = "exact"
	CounterWindowAIPerf = "aiperf"
)

// defaultDCGMURLs are the DCGM exporter URLs AIPerf probes by default
// (AIPERF_GPU_DEFAULT_DCGM_ENDPOINTS).
var defaultDCGMURLs = []string{"http://localhost:9400/metrics", "http://localhost:9401/metrics"}

func defaultGPUTelemetry() GPUTelemetry {
	return GPUTelemetry{
		DefaultURLs:         append([]string(nil), defaultDCGMURLs...),
		CounterWindow:       CounterWindowExact,
		Interval:            333 * time.Millisecond,
		ReachabilityTimeout: 10 * time.Second,
	}
}

// gpuTelemetryItems is --gpu-telemetry: a flag that may stand alone
// ("true": show the tables) or take items.
type gpuTelemetryItems struct{ g *GPUTelemetry }

func (v gpuTelemetryItems) Set(s string) error {
	v.g.Show = true
	if s == "true" {
		return nil
	}
	for _, item := range strings.FieldsFunc(s, func(c rune) bool { return c == ',' || c == ' ' }) {
		v.g.Items = append(v.g.Items, item)
	}
	return nil
}

func (v gpuTelemetryItems) String() string {
	if v.g == nil {
		return ""
	}
	return strings.Join(v.g.Items, " ")
}

func (v gpuTelemetryItems) IsBoolFlag() bool { return true }

// applyEnv reads AIPerf's GPU telemetry environment settings.
func (g *GPUTelemetry) applyEnv(lookup func(string) (string, bool)) error {
	if raw, ok := lookup("AIPERF_GPU_DEFAULT_DCGM_ENDPOINTS"); ok {
		var urls []string
		for _, item := range strings.FieldsFunc(strings.Trim(raw, "[]"), func(c rune) bool { return c == ',' || c == ' ' }) {
			if item = strings.Trim(item, `"'`); item != "" {
				urls = append(urls, item)
			}
		}
		g.DefaultURLs = urls
	}
	if err := secondsFromEnv(lookup, map[string]*time.Duration{
		"AIPERF_GPU_COLLECTION_INTERVAL":  &g.Interval,
		"AIPERF_GPU_REACHABILITY_TIMEOUT": &g.ReachabilityTimeout,
	}); err != nil {
		return err
	}
	if g.Interval <= 0 || g.ReachabilityTimeout <= 0 {
		return errors.New("AIPERF_GPU_COLLECTION_INTERVAL and AIPERF_GPU_REACHABILITY_TIMEOUT must be positive")
	}
	return nil
}

// finish sorts --gpu-telemetry's items as AIPerf does, in order: pynvml
// and amdsmi (local libraries, which llmbench has no cgo-free binding for:
// refused), dashboard (no live dashboard here: noted, ignored), a name
// ending .csv (custom metrics file, must exist), anything starting with
// http or holding ':' (a DCGM exporter URL), anything else an error.
func (g *GPUTelemetry) finish() error {
	if g.Disabled && (g.Show || len(g.Items) > 0) {
		return errors.New("--gpu-telemetry and --no-gpu-telemetry contradict each other: give one")
	}
	switch g.CounterWindow {
	case CounterWindowExact, CounterWindowAIPerf:
	default:
		return fmt.Errorf("--gpu-counter-window %q: use exact or aiperf", g.CounterWindow)
	}
	for _, item := range g.Items {
		low := strings.ToLower(item)
		switch {
		case low == "pynvml" || low == "amdsmi":
			return fmt.Errorf("--gpu-telemetry %s: llmbench reads GPU telemetry from DCGM exporters only (NVML and AMD SMI have no Go binding without cgo, which the static binary leaves out); start one with 'docker run -d --gpus all -p 9400:9400 nvcr.io/nvidia/k8s/dcgm-exporter' and pass --gpu-telemetry localhost:9400", item)
		case low == "dashboard":
			g.Dashboard = true
		case strings.HasSuffix(low, ".csv"):
			if g.MetricsFile != "" {
				return fmt.Errorf("--gpu-telemetry: two custom metrics files (%s and %s): give one", g.MetricsFile, item)
			}
			if _, err := os.Stat(item); err != nil {
				return fmt.Errorf("--gpu-telemetry: custom metrics file %s: %w", item, err)
			}
			g.MetricsFile = item
		case strings.HasPrefix(low, "http") || strings.Contains(item, ":"):
			u, user, err := NormalizeMetricsURL(item)
			if err != nil {
				return fmt.Errorf("--gpu-telemetry: %w", err)
			}
			if !slices.Contains(g.URLs, u) {
				g.URLs = append(g.URLs, u)
			}
			if user != nil {
				if g.Users == nil {
					g.Users = CredentialsByURL{}
				}
				g.Users[u] = user
			}
		default:
			return fmt.Errorf("--gpu-telemetry %q: give DCGM exporter URLs (host:port or http://…), a custom metrics .csv file, or dashboard", item)
		}
	}
	for i, u := range g.DefaultURLs {
		n, _, err := NormalizeMetricsURL(u)
		if err != nil {
			return fmt.Errorf("AIPERF_GPU_DEFAULT_DCGM_ENDPOINTS: %w", err)
		}
		g.DefaultURLs[i] = n
	}
	return nil
}

// Package clientload watches the client's own load during a run: the CPU
// the process uses against the cores it may use, and how late a timer that
// should fire now actually fires (the delay every timestamp the client
// takes may carry). When either shows the client was saturated, the
// latencies it measured are inflated by the client, not only the server,
// and the run says so.
package clientload

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/llmbench/llmbench/internal/stats"
)

// Thresholds above which the client counts as saturated.
const (
	// SaturatedCPU is the share of the usable cores the process used.
	SaturatedCPU = 0.85
	// SaturatedTimerDelay is the timer delay p99.
	SaturatedTimerDelay = 2 * time.Millisecond
	// MinTimerSamples is how many timer samples a verdict needs: with
	// fewer (a run under a second) the p99 is the single worst tick and the
	// utilisation one garbage collection's, which a hiccup decides.
	MinTimerSamples = 100
)

// Report is what the monitor saw.
type Report struct {
	// Cores is GOMAXPROCS: the cores the client may use.
	Cores int `json:"cores"`
	// CPUUtilization is the process's CPU time over wall time × Cores, over
	// the whole watch; PeakCPUUtilization the highest over one second.
	CPUUtilization     float64 `json:"cpu_utilization"`
	PeakCPUUtilization float64 `json:"peak_cpu_utilization"`
	// Timer delay: how late a timer fired, in ms.
	TimerDelayP50Ms float64 `json:"timer_delay_p50_ms"`
	TimerDelayP99Ms float64 `json:"timer_delay_p99_ms"`
	TimerDelayMaxMs float64 `json:"timer_delay_max_ms"`
	Samples         int     `json:"samples"`
	Saturated       bool    `json:"saturated"`
}

// Warning is the message for a saturated client, or "".
func (r Report) Warning() string {
	if !r.Saturated {
		return ""
	}
	return fmt.Sprintf("WARNING  The client was saturated: it used %.0f%% of its %d core(s) (peak %.0f%% over one second), and its timers fired %.2f ms late at p99 (max %.2f ms). Its latency figures (TTFT, ITL, request latency) include the client's own delays. Lower --concurrency or --request-rate, or give the client more cores; with --mock the simulated server shares the client's process.",
		100*r.CPUUtilization, r.Cores, 100*r.PeakCPUUtilization, r.TimerDelayP99Ms, r.TimerDelayMaxMs)
}

// sample is one tick: when it was due and fired, and the process's CPU
// time then.
type sample struct {
	due, fired time.Time
	cpu        time.Duration
}

// Monitor samples every interval until Stop.
type Monitor struct {
	interval time.Duration
	cpu      func() time.Duration
	stop     chan struct{}
	done     chan struct{}
	mu       sync.Mutex
	samples  []sample
	start    time.Time
	startCPU time.Duration
}

// Start begins watching, sampling every interval.
func Start(interval time.Duration) *Monitor {
	m := &Monitor{interval: interval, cpu: processCPU, stop: make(chan struct{}), done: make(chan struct{})}
	m.start, m.startCPU = time.Now(), m.cpu()
	go m.run()
	return m
}

func (m *Monitor) run() {
	defer close(m.done)
	t := time.NewTimer(m.interval)
	defer t.Stop()
	due := m.start.Add(m.interval)
	for {
		select {
		case <-m.stop:
			return
		case fired := <-t.C:
			s := sample{due: due, fired: fired, cpu: m.cpu()}
			m.mu.Lock()
			m.samples = append(m.samples, s)
			m.mu.Unlock()
			// The next tick is due an interval after this one fired, so a
			// late tick is counted once, not again in every tick after it.
			due = fired.Add(m.interval)
			t.Reset(time.Until(due))
		}
	}
}

// Stop ends the watch and reports.
func (m *Monitor) Stop() Report {
	close(m.stop)
	<-m.done
	end, endCPU := time.Now(), m.cpu()
	m.mu.Lock()
	defer m.mu.Unlock()
	return analyse(m.samples, m.start, m.startCPU, end, endCPU, runtime.GOMAXPROCS(0))
}

// analyse turns samples into a report: utilisation over the whole watch
// and its highest over any one-second stretch of samples, and the timer
// delay percentiles.
func analyse(samples []sample, start time.Time, startCPU time.Duration, end time.Time, endCPU time.Duration, cores int) Report {
	r := Report{Cores: cores, Samples: len(samples)}
	if wall := end.Sub(start); wall > 0 && cores > 0 {
		r.CPUUtilization = (endCPU - startCPU).Seconds() / (wall.Seconds() * float64(cores))
	}
	// Peak: from each sample, the first one at least a second later.
	j := 0
	points := append([]sample{{fired: start, cpu: startCPU}}, samples...)
	for i := range points {
		for j < len(points) && points[j].fired.Sub(points[i].fired) < time.Second {
			j++
		}
		if j == len(points) {
			break
		}
		wall := points[j].fired.Sub(points[i].fired).Seconds()
		r.PeakCPUUtilization = math.Max(r.PeakCPUUtilization, (points[j].cpu-points[i].cpu).Seconds()/(wall*float64(cores)))
	}
	if r.PeakCPUUtilization == 0 {
		r.PeakCPUUtilization = r.CPUUtilization // a watch under a second
	}
	if len(samples) > 0 {
		delays := make([]float64, len(samples))
		for i, s := range samples {
			delays[i] = float64(max(s.fired.Sub(s.due), 0)) / 1e6
		}
		slices.Sort(delays)
		r.TimerDelayP50Ms = stats.PercentileSorted(delays, 50)
		r.TimerDelayP99Ms = stats.PercentileSorted(delays, 99)
		r.TimerDelayMaxMs = delays[len(delays)-1]
	}
	// Under MinTimerSamples samples (a second at the 10 ms interval) one
	// garbage collection or one late tick decides either figure.
	enough := len(samples) >= MinTimerSamples
	lateTimers := enough && r.TimerDelayP99Ms >= float64(SaturatedTimerDelay)/1e6
	r.Saturated = enough && r.CPUUtilization >= SaturatedCPU || lateTimers
	return r
}

// Package clientload watches the client's own load during a run: the CPU
// the process used (and waited for) against the cores it may use, and how
// late a timer that should fire now actually fires (the delay every
// timestamp the client takes may carry). It tells two causes apart: a
// saturated client (it needed more CPU than it got: its own latency
// figures are inflated) and a noisy host (timers late while the client
// is mostly idle: other processes delay its wake-ups), and judges whether
// those delays matter against the latencies the run measured.
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

// Thresholds of the report.
const (
	// SaturatedCPU is the share of the usable cores the process used or
	// waited for (ready to run, another thread on its core) above which
	// the client is saturated: it needed nearly all of its cores, so every
	// timestamp it takes queues behind its own work. The wait counts
	// because a client that gets half a core and wants a whole one is as
	// saturated as one that uses a whole core.
	SaturatedCPU = 0.85
	// MinSaturatedUse is the share of its cores the client must have used
	// for its wait to count towards SaturatedCPU. An idle client on a
	// crowded core waits at every wake-up (16 busy loops on its core: 2 %
	// used, 73 % waited): a noisy host, not a client short of CPU. One
	// that wants whole cores still gets a tenth of them beside up to eight
	// busy loops per core; below that the host, not the client, is the
	// story (its timers are then late too).
	MinSaturatedUse = 0.10
	// SaturatedShare is the share of the watch, in stretches of a second
	// or more, the client must have been saturated in to be called so when
	// it was not over the whole watch: a run's start-up burst is not the
	// run, but its drain (the last streams finishing) should not hide it.
	SaturatedShare = 0.5
	// HalfDemand and QueuedTimerDelay: a client that used or waited for
	// half of its cores or more, and whose timers came 20 ms late on
	// average (its goroutines queued for its cores: its 10 ms ticks came
	// at under a third of their rate), is saturated too. On a loaded host
	// a client that is plainly saturated (ticks seconds late) shows only
	// 80 % used or waited for: some of its time is neither (page faults,
	// threads gone). The mean, not the p99: such a client has too few
	// ticks for a p99. The CPU evidence stays necessary: late timers on an
	// idle client are a noisy host.
	HalfDemand       = 0.5
	QueuedTimerDelay = 20 * time.Millisecond
	// waitEvery is how often the run-queue wait is read: it lists every
	// thread, too costly for every tick.
	waitEvery = time.Second
	// LateTimerDelay is the timer delay p99 above which timers are late:
	// on a quiet machine a Go timer fires within a fraction of a
	// millisecond. Late timers on a client that is not saturated mean a
	// noisy host.
	LateTimerDelay = 2 * time.Millisecond
	// DelayMatters is the share of the finest latency's p50 (ITL when
	// streaming, else TTFT or request latency) the timer delay p99 must
	// exceed to matter: 2 ms is noise against 600 ms latencies, but not
	// against 5 ms inter-token gaps, whose tail it would then shift by
	// over a tenth.
	DelayMatters = 0.10
	// MinTimerSamples is how many timer samples a verdict on the timers
	// needs: with fewer the p99 is the single worst tick.
	MinTimerSamples = 100
	// MinWatch is how long the watch must last for a verdict on the CPU:
	// over a shorter one the utilisation is one garbage collection's. (A
	// saturated client's ticks come late and few, so the CPU verdict
	// cannot wait for MinTimerSamples of them.)
	MinWatch = time.Second
)

// Report is what the monitor saw.
type Report struct {
	// Cores is GOMAXPROCS: the cores the client may use.
	Cores int `json:"cores"`
	// CPUUtilization is the process's CPU time over wall time × Cores, over
	// the whole watch; PeakCPUUtilization the highest over one second.
	CPUUtilization     float64 `json:"cpu_utilization"`
	PeakCPUUtilization float64 `json:"peak_cpu_utilization"`
	// CPUWait is the time the process's threads waited, ready to run, for
	// a core, over wall time × Cores (Linux; absent elsewhere). Threads
	// waiting at once each count, so it can exceed 1 on a crowded host.
	CPUWait *float64 `json:"cpu_wait,omitempty"`
	// Timer delay: how late a timer fired, in ms.
	TimerDelayP50Ms float64 `json:"timer_delay_p50_ms"`
	TimerDelayP99Ms float64 `json:"timer_delay_p99_ms"`
	TimerDelayMaxMs float64 `json:"timer_delay_max_ms"`
	TimerDelayAvgMs float64 `json:"timer_delay_avg_ms"`
	Samples         int     `json:"samples"`
	// SaturatedFor is the share of the watch the client was saturated in
	// (its CPU demand SaturatedCPU or more over a second or so).
	SaturatedFor float64 `json:"saturated_share"`
	// Seconds is how long the watch lasted.
	Seconds float64 `json:"seconds"`
	// Saturated: the client used (or waited for) SaturatedCPU of its
	// cores, over the watch or SaturatedShare of it, or HalfDemand with
	// its timers QueuedTimerDelay late on average. Timer delay alone never
	// makes it so.
	Saturated bool `json:"saturated"`
	// NoisyHost: timers fired LateTimerDelay late or more while the client
	// was not saturated; the delay comes from outside the client.
	NoisyHost bool `json:"noisy_host"`
	// LatencyCompared names the finest latency reported and
	// LatencyP50Ms its p50, set by Judge; TimerDelayShare is the timer
	// delay p99 over it, and TimerDelayMatters says it exceeds
	// DelayMatters.
	LatencyCompared   string  `json:"latency_compared,omitempty"`
	LatencyP50Ms      float64 `json:"latency_compared_p50_ms,omitempty"`
	TimerDelayShare   float64 `json:"timer_delay_share,omitempty"`
	TimerDelayMatters bool    `json:"timer_delay_matters"`
}

// CPUJudged says the watch lasted long enough to judge the CPU by.
func (r Report) CPUJudged() bool { return r.Seconds >= MinWatch.Seconds() }

// TimersJudged says there were timer samples enough to judge them by.
func (r Report) TimersJudged() bool { return r.Samples >= MinTimerSamples }

// demand is the share of its cores the client used, and waited for when
// it used MinSaturatedUse or more.
func demand(used, wait float64) float64 {
	if used >= MinSaturatedUse {
		return used + wait
	}
	return used
}

// Judge compares the timer delay with the finest latency the run
// reported (its tag and p50 in ms); a p50 of 0 or less leaves it unjudged.
func (r *Report) Judge(latency string, p50Ms float64) {
	if p50Ms <= 0 {
		return
	}
	r.LatencyCompared, r.LatencyP50Ms = latency, p50Ms
	r.TimerDelayShare = r.TimerDelayP99Ms / p50Ms
	r.TimerDelayMatters = r.TimersJudged() && r.TimerDelayShare > DelayMatters
}

// Warning is the message for a saturated client, or for timers late
// enough to matter against the latencies measured; "" otherwise.
func (r Report) Warning() string {
	switch {
	case r.Saturated:
		return fmt.Sprintf("WARNING  The client was saturated for %.0f%% of the run: it used %s of its %d core(s) (peak %.0f%% over one second), and its timers fired %.2f ms late at p99 (max %.2f ms). Its latency figures (TTFT, ITL, request latency) include the client's own delays. Lower --concurrency or --request-rate, or give the client more cores; with --mock the simulated server shares the client's process.",
			100*r.SaturatedFor, r.cpuText(), r.Cores, 100*r.PeakCPUUtilization, r.TimerDelayP99Ms, r.TimerDelayMaxMs)
	case r.TimerDelayMatters:
		cause := "the host's scheduler woke it late"
		if r.NoisyHost {
			cause = "a noisy host: other processes kept it from running on time"
		}
		return fmt.Sprintf("WARNING  The client's timers fired %.2f ms late at p99 (max %.2f ms) while it used only %s of its %d core(s): not a saturated client but %s. That is %.0f%% of the %s p50 (%.2f ms), so those figures carry the delay. Run on a quieter machine, or pin the client to its own cores (taskset).",
			r.TimerDelayP99Ms, r.TimerDelayMaxMs, r.cpuText(), r.Cores, cause, 100*r.TimerDelayShare, r.LatencyCompared, r.LatencyP50Ms)
	}
	return ""
}

// cpuText is the CPU used, and waited for when known.
func (r Report) cpuText() string {
	if r.CPUWait != nil && *r.CPUWait >= 0.005 {
		return fmt.Sprintf("%.0f%% (and waited for another %.0f%%)", 100*r.CPUUtilization, 100**r.CPUWait)
	}
	return fmt.Sprintf("%.0f%%", 100*r.CPUUtilization)
}

// sample is one tick: when it was due and fired, and the process's CPU
// time then.
type sample struct {
	due, fired time.Time
	// at is when cpu (and wait) were read: on a saturated client long
	// after the tick fired, when its goroutine got to run.
	at  time.Time
	cpu time.Duration
	// wait is the run-queue wait then, when haveWait (every waitEvery).
	wait     time.Duration
	haveWait bool
}

// Monitor samples every interval until Stop.
type Monitor struct {
	interval time.Duration
	cpu      func() time.Duration
	wait     func() (time.Duration, bool)
	stop     chan struct{}
	done     chan struct{}
	mu       sync.Mutex
	samples  []sample
	start    time.Time
	startCPU time.Duration
	// startWait is the run-queue wait at the start; haveWait says it is known.
	startWait time.Duration
	haveWait  bool
}

// Start begins watching, sampling every interval.
func Start(interval time.Duration) *Monitor {
	m := &Monitor{interval: interval, cpu: processCPU, wait: runQueueWait, stop: make(chan struct{}), done: make(chan struct{})}
	// The wait is read at the start and the end only: it lists every
	// thread, too costly for every tick.
	m.startWait, m.haveWait = m.wait()
	m.start, m.startCPU = time.Now(), m.cpu()
	go m.run()
	return m
}

func (m *Monitor) run() {
	defer close(m.done)
	t := time.NewTimer(m.interval)
	defer t.Stop()
	due := m.start.Add(m.interval)
	lastWait := m.start
	for {
		select {
		case <-m.stop:
			return
		case fired := <-t.C:
			s := sample{due: due, fired: fired, at: time.Now(), cpu: m.cpu()}
			if m.haveWait && fired.Sub(lastWait) >= waitEvery {
				s.wait, s.haveWait = m.wait()
				lastWait = fired
			}
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
	endWait, ok := m.wait()
	m.mu.Lock()
	defer m.mu.Unlock()
	all := append([]sample{{fired: m.start, at: m.start, cpu: m.startCPU, wait: m.startWait, haveWait: m.haveWait}}, m.samples...)
	all = append(all, sample{fired: end, at: end, cpu: endCPU, wait: endWait, haveWait: ok && m.haveWait})
	return analyse(all, runtime.GOMAXPROCS(0))
}

// analyse turns points (the watch's start, every tick, its end) into a
// report: utilisation over the whole watch and its highest over any
// one-second stretch, the run-queue wait over the watch, the share of it
// the client was saturated in, and the timer delay percentiles.
func analyse(points []sample, cores int) Report {
	first, last := points[0], points[len(points)-1]
	ticks := points[1 : len(points)-1]
	r := Report{Cores: cores, Samples: len(ticks), Seconds: last.at.Sub(first.at).Seconds()}
	share := func(a, b sample, d time.Duration) float64 {
		return d.Seconds() / (b.at.Sub(a.at).Seconds() * float64(cores))
	}
	if r.Seconds > 0 && cores > 0 {
		r.CPUUtilization = share(first, last, last.cpu-first.cpu)
		if first.haveWait && last.haveWait {
			w := share(first, last, max(last.wait-first.wait, 0))
			r.CPUWait = &w
		}
	}
	// Peak: from each point, the first one at least a second later.
	j := 0
	for i := range points {
		for j < len(points) && points[j].at.Sub(points[i].at) < time.Second {
			j++
		}
		if j == len(points) {
			break
		}
		r.PeakCPUUtilization = math.Max(r.PeakCPUUtilization, share(points[i], points[j], points[j].cpu-points[i].cpu))
	}
	if r.PeakCPUUtilization == 0 {
		r.PeakCPUUtilization = r.CPUUtilization // a watch under a second
	}
	// Saturated stretches: between wait readings (a second or so apart),
	// or, without them, between ticks a second apart.
	var saturated time.Duration
	prev := first
	for k, p := range points[1:] {
		isLast := k == len(points)-2
		if p.at.Sub(prev.at) < waitEvery && !isLast || first.haveWait && !p.haveWait {
			continue
		}
		wait := 0.0
		if p.haveWait && prev.haveWait {
			wait = share(prev, p, max(p.wait-prev.wait, 0))
		}
		if cores > 0 && demand(share(prev, p, p.cpu-prev.cpu), wait) >= SaturatedCPU {
			saturated += p.at.Sub(prev.at)
		}
		prev = p
	}
	if r.Seconds > 0 {
		r.SaturatedFor = saturated.Seconds() / r.Seconds
	}
	if len(ticks) > 0 {
		delays := make([]float64, len(ticks))
		for i, s := range ticks {
			delays[i] = float64(max(s.fired.Sub(s.due), 0)) / 1e6
		}
		slices.Sort(delays)
		r.TimerDelayP50Ms = stats.PercentileSorted(delays, 50)
		r.TimerDelayP99Ms = stats.PercentileSorted(delays, 99)
		r.TimerDelayMaxMs = delays[len(delays)-1]
		var sum float64
		for _, d := range delays {
			sum += d
		}
		r.TimerDelayAvgMs = sum / float64(len(delays))
	}
	whole := r.CPUUtilization
	if r.CPUWait != nil {
		whole = demand(r.CPUUtilization, *r.CPUWait)
	}
	queued := whole >= HalfDemand && r.TimerDelayAvgMs >= float64(QueuedTimerDelay)/1e6
	r.Saturated = r.CPUJudged() && (whole >= SaturatedCPU || r.SaturatedFor >= SaturatedShare || queued)
	r.NoisyHost = r.TimersJudged() && !r.Saturated && r.TimerDelayP99Ms >= float64(LateTimerDelay)/1e6
	return r
}

package clientload

import (
	"math"
	"runtime"
	"strings"
	"testing"
	"time"
)

// ticks makes n samples a tick apart from t0, each delayed as delay(i)
// says, with CPU time growing as cpu(i) says.
func ticks(t0 time.Time, n int, tick time.Duration, delay func(int) time.Duration, cpu func(int) time.Duration) []sample {
	out := make([]sample, n)
	for i := range out {
		due := t0.Add(time.Duration(i+1) * tick)
		out[i] = sample{due: due, fired: due.Add(delay(i)), cpu: cpu(i)}
		out[i].at = out[i].fired
	}
	return out
}

// watch makes the points of a watch from t0 to end around samples: the
// process's CPU time endCPU at the end, and its run-queue wait (negative:
// unknown) read every 10th tick, growing with the CPU time.
func watch(t0 time.Time, samples []sample, end time.Time, endCPU, wait time.Duration) []sample {
	points := []sample{{fired: t0, at: t0, haveWait: wait >= 0}}
	for i, s := range samples {
		if wait >= 0 && (i+1)%10 == 0 && endCPU > 0 {
			s.wait, s.haveWait = time.Duration(float64(wait)*float64(s.cpu)/float64(endCPU)), true
		}
		points = append(points, s)
	}
	return append(points, sample{fired: end, at: end, cpu: endCPU, wait: max(wait, 0), haveWait: wait >= 0})
}

func TestAnalyse(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	const tick = 100 * time.Millisecond
	none := func(int) time.Duration { return 100 * time.Microsecond }
	// Two ticks of 100 fired 5 ms late: p99 (linear between ranks, as
	// everywhere) falls between the last two ranks: 5 ms.
	twoLate := func(i int) time.Duration {
		if i == 10 || i == 50 {
			return 5 * time.Millisecond
		}
		return 100 * time.Microsecond
	}
	steady := func(perTick time.Duration) func(int) time.Duration {
		return func(i int) time.Duration { return time.Duration(i+1) * perTick }
	}
	tests := []struct {
		name      string
		samples   []sample
		endCPU    time.Duration
		wait      time.Duration // -1: unknown
		wantUtil  float64
		wantPeak  float64
		wantP99   float64
		saturated bool
		noisy     bool
	}{
		{
			// 10 s on 2 cores, 19 s of CPU: 95 %, evenly.
			name:    "busy",
			samples: ticks(t0, 100, tick, none, steady(190*time.Millisecond)),
			endCPU:  19 * time.Second, wait: -1, wantUtil: 0.95, wantPeak: 0.95, wantP99: 0.1, saturated: true,
		},
		{
			name:    "idle",
			samples: ticks(t0, 100, tick, none, steady(20*time.Millisecond)),
			endCPU:  2 * time.Second, wait: 0, wantUtil: 0.1, wantPeak: 0.1, wantP99: 0.1,
		},
		{
			// Another process takes half of each core: 9 s used (45 %),
			// 10 s waited (50 %): it wanted 95 % of its cores.
			name:    "starved",
			samples: ticks(t0, 100, tick, none, steady(90*time.Millisecond)),
			endCPU:  9 * time.Second, wait: 10 * time.Second, wantUtil: 0.45, wantPeak: 0.45, wantP99: 0.1, saturated: true,
		},
		{
			// Idle on a crowded core: 2 % used, 73 % waited at its
			// wake-ups, timers late: a noisy host, not a saturated client.
			name:    "crowded idle",
			samples: ticks(t0, 100, tick, twoLate, steady(4*time.Millisecond)),
			endCPU:  400 * time.Millisecond, wait: 14600 * time.Millisecond, wantUtil: 0.02, wantPeak: 0.02, wantP99: 5, noisy: true,
		},
		{
			// 60 % used, 20 % waited for: 80 % on the whole, in no second
			// 85 %; but its timers came 20 ms late on average (every tenth
			// tick 200 ms late: mean 20.09 ms): its goroutines queued for
			// its cores.
			name: "half busy, queued",
			samples: ticks(t0, 100, tick, func(i int) time.Duration {
				if i%10 == 0 {
					return 200 * time.Millisecond
				}
				return 100 * time.Microsecond
			}, steady(120*time.Millisecond)),
			endCPU: 12 * time.Second, wait: 4 * time.Second, wantUtil: 0.6, wantPeak: 0.6, wantP99: 200, saturated: true,
		},
		{
			// The same with punctual timers: busy, not saturated.
			name:    "half busy",
			samples: ticks(t0, 100, tick, none, steady(120*time.Millisecond)),
			endCPU:  12 * time.Second, wait: 4 * time.Second, wantUtil: 0.6, wantPeak: 0.6, wantP99: 0.1,
		},
		{
			// Late timers on an idle client: a noisy host, not saturation.
			name:    "late timers",
			samples: ticks(t0, 100, tick, twoLate, steady(20*time.Millisecond)),
			endCPU:  2 * time.Second, wait: -1, wantUtil: 0.1, wantPeak: 0.1, wantP99: 5, noisy: true,
		},
		{
			// 5 ticks, one 9 ms late. Its "p99" is that one tick, too few
			// samples to judge the timers by.
			name: "few samples",
			samples: ticks(t0, 5, tick, func(i int) time.Duration {
				if i == 3 {
					return 9 * time.Millisecond
				}
				return 100 * time.Microsecond
			}, steady(20*time.Millisecond)),
			endCPU: 100 * time.Millisecond, wait: -1, wantUtil: 0.005, wantPeak: 0.005, wantP99: 8.644,
		},
		{
			// Busy for 7 s (47.5 % used, 45 % waited for), then the last
			// streams drain for 3 s (5 % used): 68 % used or waited for
			// over the whole, but saturated for 70 % of the watch.
			name: "drain",
			samples: ticks(t0, 100, tick, none, func(i int) time.Duration {
				if i < 70 {
					return time.Duration(i+1) * 95 * time.Millisecond
				}
				return 6650*time.Millisecond + time.Duration(i-69)*10*time.Millisecond
			}),
			endCPU: 6950 * time.Millisecond, wait: 6650 * time.Millisecond, wantUtil: 0.3475, wantPeak: 0.475, wantP99: 0.1, saturated: true,
		},
		{
			// Both cores busy for the first second, idle after: 20 % on the
			// whole, 100 % at its peak; not saturated on the whole.
			name: "burst",
			samples: ticks(t0, 100, tick, none, func(i int) time.Duration {
				return min(time.Duration(i+1)*200*time.Millisecond, 2*time.Second)
			}),
			endCPU: 2 * time.Second, wait: -1, wantUtil: 0.1, wantPeak: 1, wantP99: 0.1,
		},
	}
	for _, tc := range tests {
		end := t0.Add(10 * time.Second)
		r := analyse(watch(t0, tc.samples, end, tc.endCPU, tc.wait), 2)
		if !near(r.CPUUtilization, tc.wantUtil) || math.Abs(r.PeakCPUUtilization-tc.wantPeak) > 0.01 || !near(r.TimerDelayP99Ms, tc.wantP99) ||
			r.Saturated != tc.saturated || r.NoisyHost != tc.noisy {
			t.Errorf("%s: %+v\nwant util %v peak %v p99 %v saturated %v noisy %v", tc.name, r, tc.wantUtil, tc.wantPeak, tc.wantP99, tc.saturated, tc.noisy)
		}
		if (r.CPUWait != nil) != (tc.wait >= 0) {
			t.Errorf("%s: cpu_wait %v for a wait of %v", tc.name, r.CPUWait, tc.wait)
		}
		// Before Judge, only saturation warns.
		if w := r.Warning(); (w != "") != tc.saturated {
			t.Errorf("%s: warning %q", tc.name, w)
		}
	}
	// Saturated, its ticks late and few (30 over 10 s): the CPU is judged
	// by the watch's length, not the ticks.
	few := analyse(watch(t0, ticks(t0, 30, 330*time.Millisecond, none, steady(627*time.Millisecond)), t0.Add(10*time.Second), 19*time.Second, -1), 2)
	if !few.Saturated || few.TimersJudged() {
		t.Errorf("few ticks: %+v", few)
	}
	// A watch under a second is not judged, however busy.
	short := analyse(watch(t0, ticks(t0, 4, tick, none, steady(190*time.Millisecond)), t0.Add(500*time.Millisecond), 950*time.Millisecond, -1), 2)
	if short.Saturated || short.CPUJudged() {
		t.Errorf("short watch: %+v", short)
	}
	busy := analyse(watch(t0, tests[0].samples, t0.Add(10*time.Second), 19*time.Second, -1), 2)
	if w := busy.Warning(); !strings.Contains(w, "saturated for 100% of the run: it used 95% of its 2 core(s)") || !strings.Contains(w, "0.10 ms late at p99") {
		t.Errorf("warning %q", w)
	}
	starved := analyse(watch(t0, tests[2].samples, t0.Add(10*time.Second), 9*time.Second, 10*time.Second), 2)
	if w := starved.Warning(); !strings.Contains(w, "saturated for 100% of the run: it used 45% (and waited for another 50%) of its 2 core(s)") {
		t.Errorf("warning %q", w)
	}
}

// TestJudge: late timers warn only against latencies they are a tenth of.
func TestJudge(t *testing.T) {
	base := Report{Cores: 2, CPUUtilization: 0.02, TimerDelayP99Ms: 5, TimerDelayMaxMs: 9, Samples: 400, Seconds: 4, NoisyHost: true}
	tests := []struct {
		name    string
		r       Report
		latency string
		p50     float64
		share   float64
		matters bool
		want    string
	}{
		// 5 ms against 600 ms: under 1 %, noise.
		{"slow latencies", base, "time_to_first_token", 600, 5.0 / 600, false, ""},
		// 5 ms against 10 ms ITL: half of it.
		{"fast ITL", base, "inter_token_latency", 10, 0.5, true, "noisy host"},
		// Exactly a tenth does not exceed it.
		{"a tenth", base, "inter_token_latency", 50, 0.1, false, ""},
		// 0.5 ms against 1 ms on a quiet host: matters, the scheduler's own delay.
		{"quiet host, fast ITL", Report{Cores: 1, TimerDelayP99Ms: 0.5, Samples: 400}, "inter_token_latency", 1, 0.5, true, "scheduler woke it late"},
		{"too few samples", Report{Cores: 1, TimerDelayP99Ms: 5, Samples: 50}, "inter_token_latency", 1, 5, false, ""},
		{"no latency", base, "", 0, 0, false, ""},
	}
	for _, tc := range tests {
		r := tc.r
		r.Judge(tc.latency, tc.p50)
		if !near(r.TimerDelayShare, tc.share) || r.TimerDelayMatters != tc.matters {
			t.Errorf("%s: share %v matters %v, want %v %v", tc.name, r.TimerDelayShare, r.TimerDelayMatters, tc.share, tc.matters)
		}
		w := r.Warning()
		if (w == "") != (tc.want == "") || !strings.Contains(w, tc.want) || (w != "" && strings.Contains(w, "saturated:")) {
			t.Errorf("%s: warning %q, want one with %q", tc.name, w, tc.want)
		}
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

// TestMonitorSamples: the real monitor ticks and reads this process's CPU
// time while a goroutine spins.
func TestMonitorSamples(t *testing.T) {
	m := Start(5 * time.Millisecond)
	for end := time.Now().Add(200 * time.Millisecond); time.Now().Before(end); {
	}
	r := m.Stop()
	if r.Samples < 5 || r.CPUUtilization <= 0 || r.Cores < 1 || r.TimerDelayMaxMs < r.TimerDelayP50Ms {
		t.Fatalf("report %+v", r)
	}
	if runtime.GOOS == "linux" && r.CPUWait == nil {
		t.Fatalf("no run-queue wait on Linux: %+v", r)
	}
}

package clientload

import (
	"math"
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
	}
	return out
}

func TestAnalyse(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	const tick = 100 * time.Millisecond
	none := func(int) time.Duration { return 100 * time.Microsecond }
	tests := []struct {
		name      string
		samples   []sample
		endCPU    time.Duration
		wantUtil  float64
		wantPeak  float64
		wantP99   float64
		saturated bool
	}{
		{
			// 10 s on 2 cores, 19 s of CPU: 95 %, evenly.
			name:    "busy",
			samples: ticks(t0, 100, tick, none, func(i int) time.Duration { return time.Duration(i+1) * 190 * time.Millisecond }),
			endCPU:  19 * time.Second, wantUtil: 0.95, wantPeak: 0.95, wantP99: 0.1, saturated: true,
		},
		{
			name:    "idle",
			samples: ticks(t0, 100, tick, none, func(i int) time.Duration { return time.Duration(i+1) * 20 * time.Millisecond }),
			endCPU:  2 * time.Second, wantUtil: 0.1, wantPeak: 0.1, wantP99: 0.1, saturated: false,
		},
		{
			// Two ticks of 100 fired 5 ms late: p99 (linear between ranks, as
			// everywhere) falls between the last two ranks: 5 ms.
			name: "late timers",
			samples: ticks(t0, 100, tick, func(i int) time.Duration {
				if i == 10 || i == 50 {
					return 5 * time.Millisecond
				}
				return 100 * time.Microsecond
			}, func(i int) time.Duration { return time.Duration(i+1) * 20 * time.Millisecond }),
			endCPU: 2 * time.Second, wantUtil: 0.1, wantPeak: 0.1, wantP99: 5, saturated: true,
		},
		{
			// A short run: 5 ticks, one 9 ms late. Its "p99" is that one
			// tick, too few samples to call the client saturated.
			name: "few samples",
			samples: ticks(t0, 5, tick, func(i int) time.Duration {
				if i == 3 {
					return 9 * time.Millisecond
				}
				return 100 * time.Microsecond
			}, func(i int) time.Duration { return time.Duration(i+1) * 20 * time.Millisecond }),
			endCPU: 100 * time.Millisecond, wantUtil: 0.005, wantPeak: 0.005, wantP99: 8.644, saturated: false,
		},
		{
			// Both cores busy for the first second, idle after: 20 % on the
			// whole, 100 % at its peak; not saturated on the whole.
			name: "burst",
			samples: ticks(t0, 100, tick, none, func(i int) time.Duration {
				return min(time.Duration(i+1)*200*time.Millisecond, 2*time.Second)
			}),
			endCPU: 2 * time.Second, wantUtil: 0.1, wantPeak: 1, wantP99: 0.1, saturated: false,
		},
	}
	for _, tc := range tests {
		end := t0.Add(10 * time.Second)
		r := analyse(tc.samples, t0, 0, end, tc.endCPU, 2)
		if !near(r.CPUUtilization, tc.wantUtil) || math.Abs(r.PeakCPUUtilization-tc.wantPeak) > 0.01 || !near(r.TimerDelayP99Ms, tc.wantP99) || r.Saturated != tc.saturated {
			t.Errorf("%s: %+v\nwant util %v peak %v p99 %v saturated %v", tc.name, r, tc.wantUtil, tc.wantPeak, tc.wantP99, tc.saturated)
		}
		if w := r.Warning(); (w != "") != tc.saturated {
			t.Errorf("%s: warning %q", tc.name, w)
		}
	}
	busy := analyse(tests[0].samples, t0, 0, t0.Add(10*time.Second), 19*time.Second, 2)
	if w := busy.Warning(); !strings.Contains(w, "used 95% of its 2 core(s)") || !strings.Contains(w, "0.10 ms late at p99") {
		t.Errorf("warning %q", w)
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
}

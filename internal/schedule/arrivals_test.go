package schedule

import (
	"context"
	"math"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/llmbench/llmbench/internal/record"
)

// TestGammaMoments: Gamma(k) has mean k and variance k; the arrivals'
// gaps have mean 1/rate and coefficient of variation 1/√k.
func TestGammaMoments(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	const n = 200000
	for _, k := range []float64{0.25, 0.5, 1, 4, 20} {
		var sum, sq float64
		for range n {
			x := Gamma(rng, k)
			sum += x
			sq += x * x
		}
		mean := sum / n
		variance := sq/n - mean*mean
		// se of the mean √(k/n); of the variance about √(k²(2+6/k)/n).
		if math.Abs(mean-k) > 5*math.Sqrt(k/n) || math.Abs(variance-k)/k > 5*math.Sqrt((2+6/k)/n) {
			t.Errorf("Gamma(%g): mean %.4f variance %.4f, want %g and %g", k, mean, variance, k, k)
		}
		a, _ := NewArrivals(PatternGamma, k)
		var gs, gq float64
		for range n {
			g := a.Gap(rng, 50).Seconds()
			gs += g
			gq += g * g
		}
		gm := gs / n
		cv := math.Sqrt(gq/n-gm*gm) / gm
		if math.Abs(gm-0.02)/0.02 > 0.02 || math.Abs(cv-1/math.Sqrt(k)) > 0.03/math.Sqrt(k)+0.01 {
			t.Errorf("gamma arrivals, smoothness %g: mean gap %.5f s, cv %.3f; want 0.02 s and %.3f", k, gm, cv, 1/math.Sqrt(k))
		}
	}
	for _, bad := range []float64{0, -1, math.Inf(1), math.NaN()} {
		if _, err := NewArrivals(PatternGamma, bad); err == nil {
			t.Errorf("smoothness %g accepted", bad)
		}
	}
	if _, err := NewArrivals("burst", 1); err == nil {
		t.Error("an unknown pattern accepted")
	}
}

// TestRampShapes checks the ramps against values computed by hand.
func TestRampShapes(t *testing.T) {
	// 100 req/s over 60 s: starts at 100 × 0.1/60, reaches 100 at 60 s.
	for _, c := range []struct {
		at   time.Duration
		want float64
	}{{0, 100.0 / 600}, {30 * time.Second, 100.0/600 + (100-100.0/600)/2}, {60 * time.Second, 100}, {90 * time.Second, 100}} {
		if got := rateAt(100, time.Minute, c.at); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("rate at %v: %g, want %g", c.at, got, c.want)
		}
	}
	if got := rateAt(7, 0, 0); got != 7 {
		t.Errorf("no ramp: %g", got)
	}
	// 5 slots over 2 s: at 0, 0.5, 1, 1.5 and 2 s.
	for k, want := range []time.Duration{0, 500 * time.Millisecond, time.Second, 1500 * time.Millisecond, 2 * time.Second} {
		if got := slotOpens(k, 5, 2*time.Second); got != want {
			t.Errorf("slot %d opens at %v, want %v", k, got, want)
		}
	}
}

// sendLog records when each job went out.
type sendLog struct {
	mu   sync.Mutex
	jobs []Job
	at   []time.Time
}

func (l *sendLog) send(hold time.Duration) Sender {
	return func(ctx context.Context, j Job) {
		l.mu.Lock()
		l.jobs, l.at = append(l.jobs, j), append(l.at, time.Now())
		l.mu.Unlock()
		select {
		case <-time.After(hold):
		case <-ctx.Done():
		}
	}
}

// TestFixedSchedule: each job is due exactly at the phase start plus its
// time, and goes out no earlier and (on an idle machine, within a loose
// 50 ms) not much later, whatever the jobs before it are doing.
func TestFixedSchedule(t *testing.T) {
	times := []time.Duration{0, 20 * time.Millisecond, 20 * time.Millisecond, 70 * time.Millisecond, 150 * time.Millisecond}
	var l sendLog
	var start time.Time
	obs := Observer{PhaseStart: func(ph record.Phase, at time.Time) { start = at }}
	out, err := Run(context.Background(), Plan{Times: times, Count: len(times)}, l.send(100*time.Millisecond), obs)
	if err != nil || out.Sent != len(times) {
		t.Fatalf("sent %d, err %v", out.Sent, err)
	}
	for i, j := range l.jobs {
		want := start.Add(times[j.Index])
		if !j.Due.Equal(want) || !j.Scheduled || !j.PhaseStart.Equal(start) {
			t.Errorf("job %d due %v after start, want %v", j.Index, j.Due.Sub(start), times[j.Index])
		}
		if late := l.at[i].Sub(want); late < 0 || late > 50*time.Millisecond {
			t.Errorf("job %d sent %v after its time", j.Index, late)
		}
	}
	if err := (Plan{Times: times, Count: 2}).Validate(); err == nil {
		t.Error("a fixed schedule with another count accepted")
	}
}

// TestConcurrencyRamp: with 4 slots over 90 ms the first sessions go out
// at about 0, 30, 60 and 90 ms, never before their slot opens.
func TestConcurrencyRamp(t *testing.T) {
	for name, plan := range map[string]Plan{
		"concurrency": {Concurrency: 4, ConcurrencyRamp: 90 * time.Millisecond, Count: 4},
		"rate cap":    {Rate: 1000, Arrivals: constantArrivals{}, Concurrency: 4, ConcurrencyRamp: 90 * time.Millisecond, Count: 4},
	} {
		var l sendLog
		var start time.Time
		obs := Observer{PhaseStart: func(ph record.Phase, at time.Time) { start = at }}
		if _, err := Run(context.Background(), plan, l.send(300*time.Millisecond), obs); err != nil {
			t.Fatal(err)
		}
		offsets := make([]time.Duration, len(l.at))
		for i, at := range l.at {
			offsets[i] = at.Sub(start)
		}
		sort.Slice(offsets, func(i, j int) bool { return offsets[i] < offsets[j] })
		for k, off := range offsets {
			if open := time.Duration(k) * 30 * time.Millisecond; off < open {
				t.Errorf("%s: session %d went out at %v, before its slot opened at %v", name, k, off, open)
			}
		}
		if len(offsets) != 4 || offsets[3] > 250*time.Millisecond {
			t.Errorf("%s: offsets %v: the last slot should open at 90 ms, not wait for a session to end", name, offsets)
		}
	}
}

// TestWarmupByDuration: the warm-up sends until its duration is up, then
// profiling sends exactly its count, numbered after the warm-up's.
func TestWarmupByDuration(t *testing.T) {
	var l sendLog
	out, err := Run(context.Background(), Plan{Concurrency: 2, WarmupDuration: 60 * time.Millisecond, Count: 5}, l.send(10*time.Millisecond), Observer{})
	if err != nil {
		t.Fatal(err)
	}
	warm, prof := 0, 0
	maxWarm, minProf := -1, 1<<30
	for _, j := range l.jobs {
		if j.Phase == record.PhaseWarmup {
			warm++
			maxWarm = max(maxWarm, j.Index)
		} else {
			prof++
			minProf = min(minProf, j.Index)
		}
	}
	if prof != 5 || warm < 2 || warm > 20 || minProf != maxWarm+1 || out.Sent != warm+prof {
		t.Fatalf("warm-up %d (last index %d), profiling %d (first index %d), sent %d", warm, maxWarm, prof, minProf, out.Sent)
	}
}

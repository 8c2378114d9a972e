package schedule

import (
	"context"
	"math"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmbench/llmbench/internal/record"
)

// tracker records the jobs a Sender saw and the most in flight at once.
type tracker struct {
	mu       sync.Mutex
	jobs     []Job
	inFlight atomic.Int64
	peak     atomic.Int64
}

func (tr *tracker) send(hold time.Duration) Sender {
	return func(ctx context.Context, j Job) {
		n := tr.inFlight.Add(1)
		for {
			p := tr.peak.Load()
			if n <= p || tr.peak.CompareAndSwap(p, n) {
				break
			}
		}
		select {
		case <-time.After(hold):
		case <-ctx.Done():
		}
		tr.inFlight.Add(-1)
		tr.mu.Lock()
		tr.jobs = append(tr.jobs, j)
		tr.mu.Unlock()
	}
}

func (tr *tracker) indexes(phase record.Phase) []int {
	var out []int
	for _, j := range tr.jobs {
		if j.Phase == phase {
			out = append(out, j.Index)
		}
	}
	sort.Ints(out)
	return out
}

func seq(from, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = from + i
	}
	return out
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestConcurrencyCountAndWarmup(t *testing.T) {
	var tr tracker
	var phases []string
	obs := Observer{
		PhaseStart: func(p record.Phase, _ time.Time) { phases = append(phases, "start "+string(p)) },
		PhaseEnd:   func(p record.Phase, _ time.Time) { phases = append(phases, "end "+string(p)) },
	}
	out, err := Run(context.Background(), Plan{Concurrency: 4, Count: 40, Warmup: 6}, tr.send(2*time.Millisecond), obs)
	if err != nil {
		t.Fatal(err)
	}
	if out.Sent != 46 || out.Cancelled {
		t.Fatalf("outcome %+v, want 46 sent, not cancelled", out)
	}
	if got := tr.indexes(record.PhaseWarmup); !equal(got, seq(0, 6)) {
		t.Fatalf("warm-up indexes %v", got)
	}
	if got := tr.indexes(record.PhaseProfiling); !equal(got, seq(6, 40)) {
		t.Fatalf("profiling indexes %v", got)
	}
	if tr.peak.Load() != 4 {
		t.Fatalf("peak in flight %d, want exactly 4", tr.peak.Load())
	}
	want := []string{"start warmup", "end warmup", "start profiling", "end profiling"}
	if len(phases) != 4 || phases[0] != want[0] || phases[3] != want[3] {
		t.Fatalf("phases %v, want %v", phases, want)
	}
}

func TestRateCappedByConcurrency(t *testing.T) {
	var tr tracker
	// 1000 req/s with 30 ms requests would want ~30 in flight; the cap is 3.
	_, err := Run(context.Background(), Plan{Rate: 1000, Concurrency: 3, Count: 30}, tr.send(30*time.Millisecond), Observer{})
	if err != nil {
		t.Fatal(err)
	}
	if got := tr.indexes(record.PhaseProfiling); !equal(got, seq(0, 30)) {
		t.Fatalf("indexes %v", got)
	}
	if p := tr.peak.Load(); p != 3 {
		t.Fatalf("peak in flight %d, want 3", p)
	}
}

func TestConstantRateTiming(t *testing.T) {
	var mu sync.Mutex
	var times []time.Time
	start := time.Now()
	_, err := Run(context.Background(), Plan{Rate: 100, Count: 21}, func(_ context.Context, _ Job) {
		mu.Lock()
		times = append(times, time.Now())
		mu.Unlock()
	}, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
	// 21 requests at 100/s: the last is sent 200 ms after the first. The
	// schedule is absolute, so it must not drift late by more than one
	// timer slack, however many requests there are.
	span := times[len(times)-1].Sub(start)
	if span < 200*time.Millisecond || span > 260*time.Millisecond {
		t.Fatalf("21 requests at 100/s took %v, want about 200ms", span)
	}
}

func TestPoissonIntervals(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n, rate = 50000, 20.0
	var sum, sq float64
	for range n {
		x := poissonArrivals{}.Gap(rng, rate).Seconds()
		sum += x
		sq += x * x
	}
	mean := sum / n
	std := math.Sqrt(sq/n - mean*mean)
	// Exponential with mean 1/20 = 0.05 s has std 0.05 s too.
	if math.Abs(mean-0.05) > 0.0015 || math.Abs(std-0.05) > 0.002 {
		t.Fatalf("mean %.4f std %.4f, want 0.05 and 0.05", mean, std)
	}
	if got := (constantArrivals{}).Gap(rng, 4); got != 250*time.Millisecond {
		t.Fatalf("constant interval %v, want 250ms", got)
	}
}

func TestDurationAndGrace(t *testing.T) {
	var tr tracker
	start := time.Now()
	// Requests take 1 s; issuing stops at 50 ms and in-flight requests are
	// cancelled 50 ms later, so the run ends at about 100 ms.
	out, err := Run(context.Background(), Plan{Concurrency: 2, Duration: 50 * time.Millisecond, Grace: 50 * time.Millisecond}, tr.send(time.Second), Observer{})
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 600*time.Millisecond {
		t.Fatalf("run took %v, grace did not cancel", el)
	}
	if out.Sent != 2 || len(tr.jobs) != 2 {
		t.Fatalf("sent %d, recorded %d, want 2 and 2", out.Sent, len(tr.jobs))
	}
}

func TestCancelAccountsEveryRequest(t *testing.T) {
	var tr tracker
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(30*time.Millisecond, cancel)
	out, err := Run(ctx, Plan{Concurrency: 3, Count: 1000, Warmup: 2}, tr.send(20*time.Millisecond), Observer{})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Cancelled {
		t.Fatal("want Cancelled")
	}
	if out.Sent != len(tr.jobs) || out.Sent == 0 || out.Sent >= 1000 {
		t.Fatalf("sent %d, recorded %d", out.Sent, len(tr.jobs))
	}
}

func TestValidate(t *testing.T) {
	for _, p := range []Plan{{}, {Concurrency: 1}, {Rate: -1, Count: 1}} {
		if p.Validate() == nil {
			t.Errorf("plan %+v should not validate", p)
		}
	}
}

// TestNoIssuingWhileRequestsAreCancelled pins the window between the two
// derived contexts' cancellations (a preempted goroutine can hold it open
// for milliseconds): with requests cancelled and issuing not yet stopped,
// the loops send nothing. Before, they spun through every remaining
// request, each cancelled at once (seen once in 1,500 loaded runs of
// TestCancelAccountsEveryRequest: 1,002 sent in 40 ms).
func everyMicro(i int, _ time.Duration) time.Duration { return time.Duration(i) * time.Microsecond }

func TestNoIssuingWhileRequestsAreCancelled(t *testing.T) {
	issueCtx := context.Background()
	reqCtx, cancel := context.WithCancel(context.Background())
	cancel()
	for name, run := range map[string]func(Sender){
		"concurrency": func(s Sender) {
			byConcurrency(issueCtx, reqCtx, Shard{}, 3, 0, 0, 1000, time.Now(), record.PhaseProfiling, s)
		},
		"rate": func(s Sender) {
			byRate(issueCtx, reqCtx, Plan{Rate: 1e6}, 0, 1000, time.Now(), everyMicro, record.PhaseProfiling, s)
		},
		"rate capped": func(s Sender) {
			byRate(issueCtx, reqCtx, Plan{Rate: 1e6, Concurrency: 2}, 0, 1000, time.Now(), everyMicro, record.PhaseProfiling, s)
		},
	} {
		var sent atomic.Int64
		run(func(context.Context, Job) { sent.Add(1) })
		if n := sent.Load(); n != 0 {
			t.Errorf("%s: %d requests sent while requests were cancelled", name, n)
		}
	}
}

// TestJobsCarryWhenTheyWereDue: in rate mode a job is due at the phase
// start plus its drawn intervals, however late it goes out; in
// concurrency mode, when its worker's previous request returned.
func TestJobsCarryWhenTheyWereDue(t *testing.T) {
	var mu sync.Mutex
	jobs := map[int]Job{}
	sentAt := map[int]time.Time{}
	var phaseStart time.Time
	keep := func(_ context.Context, j Job) {
		now := time.Now()
		mu.Lock()
		jobs[j.Index], sentAt[j.Index] = j, now
		mu.Unlock()
	}
	obs := Observer{PhaseStart: func(_ record.Phase, at time.Time) { phaseStart = at }}
	const n, rate = 40, 400.0
	if _, err := Run(context.Background(), Plan{Rate: rate, Arrivals: poissonArrivals{}, Count: n, Seed: 7}, keep, obs); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 0x7363686564756c65))
	at := time.Duration(0)
	for i := range n {
		if i > 0 {
			at += poissonArrivals{}.Gap(rng, rate)
		}
		j := jobs[i]
		if !j.Scheduled || !j.Due.Equal(phaseStart.Add(at)) {
			t.Fatalf("job %d due %v (scheduled %v), want phase start + %v", i, j.Due.Sub(phaseStart), j.Scheduled, at)
		}
		if sentAt[i].Before(j.Due) {
			t.Fatalf("job %d sent %v before it was due", i, j.Due.Sub(sentAt[i]))
		}
	}

	// Concurrency 1: each job is due when the one before returned.
	clear(jobs)
	var returned []time.Time
	hold := func(_ context.Context, j Job) {
		mu.Lock()
		jobs[j.Index] = j
		mu.Unlock()
		time.Sleep(2 * time.Millisecond)
		mu.Lock()
		returned = append(returned, time.Now())
		mu.Unlock()
	}
	if _, err := Run(context.Background(), Plan{Concurrency: 1, Count: 5}, hold, obs); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < 5; i++ {
		j := jobs[i]
		if j.Scheduled || j.Due.Before(returned[i-1]) || j.Due.Sub(returned[i-1]) > time.Second {
			t.Fatalf("job %d due %v after the previous returned (scheduled %v)", i, j.Due.Sub(returned[i-1]), j.Scheduled)
		}
	}
	if d := jobs[0].Due.Sub(phaseStart); d < 0 {
		t.Fatalf("first job due %v before the phase began", d)
	}
}

// TestPoissonIntervalsKS: the drawn gaps follow the exponential
// distribution: Kolmogorov–Smirnov distance under 0.015 for 20,000 draws
// (the 95 % critical value is 1.36/√n ≈ 0.0096; the seed is fixed).
func TestPoissonIntervalsKS(t *testing.T) {
	const n, rate = 20000, 500.0
	rng := rand.New(rand.NewPCG(11, 12))
	gaps := make([]float64, n)
	for i := range gaps {
		gaps[i] = poissonArrivals{}.Gap(rng, rate).Seconds()
	}
	sort.Float64s(gaps)
	worst := 0.0
	for i, x := range gaps {
		cdf := 1 - math.Exp(-rate*x)
		worst = max(worst, float64(i+1)/n-cdf, cdf-float64(i)/n)
	}
	if worst > 0.015 {
		t.Fatalf("KS distance %.4f", worst)
	}
}

// TestWarmupShape runs a warm-up with its own load: 2 in flight while the
// profiling phase keeps 6, then a warm-up at a constant 100 requests/s
// before a profiling phase by concurrency, whose jobs are due exactly
// 10 ms apart on the schedule.
func TestWarmupShape(t *testing.T) {
	var mu sync.Mutex
	inFlight, peak := map[record.Phase]int{}, map[record.Phase]int{}
	var warmDue []time.Time
	send := func(ctx context.Context, j Job) {
		mu.Lock()
		inFlight[j.Phase]++
		peak[j.Phase] = max(peak[j.Phase], inFlight[j.Phase])
		if j.Phase == record.PhaseWarmup {
			warmDue = append(warmDue, j.Due)
		}
		mu.Unlock()
		time.Sleep(3 * time.Millisecond)
		mu.Lock()
		inFlight[j.Phase]--
		mu.Unlock()
	}
	out, err := Run(context.Background(), Plan{Concurrency: 6, Count: 36, Warmup: 12, WarmupShape: &Shape{Concurrency: 2}}, send, Observer{})
	if err != nil || out.Sent != 48 {
		t.Fatalf("sent %d, err %v; want 48", out.Sent, err)
	}
	if peak[record.PhaseWarmup] != 2 || peak[record.PhaseProfiling] != 6 {
		t.Errorf("peak in flight: warm-up %d (want 2), profiling %d (want 6)", peak[record.PhaseWarmup], peak[record.PhaseProfiling])
	}

	constant, err := NewArrivals("constant", 0)
	if err != nil {
		t.Fatal(err)
	}
	warmDue = nil
	out, err = Run(context.Background(), Plan{Concurrency: 4, Count: 8, Warmup: 6, WarmupShape: &Shape{Rate: 100, Arrivals: constant}}, send, Observer{})
	if err != nil || out.Sent != 14 {
		t.Fatalf("sent %d, err %v; want 14", out.Sent, err)
	}
	sort.Slice(warmDue, func(i, j int) bool { return warmDue[i].Before(warmDue[j]) })
	for i := 1; i < len(warmDue); i++ {
		if d := warmDue[i].Sub(warmDue[i-1]); d != 10*time.Millisecond {
			t.Errorf("warm-up job %d due %v after the one before, want 10ms (100/s, constant)", i, d)
		}
	}
}

// TestWarmupPlan checks which of the profiling phase's settings a warm-up
// shape replaces.
func TestWarmupPlan(t *testing.T) {
	base := Plan{Concurrency: 8, Rate: 20, ConcurrencyRamp: time.Second, Times: []time.Duration{0, time.Second}, Count: 2}
	w := base.warmupPlan()
	if w.Concurrency != 8 || w.Rate != 20 || w.ConcurrencyRamp != time.Second || w.Times != nil {
		t.Errorf("no shape: %+v", w)
	}
	base.WarmupShape = &Shape{Concurrency: 3, RateRamp: 2 * time.Second}
	w = base.warmupPlan()
	if w.Concurrency != 3 || w.Rate != 20 || w.RateRamp != 2*time.Second || w.ConcurrencyRamp != time.Second {
		t.Errorf("concurrency and rate ramp replaced: %+v", w)
	}
	trace := Plan{Times: []time.Duration{0}, Count: 1, Shard: Shard{Index: 1, Count: 3}}
	if w := trace.warmupPlan(); w.Concurrency != 3 || w.Times != nil {
		t.Errorf("a trace warms up one session per shard: %+v", w)
	}
}

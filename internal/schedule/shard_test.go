package schedule

import (
	"context"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmbench/llmbench/internal/record"
)

// shardJobs runs plan as shard idx of n (n 0: unsharded) and returns its
// jobs by phase and plan index, with each job's due offset from its phase
// start, and the most jobs it had in flight at once.
func shardJobs(t *testing.T, plan Plan, idx, n int) (map[record.Phase]map[int]time.Duration, int) {
	t.Helper()
	plan.Shard = Shard{Index: idx, Count: n}
	var mu sync.Mutex
	jobs := map[record.Phase]map[int]time.Duration{record.PhaseWarmup: {}, record.PhaseProfiling: {}}
	var inFlight, most atomic.Int64
	_, err := Run(context.Background(), plan, func(_ context.Context, j Job) {
		cur := inFlight.Add(1)
		for m := most.Load(); cur > m && !most.CompareAndSwap(m, cur); m = most.Load() {
		}
		time.Sleep(time.Millisecond)
		inFlight.Add(-1)
		mu.Lock()
		defer mu.Unlock()
		if _, dup := jobs[j.Phase][j.PhaseIndex]; dup {
			t.Errorf("shard %d sent %s job %d twice", idx, j.Phase, j.PhaseIndex)
		}
		jobs[j.Phase][j.PhaseIndex] = j.Due.Sub(j.PhaseStart)
	}, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	return jobs, int(most.Load())
}

// TestShardsPartitionThePlan: the jobs of 3 shards are, together, exactly
// the unsharded plan's (same numbers, and on a rate or a fixed schedule
// the same due offsets, to the nanosecond); no job is sent twice; slots
// split 4, 3, 3 and requests as evenly.
func TestShardsPartitionThePlan(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	for name, plan := range map[string]Plan{
		"concurrency":  {Concurrency: 10, Count: 100, Warmup: 7, Seed: 3},
		"poisson":      {Rate: 3000, Count: 200, Warmup: 5, Seed: 3},
		"gamma capped": {Rate: 3000, Arrivals: gammaArrivals{shape: 0.5}, Concurrency: 10, Count: 200, Seed: 9},
		"fixed":        {Times: ms(0, 1, 1, 2, 5, 8, 13, 21, 34, 55, 56, 57), Count: 12, Seed: 3},
		"ramped":       {Rate: 3000, RateRamp: 20 * time.Millisecond, Concurrency: 10, ConcurrencyRamp: 20 * time.Millisecond, Count: 120, Seed: 5},
	} {
		t.Run(name, func(t *testing.T) {
			whole, _ := shardJobs(t, plan, 0, 0)
			union := map[record.Phase]map[int]time.Duration{record.PhaseWarmup: {}, record.PhaseProfiling: {}}
			for idx := range 3 {
				jobs, most := shardJobs(t, plan, idx, 3)
				if plan.Concurrency > 0 && most > []int{4, 3, 3}[idx] {
					t.Errorf("shard %d had %d in flight; its slots are %d of %d", idx, most, []int{4, 3, 3}[idx], plan.Concurrency)
				}
				if want := (Shard{idx, 3}).Part(plan.Count); len(jobs[record.PhaseProfiling]) != want {
					t.Errorf("shard %d sent %d profiling jobs, want %d", idx, len(jobs[record.PhaseProfiling]), want)
				}
				for phase, js := range jobs {
					for g, due := range js {
						if _, dup := union[phase][g]; dup {
							t.Errorf("%s job %d sent by two shards", phase, g)
						}
						union[phase][g] = due
					}
				}
			}
			for _, phase := range []record.Phase{record.PhaseWarmup, record.PhaseProfiling} {
				if got, want := slices.Sorted(maps.Keys(union[phase])), slices.Sorted(maps.Keys(whole[phase])); !slices.Equal(got, want) {
					t.Fatalf("%s jobs of the shards %v, of one process %v", phase, got, want)
				}
				if plan.Rate == 0 && plan.Times == nil {
					continue // in concurrency mode a job is due when a slot frees
				}
				for g, due := range whole[phase] {
					if union[phase][g] != due {
						t.Errorf("%s job %d due at %v on its shard, %v in one process", phase, g, union[phase][g], due)
					}
				}
			}
		})
	}
}

func TestShardPart(t *testing.T) {
	for _, c := range []struct {
		n, count int
		want     []int
	}{
		{10, 3, []int{4, 3, 3}}, {9, 3, []int{3, 3, 3}}, {2, 4, []int{1, 1, 0, 0}}, {7, 1, []int{7}},
	} {
		var got []int
		for i := range c.count {
			got = append(got, Shard{i, c.count}.Part(c.n))
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%d over %d shards: %v, want %v", c.n, c.count, got, c.want)
		}
	}
	if err := (Plan{Concurrency: 2, Count: 10, Shard: Shard{0, 3}}).Validate(); err == nil {
		t.Error("2 slots over 3 shards accepted")
	}
	if err := (Plan{Rate: 5, Count: 2, Shard: Shard{0, 3}}).Validate(); err == nil {
		t.Error("2 requests over 3 shards accepted")
	}
}

// TestStartAt: the run waits for StartAt, and one started after it says
// how late it is.
func TestStartAt(t *testing.T) {
	var first time.Time
	var once sync.Once
	at := time.Now().Add(60 * time.Millisecond)
	out, err := Run(context.Background(), Plan{Concurrency: 1, Count: 1, StartAt: at}, func(_ context.Context, j Job) {
		once.Do(func() { first = time.Now() })
	}, Observer{})
	// Late is the truth, a timer's wake-up included: a few ms on a busy
	// machine (6.5 ms seen in CI), never more than the first send's own
	// delay; 500 ms would be a wait gone wrong, not a slow wake-up.
	if err != nil || out.Late > 500*time.Millisecond || first.Before(at) || first.Sub(at) < out.Late {
		t.Fatalf("first send %v after the start (late %v, err %v)", first.Sub(at), out.Late, err)
	}
	out, _ = Run(context.Background(), Plan{Concurrency: 1, Count: 1, StartAt: time.Now().Add(-2 * time.Second)}, func(context.Context, Job) {}, Observer{})
	if out.Late < 2*time.Second || out.Late > 3*time.Second {
		t.Fatalf("started 2 s after its start: late %v", out.Late)
	}
}

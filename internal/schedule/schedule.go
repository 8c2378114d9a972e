// Package schedule decides when each request is sent: a fixed number in
// flight (concurrency) or a request rate (constant or Poisson, optionally
// capped in flight), for a request count or a duration, after an optional
// warm-up, and stops cleanly when its context is cancelled.
package schedule

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmbench/llmbench/internal/hrtimer"
	"github.com/llmbench/llmbench/internal/record"
)

// Plan is the load to generate. A job is a session: one request, or all
// the turns of a conversation, sent by the Sender one after the other.
type Plan struct {
	// Concurrency is the number of sessions in flight in concurrency mode,
	// or the most in flight in rate mode (0: no cap).
	Concurrency int
	// Rate is sessions started per second; 0 selects concurrency mode.
	Rate float64
	// Arrivals draws the gaps between sessions in rate mode (nil: Poisson).
	Arrivals Arrivals
	// ConcurrencyRamp opens the Concurrency slots (in rate mode, the cap)
	// one by one over this long, the first at once; RateRamp climbs the
	// rate linearly to Rate.
	ConcurrencyRamp, RateRamp time.Duration
	// Times, when set, is a fixed schedule: profiling job i is due Times[i]
	// after the phase starts, and Count is len(Times).
	Times []time.Duration
	// Count is the number of profiling sessions; 0 means unlimited, ended
	// by Duration.
	Count int
	// Warmup sessions are sent first, with the same load shape (never on
	// a fixed schedule: by concurrency or rate), for at most
	// WarmupDuration when that is set (then Warmup 0 means no count).
	Warmup         int
	WarmupDuration time.Duration
	// PrefillConcurrency caps the requests waiting for their first token
	// (0: no cap); its slots open one by one over PrefillRamp.
	PrefillConcurrency int
	PrefillRamp        time.Duration
	// WarmupShape, when set, loads the warm-up its own way: each of its
	// non-zero fields replaces the plan's for the warm-up alone.
	WarmupShape *Shape
	// Duration, when set, stops issuing profiling sessions after that long.
	Duration time.Duration
	// Grace is how long requests in flight at Duration may still finish
	// before they are cancelled.
	Grace time.Duration
	Seed  uint64
	// Shard, when its Count is above 1, makes this process one part of a
	// run spread over several: every shard computes the whole plan (each
	// job's number, every arrival of the one rate process, every slot's
	// opening on a ramp) and sends only the jobs and fills only the
	// concurrency slots it owns, so the shards' jobs together are exactly
	// the plan's.
	Shard Shard
	// StartAt, when set, is when the first phase starts: the run waits
	// for it, and starts at once (late) when it has passed.
	StartAt time.Time
}

// Shape is a phase's load: how many in flight, how fast, how it ramps.
type Shape struct {
	Concurrency               int
	Rate                      float64
	Arrivals                  Arrivals
	ConcurrencyRamp, RateRamp time.Duration
	PrefillConcurrency        int
	PrefillRamp               time.Duration
}

// warmupPlan is the plan the warm-up runs: the profiling phase's shape,
// never a fixed schedule (a trace warms up one session at a time, one per
// shard), with the warm-up's own shape over it.
func (p Plan) warmupPlan() Plan {
	warm := p
	warm.Times = nil
	if s := p.WarmupShape; s != nil {
		if s.Concurrency > 0 {
			warm.Concurrency = s.Concurrency
		}
		if s.Rate > 0 {
			warm.Rate = s.Rate
		}
		if s.Arrivals != nil {
			warm.Arrivals = s.Arrivals
		}
		if s.ConcurrencyRamp > 0 {
			warm.ConcurrencyRamp = s.ConcurrencyRamp
		}
		if s.RateRamp > 0 {
			warm.RateRamp = s.RateRamp
		}
		if s.PrefillConcurrency > 0 {
			warm.PrefillConcurrency = s.PrefillConcurrency
		}
		if s.PrefillRamp > 0 {
			warm.PrefillRamp = s.PrefillRamp
		}
	}
	if warm.Rate == 0 && warm.Concurrency == 0 {
		warm.Concurrency = max(1, p.Shard.Count)
	}
	return warm
}

// Shard is one part of a plan split over several processes: it owns
// global job and slot g when g mod Count is Index (10 slots over 3
// shards: 4, 3 and 3).
type Shard struct{ Index, Count int }

// Owns reports whether job or slot g is the shard's.
func (s Shard) Owns(g int) bool { return s.Count <= 1 || g%s.Count == s.Index }

// Part is how many of the plan's n jobs or slots the shard owns.
func (s Shard) Part(n int) int {
	if s.Count <= 1 {
		return n
	}
	p := n / s.Count
	if s.Index < n%s.Count {
		p++
	}
	return p
}

// global is the plan's number of the shard's i-th job or slot.
func (s Shard) global(i int) int {
	if s.Count <= 1 {
		return i
	}
	return i*s.Count + s.Index
}

// Validate reports a plan that cannot run.
func (p Plan) Validate() error {
	switch {
	case p.Rate < 0 || p.Concurrency < 0 || p.Count < 0 || p.Warmup < 0 || p.WarmupDuration < 0:
		return errors.New("schedule: negative rate, concurrency, count or duration")
	case p.Times != nil && p.Count != len(p.Times):
		return errors.New("schedule: a fixed schedule's count is its number of times")
	case p.Times == nil && p.Rate == 0 && p.Concurrency == 0:
		return errors.New("schedule: need a concurrency or a request rate")
	case p.Count == 0 && p.Duration <= 0:
		return errors.New("schedule: need a request count or a duration")
	case p.Shard.Count > 1 && (p.Shard.Index < 0 || p.Shard.Index >= p.Shard.Count):
		return fmt.Errorf("schedule: shard %d of %d", p.Shard.Index, p.Shard.Count)
	case p.PrefillConcurrency < 0 || p.PrefillRamp < 0:
		return errors.New("schedule: negative prefill concurrency or ramp")
	case p.Shard.Count > 1 && p.PrefillConcurrency > 0 && p.PrefillConcurrency < p.Shard.Count:
		return fmt.Errorf("--prefill-concurrency %d cannot be split over %d shards: every shard needs at least one prefill slot", p.PrefillConcurrency, p.Shard.Count)
	case p.Shard.Count > 1 && p.Count > 0 && p.Count < p.Shard.Count:
		return fmt.Errorf("%d requests cannot be split over %d shards: every shard needs at least one (fewer shards, or more requests)", p.Count, p.Shard.Count)
	case p.Shard.Count > 1 && p.Times == nil && (p.Rate == 0 || p.Concurrency > 0) && p.Concurrency < p.Shard.Count:
		return fmt.Errorf("--concurrency %d cannot be split over %d shards: every shard needs at least one slot", p.Concurrency, p.Shard.Count)
	}
	return nil
}

// Job is one request to send.
type Job struct {
	// Index is the session's number in the plan, warm-up first (after a
	// warm-up by duration, numbered from what this process sent).
	Index int
	Phase record.Phase
	// Due is when the request should go out: its instant on the schedule
	// in rate mode, or in concurrency mode when its worker's slot freed
	// (the previous request returned, or the phase began). How far the
	// send trails it is the client's own delay.
	Due time.Time
	// Scheduled is true when Due was fixed in advance (rate mode): then
	// latencies measured from Due are free of coordinated omission.
	Scheduled bool
	// PhaseStart is when the job's phase began: a fixed schedule's later
	// turns are due relative to it. PhaseIndex is the job's number within
	// its phase in the whole plan, every shard's jobs counted (on a fixed
	// schedule, the index into Times).
	PhaseStart time.Time
	PhaseIndex int
	// Issuing ends when no more requests may start (a --benchmark-duration
	// ran out, or the run stopped): a session's later turns are requests
	// too, so they are not sent after it, while the turn in flight may
	// finish in the grace period.
	Issuing context.Context
	// Prefill, when the plan caps prefill concurrency, is the gate every
	// request of the job passes before it is sent (nil: none).
	Prefill *PrefillGate
}

// Sender sends one request and records it, returning when it is done. It
// must record the request even when ctx is cancelled.
type Sender func(ctx context.Context, job Job)

// Observer hears about phase boundaries; either func may be nil.
type Observer struct {
	PhaseStart func(record.Phase, time.Time)
	PhaseEnd   func(record.Phase, time.Time)
}

// Outcome is what happened.
type Outcome struct {
	// Cancelled is true when ctx ended the run early.
	Cancelled bool
	// Sent is the number of requests handed to the Sender.
	Sent int
	// Late is how long after Plan.StartAt the run started (0 when on
	// time or without one).
	Late time.Duration
}

// Run generates the load, calling send for every session, and returns
// when every session sent has finished.
func Run(ctx context.Context, p Plan, send Sender, obs Observer) (Outcome, error) {
	if err := p.Validate(); err != nil {
		return Outcome{}, err
	}
	if p.Arrivals == nil {
		p.Arrivals = poissonArrivals{}
	}
	var sent atomic.Int64
	counted := func(c context.Context, j Job) {
		sent.Add(1)
		send(c, j)
	}
	var late time.Duration
	if !p.StartAt.IsZero() {
		w := hrtimer.New(ctx)
		w.Until(p.StartAt)
		w.Stop()
		late = max(time.Since(p.StartAt), 0)
	}
	if (p.Warmup > 0 || p.WarmupDuration > 0) && ctx.Err() == nil {
		runPhase(ctx, p.warmupPlan(), record.PhaseWarmup, 0, p.Warmup, p.WarmupDuration, phaseRand(p.Seed, record.PhaseWarmup), counted, obs)
	}
	if ctx.Err() == nil {
		// The profiling jobs are numbered after the warm-up's: the plan's
		// count (every shard numbers alike), or what a warm-up by
		// duration sent here.
		first := p.Warmup
		if p.WarmupDuration > 0 {
			first = int(sent.Load())
		}
		runPhase(ctx, p, record.PhaseProfiling, first, p.Count, p.Duration, phaseRand(p.Seed, record.PhaseProfiling), counted, obs)
	}
	return Outcome{Cancelled: ctx.Err() != nil, Sent: int(sent.Load()), Late: late}, nil
}

// phaseRand is a phase's own random numbers: the profiling phase's
// arrivals are the same whatever the warm-up drew (a warm-up by duration
// draws a number of gaps that depends on timing), on every shard.
func phaseRand(seed uint64, phase record.Phase) *rand.Rand {
	stream := uint64(0x7363686564756c65) // "schedule"
	if phase == record.PhaseWarmup {
		stream ^= 0x7761726d // "warm"
	}
	return rand.New(rand.NewPCG(seed, stream))
}

func runPhase(ctx context.Context, p Plan, phase record.Phase, first, count int, duration time.Duration,
	rng *rand.Rand, send Sender, obs Observer) {
	start := time.Now()
	if obs.PhaseStart != nil {
		obs.PhaseStart(phase, start)
	}
	// issueCtx ends issuing; reqCtx ends requests still in flight.
	issueCtx, stopIssuing := context.WithCancel(ctx)
	reqCtx, cancelRequests := context.WithCancel(ctx)
	defer stopIssuing()
	defer cancelRequests()
	if duration > 0 {
		t1 := time.AfterFunc(duration, stopIssuing)
		t2 := time.AfterFunc(duration+p.Grace, cancelRequests)
		defer t1.Stop()
		defer t2.Stop()
	}

	if p.PrefillConcurrency > 0 {
		// A shard holds its part of the slots, as of the concurrency's.
		gate := newPrefillGate(p.Shard.Part(p.PrefillConcurrency), p.PrefillRamp, start)
		defer gate.close()
		inner := send
		send = func(ctx context.Context, j Job) {
			j.Prefill = gate
			inner(ctx, j)
		}
	}
	switch {
	case p.Times != nil:
		times := p.Times
		byRate(issueCtx, reqCtx, p, first, count, start, func(i int, _ time.Duration) time.Duration { return times[i] }, phase, send)
	case p.Rate > 0:
		byRate(issueCtx, reqCtx, p, first, count, start, func(i int, at time.Duration) time.Duration {
			if i == 0 {
				return 0
			}
			return at + p.Arrivals.Gap(rng, rateAt(p.Rate, p.RateRamp, at))
		}, phase, send)
	default:
		byConcurrency(issueCtx, reqCtx, p.Shard, p.Concurrency, p.ConcurrencyRamp, first, count, start, phase, send)
	}
	if obs.PhaseEnd != nil {
		obs.PhaseEnd(phase, time.Now())
	}
}

// issuing reports whether more requests may be sent: neither issuing has
// stopped nor requests are being cancelled. Both contexts derive from the
// run's, whose cancellation reaches them one after the other: a goroutine
// preempted in between leaves requests cancelled while issuing still looks
// open, and a loop that checked only issueCtx would spin through every
// remaining request in that window, each cancelled at once.
func issuing(issueCtx, reqCtx context.Context) bool {
	return issueCtx.Err() == nil && reqCtx.Err() == nil
}

// byConcurrency keeps exactly n sessions in flight: n workers, each
// sending its next session as soon as its last one finishes; on a ramp
// worker k starts at slotOpens(k). A shard runs the workers of the slots
// it owns and sends the jobs it owns, in their order.
func byConcurrency(issueCtx, reqCtx context.Context, shard Shard, n int, ramp time.Duration, first, count int, start time.Time, phase record.Phase, send Sender) {
	var next atomic.Int64
	var wg sync.WaitGroup
	if count > 0 {
		n = min(n, count)
	}
	own := shard.Part(count) // the shard's jobs (0: no count)
	for k := range n {
		if !shard.Owns(k) {
			continue
		}
		wg.Go(func() {
			if opens := slotOpens(k, n, ramp); opens > 0 {
				w := hrtimer.New(issueCtx)
				ok := w.Until(start.Add(opens))
				w.Stop()
				if !ok {
					return
				}
			}
			freed := time.Now()
			for issuing(issueCtx, reqCtx) {
				i := int(next.Add(1) - 1)
				if count > 0 && i >= own {
					return
				}
				g := shard.global(i)
				send(reqCtx, Job{Index: first + g, Phase: phase, Due: freed, PhaseStart: start, PhaseIndex: g, Issuing: issueCtx})
				freed = time.Now()
			}
		})
	}
	wg.Wait()
}

// byRate sends sessions at scheduled instants measured from start, so a
// late send does not delay the ones after it: job i is due at(i, the
// previous job's offset).
func byRate(issueCtx, reqCtx context.Context, p Plan, first, count int, start time.Time, at func(i int, prev time.Duration) time.Duration, phase record.Phase, send Sender) {
	var slots chan struct{}
	if p.Concurrency > 0 {
		// The shard's part of the cap. On a concurrency ramp the slots are
		// held and let go one by one at their openings, as
		// byConcurrency's workers start (the plan's slot 0 at once).
		slots = make(chan struct{}, max(1, p.Shard.Part(p.Concurrency)))
		for k := 0; k < p.Concurrency; k++ {
			if !p.Shard.Owns(k) {
				continue
			}
			if opens := slotOpens(k, p.Concurrency, p.ConcurrencyRamp); opens > 0 {
				slots <- struct{}{}
				t := time.AfterFunc(start.Add(opens).Sub(time.Now()), func() { <-slots })
				defer t.Stop()
			}
		}
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	w := hrtimer.New(issueCtx)
	defer w.Stop()
	offset := time.Duration(0)
	// Every shard walks the whole plan's arrivals (the same draws in the
	// same order) and sends the ones it owns.
	for i := 0; count == 0 || i < count; i++ {
		offset = at(i, offset)
		if !p.Shard.Owns(i) {
			continue
		}
		due := start.Add(offset)
		if !w.Until(due) || !issuing(issueCtx, reqCtx) {
			return
		}
		if slots != nil {
			select {
			case slots <- struct{}{}:
			case <-issueCtx.Done():
				return
			}
		}
		if !issuing(issueCtx, reqCtx) {
			if slots != nil {
				<-slots
			}
			return
		}
		job := Job{Index: first + i, Phase: phase, Due: due, Scheduled: true, PhaseStart: start, PhaseIndex: i, Issuing: issueCtx}
		wg.Go(func() {
			send(reqCtx, job)
			if slots != nil {
				<-slots
			}
		})
	}
}

// Package schedule decides when each request is sent: a fixed number in
// flight (concurrency) or a request rate (constant or Poisson, optionally
// capped in flight), for a request count or a duration, after an optional
// warm-up, and stops cleanly when its context is cancelled.
package schedule

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmbench/llmbench/internal/record"
)

// Plan is the load to generate.
type Plan struct {
	// Concurrency is the number of requests in flight in concurrency mode,
	// or the most in flight in rate mode (0: no cap).
	Concurrency int
	// Rate is requests per second; 0 selects concurrency mode.
	Rate    float64
	Poisson bool
	// Count is the number of profiling requests; 0 means unlimited, ended
	// by Duration.
	Count int
	// Warmup requests are sent first, with the same load shape.
	Warmup int
	// Duration, when set, stops issuing profiling requests after that long.
	Duration time.Duration
	// Grace is how long requests in flight at Duration may still finish
	// before they are cancelled.
	Grace time.Duration
	Seed  uint64
}

// Validate reports a plan that cannot run.
func (p Plan) Validate() error {
	switch {
	case p.Rate < 0 || p.Concurrency < 0 || p.Count < 0 || p.Warmup < 0:
		return errors.New("schedule: negative rate, concurrency or count")
	case p.Rate == 0 && p.Concurrency == 0:
		return errors.New("schedule: need a concurrency or a request rate")
	case p.Count == 0 && p.Duration <= 0:
		return errors.New("schedule: need a request count or a duration")
	}
	return nil
}

// Job is one request to send.
type Job struct {
	// Index is the request's number across the run, warm-up first.
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
}

// Run generates the load, calling send for every request, and returns when
// every request sent has finished.
func Run(ctx context.Context, p Plan, send Sender, obs Observer) (Outcome, error) {
	if err := p.Validate(); err != nil {
		return Outcome{}, err
	}
	var sent atomic.Int64
	counted := func(c context.Context, j Job) {
		sent.Add(1)
		send(c, j)
	}
	rng := rand.New(rand.NewPCG(p.Seed, 0x7363686564756c65)) // "schedule"
	if p.Warmup > 0 && ctx.Err() == nil {
		runPhase(ctx, p, record.PhaseWarmup, 0, p.Warmup, 0, rng, counted, obs)
	}
	if ctx.Err() == nil {
		runPhase(ctx, p, record.PhaseProfiling, p.Warmup, p.Count, p.Duration, rng, counted, obs)
	}
	return Outcome{Cancelled: ctx.Err() != nil, Sent: int(sent.Load())}, nil
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

	if p.Rate > 0 {
		byRate(issueCtx, reqCtx, p, first, count, start, rng, phase, send)
	} else {
		byConcurrency(issueCtx, reqCtx, p.Concurrency, first, count, phase, send)
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

// byConcurrency keeps exactly n requests in flight: n workers, each sending
// its next request as soon as its last one finishes.
func byConcurrency(issueCtx, reqCtx context.Context, n, first, count int, phase record.Phase, send Sender) {
	var next atomic.Int64
	var wg sync.WaitGroup
	if count > 0 {
		n = min(n, count)
	}
	for range n {
		wg.Go(func() {
			freed := time.Now()
			for issuing(issueCtx, reqCtx) {
				i := int(next.Add(1) - 1)
				if count > 0 && i >= count {
					return
				}
				send(reqCtx, Job{Index: first + i, Phase: phase, Due: freed})
				freed = time.Now()
			}
		})
	}
	wg.Wait()
}

// byRate sends requests at scheduled instants measured from start, so a
// late send does not delay the ones after it.
func byRate(issueCtx, reqCtx context.Context, p Plan, first, count int, start time.Time, rng *rand.Rand, phase record.Phase, send Sender) {
	var slots chan struct{}
	if p.Concurrency > 0 {
		slots = make(chan struct{}, p.Concurrency)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	w := newWaiter(issueCtx)
	defer w.stop()
	at := time.Duration(0)
	for i := 0; count == 0 || i < count; i++ {
		if i > 0 {
			at += Interval(rng, p.Rate, p.Poisson)
		}
		due := start.Add(at)
		if !w.until(due) || !issuing(issueCtx, reqCtx) {
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
		job := Job{Index: first + i, Phase: phase, Due: due, Scheduled: true}
		wg.Go(func() {
			send(reqCtx, job)
			if slots != nil {
				<-slots
			}
		})
	}
}

// Interval is the gap before the next request: 1/rate, or for a Poisson
// process an exponentially distributed gap with mean 1/rate.
func Interval(rng *rand.Rand, rate float64, poisson bool) time.Duration {
	if poisson {
		return time.Duration(rng.ExpFloat64() / rate * float64(time.Second))
	}
	return time.Duration(float64(time.Second) / rate)
}

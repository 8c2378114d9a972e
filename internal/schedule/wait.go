package schedule

import (
	"context"
	"time"
)

// waiter sleeps until a send's due instant, or until its context ends.
//
// Go's timers wake up to a millisecond late on Linux (the runtime's poller
// sleeps in whole milliseconds), which made sends late by 0.6 ms at the
// median and bunched them, skewing a Poisson process's gaps. On Linux the
// waiter sleeps on a timerfd instead: a kernel high-resolution timer read
// through the runtime's poller, whose expiry wakes the poller at once. One
// wake-up per send, no spinning; bench/arrivals measures the result.
//
// Spinning the last stretch would send on time to the microsecond, and was
// tried: it starves the runtime's network polling (done only by a core with
// nothing else to run), which delays every response's timestamp instead.
// The README's Performance section has the figures.
type waiter interface {
	until(at time.Time) bool
	stop()
}

// goWaiter waits with Go's own timer: the fallback.
type goWaiter struct {
	ctx   context.Context
	timer *time.Timer
}

func newGoWaiter(ctx context.Context) *goWaiter {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &goWaiter{ctx: ctx, timer: t}
}

func (w *goWaiter) until(at time.Time) bool {
	if d := time.Until(at); d > 0 {
		w.timer.Reset(d)
		select {
		case <-w.timer.C:
		case <-w.ctx.Done():
			w.timer.Stop()
			return false
		}
	}
	return w.ctx.Err() == nil
}

func (w *goWaiter) stop() { w.timer.Stop() }

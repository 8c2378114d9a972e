// Package hrtimer sleeps until an instant, on time to tens of
// microseconds where Go's own timers wake up to a millisecond late: the
// load generator's send times and the built-in server's token times both
// need it.
package hrtimer

import (
	"context"
	"time"
)

// Waiter sleeps until an instant (a send's due time, a token's), or until
// its context ends. One Waiter serves one goroutine.
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
type Waiter interface {
	// Until returns when at has come (true) or the context has ended
	// (false, at once, and for every later call).
	Until(at time.Time) bool
	// Stop releases the Waiter.
	Stop()
}

// goWaiter waits with Go's own timer: the fallback, and NewGo's.
type goWaiter struct {
	ctx   context.Context
	timer *time.Timer
}

// NewGo returns a Waiter on Go's own timer, whatever the platform.
func NewGo(ctx context.Context) Waiter { return newGoWaiter(ctx) }

func newGoWaiter(ctx context.Context) *goWaiter {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &goWaiter{ctx: ctx, timer: t}
}

func (w *goWaiter) Until(at time.Time) bool {
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

func (w *goWaiter) Stop() { w.timer.Stop() }

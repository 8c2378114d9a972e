package schedule

import (
	"context"
	"runtime"
	"slices"
	"sync/atomic"
	"time"
)

// Spin bounds: the margin before a due instant at which a precise wait
// stops sleeping and starts spinning.
const (
	minSpinMargin     = 20 * time.Microsecond
	maxSpinMargin     = time.Millisecond
	initialSpinMargin = 300 * time.Microsecond
	// wakeHistory is how many recent wake-ups the margin is chosen from:
	// the margin is the latest of them, about their 97th percentile.
	wakeHistory = 32
)

// preciseWaiter sends on time in rate mode. A sleep, even on a timerfd,
// wakes tens to hundreds of microseconds late, and every gap between
// arrivals shorter than that is lost: the late send and the next one go
// out together. At 5,000 Poisson arrivals/s a quarter of the gaps are
// under 60 µs, so sleeping alone bunched a quarter of the sends
// (bench/arrivals: Kolmogorov–Smirnov distance 0.22 from the
// exponential). The waiter sleeps until a margin before the instant, the
// margin being how late recent wake-ups were, then spins, yielding the
// core to any other goroutine that has work at every turn, until the
// instant. Spinning costs at most the margin per send (≤ 1 ms, typically
// 0.1–0.3 ms): a few per cent of a core at 100 req/s, most of one at
// 5,000. The time spent spinning is added to spun, so the client's CPU-use
// figure can leave it out: a spinning loop that yields is not load.
//
// With one core (GOMAXPROCS 1) the waiter only sleeps: the runtime polls
// the network only when its core has nothing else to run, so a spinning
// goroutine, even one that yields, would hold every response's arrival
// (and its timestamp) until the spin ends. With two or more, an idle core
// waits on the network while one spins.
type preciseWaiter struct {
	ctx   context.Context
	sleep waiter
	spin  bool
	// late holds how late the last wakeHistory sleeps woke, ring-wise.
	late   [wakeHistory]time.Duration
	next   int
	margin time.Duration
	spun   *atomic.Int64
}

func newPreciseWaiter(ctx context.Context, spun *atomic.Int64) *preciseWaiter {
	w := &preciseWaiter{ctx: ctx, sleep: newWaiter(ctx), spin: runtime.GOMAXPROCS(0) > 1, margin: initialSpinMargin, spun: spun}
	for i := range w.late {
		w.late[i] = initialSpinMargin
	}
	return w
}

func (w *preciseWaiter) until(at time.Time) bool {
	if !w.spin {
		return w.sleep.until(at)
	}
	if wake := at.Add(-w.margin); time.Until(wake) > 0 {
		if !w.sleep.until(wake) {
			return false
		}
		w.woke(time.Since(wake))
	}
	start := time.Now()
	if !start.Before(at) {
		return w.ctx.Err() == nil
	}
	done := w.ctx.Done()
	for now := start; now.Before(at); now = time.Now() {
		select {
		case <-done:
			return false
		default:
		}
		runtime.Gosched()
	}
	if w.spun != nil {
		w.spun.Add(int64(time.Since(start)))
	}
	return w.ctx.Err() == nil
}

// woke notes how late a sleep woke and sets the margin to the latest of
// the recent ones, within bounds.
func (w *preciseWaiter) woke(late time.Duration) {
	w.late[w.next] = late
	w.next = (w.next + 1) % wakeHistory
	w.margin = min(max(slices.Max(w.late[:]), minSpinMargin), maxSpinMargin)
}

func (w *preciseWaiter) stop() { w.sleep.stop() }

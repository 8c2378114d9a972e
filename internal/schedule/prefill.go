package schedule

import (
	"context"
	"sync"
	"time"
)

// PrefillGate caps how many requests may be in prefill at once (AIPerf's
// --prefill-concurrency): a request takes a slot before it is sent and
// gives it back when its first token arrives (or when it ends without
// one). On a ramp the slots open one by one, the first at once, as a
// concurrency ramp's do. A nil gate lets everything through.
type PrefillGate struct {
	slots chan struct{}
	stop  chan struct{}
	wg    sync.WaitGroup
}

// newPrefillGate opens n slots over ramp, counting from start.
func newPrefillGate(n int, ramp time.Duration, start time.Time) *PrefillGate {
	g := &PrefillGate{slots: make(chan struct{}, n), stop: make(chan struct{})}
	for k := range n {
		opens := slotOpens(k, n, ramp)
		if opens <= 0 {
			g.slots <- struct{}{}
			continue
		}
		g.wg.Go(func() {
			t := time.NewTimer(time.Until(start.Add(opens)))
			defer t.Stop()
			select {
			case <-t.C:
				g.slots <- struct{}{}
			case <-g.stop:
			}
		})
	}
	return g
}

// close stops the slots still to open on a ramp.
func (g *PrefillGate) close() {
	close(g.stop)
	g.wg.Wait()
}

// Acquire takes a free slot, waiting for one when there is none (waited
// says so); it returns the function that frees it (safe to call more than
// once), and ok false when ctx ended first. A nil gate returns at once.
func (g *PrefillGate) Acquire(ctx context.Context) (release func(), waited, ok bool) {
	if g == nil {
		return func() {}, false, true
	}
	select {
	case <-g.slots:
	default:
		waited = true
		select {
		case <-g.slots:
		case <-ctx.Done():
			return func() {}, true, false
		}
	}
	var once sync.Once
	return func() { once.Do(func() { g.slots <- struct{}{} }) }, waited, true
}

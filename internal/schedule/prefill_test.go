package schedule

import (
	"context"
	"testing"
	"time"
)

// TestPrefillGate: n slots, a waiter served when one is freed, release
// idempotent, a cancelled wait refused, a nil gate open.
func TestPrefillGate(t *testing.T) {
	g := newPrefillGate(2, 0, time.Now())
	defer g.close()
	r1, w1, ok1 := g.Acquire(context.Background())
	_, w2, ok2 := g.Acquire(context.Background())
	if !ok1 || !ok2 || w1 || w2 {
		t.Fatalf("two free slots: ok %v %v, waited %v %v", ok1, ok2, w1, w2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, waited, ok := g.Acquire(ctx); ok || !waited {
		t.Fatalf("a third request got a slot (ok %v) or did not wait (%v)", ok, waited)
	}
	got := make(chan bool)
	go func() {
		_, _, ok := g.Acquire(context.Background())
		got <- ok
	}()
	r1()
	r1() // a second release frees nothing more
	if !<-got {
		t.Fatal("the waiter was not served by the freed slot")
	}
	if n := len(g.slots); n != 0 {
		t.Fatalf("%d slots free after a double release, want 0", n)
	}
	var none *PrefillGate
	if _, waited, ok := none.Acquire(context.Background()); !ok || waited {
		t.Fatal("a nil gate held a request")
	}
}

// TestPrefillGateRamp: 3 slots over 100 ms open at 0, 50 and 100 ms.
func TestPrefillGateRamp(t *testing.T) {
	start := time.Now()
	g := newPrefillGate(3, 100*time.Millisecond, start)
	defer g.close()
	var at []time.Duration
	for range 3 {
		if _, _, ok := g.Acquire(context.Background()); !ok {
			t.Fatal("acquire failed")
		}
		at = append(at, time.Since(start))
	}
	for i, want := range []time.Duration{0, 50 * time.Millisecond, 100 * time.Millisecond} {
		if at[i] < want || at[i] > want+250*time.Millisecond { // never before it opens; late only on a stalled machine
			t.Errorf("slot %d taken at %v, want at %v (it opens then)", i, at[i], want)
		}
	}
}

// TestPrefillConcurrencyInPlan: the jobs of a plan with a prefill cap
// carry one gate, also in the warm-up, whose own cap replaces it.
func TestPrefillConcurrencyInPlan(t *testing.T) {
	seen := map[bool]*PrefillGate{}
	caps := map[bool]int{}
	send := func(ctx context.Context, j Job) {
		warm := j.Phase == "warmup"
		seen[warm] = j.Prefill
		caps[warm] = cap(j.Prefill.slots)
	}
	p := Plan{Concurrency: 1, Count: 2, Warmup: 2, PrefillConcurrency: 1, WarmupShape: &Shape{PrefillConcurrency: 3}}
	if _, err := Run(context.Background(), p, send, Observer{}); err != nil {
		t.Fatal(err)
	}
	if seen[false] == nil || seen[true] == nil || seen[false] == seen[true] || caps[false] != 1 || caps[true] != 3 {
		t.Errorf("gates: profiling %p (%d slots), warm-up %p (%d slots); want two gates of 1 and 3", seen[false], caps[false], seen[true], caps[true])
	}
}

package hrtimer

import (
	"context"
	"testing"
	"time"
)

// TestWaiter: a waiter (the platform's, and Go's timer fallback) never
// returns before the instant, and a cancelled context ends even a long
// wait at once, and every wait after it.
func TestWaiter(t *testing.T) {
	for name, newW := range map[string]func(context.Context) Waiter{
		"platform": New,
		"go timer": NewGo,
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			w := newW(ctx)
			defer w.Stop()
			for _, d := range []time.Duration{0, 50 * time.Microsecond, 300 * time.Microsecond, 3 * time.Millisecond} {
				at := time.Now().Add(d)
				if !w.Until(at) {
					t.Fatalf("wait of %v ended early", d)
				}
				if now := time.Now(); now.Before(at) {
					t.Fatalf("wait of %v returned %v before the instant", d, at.Sub(now))
				}
			}
			done := make(chan bool)
			go func() { done <- w.Until(time.Now().Add(time.Hour)) }()
			time.Sleep(10 * time.Millisecond)
			cancel()
			select {
			case ok := <-done:
				if ok {
					t.Fatal("a cancelled wait reported the instant reached")
				}
			case <-time.After(10 * time.Second):
				t.Fatal("cancelling did not end the wait")
			}
			if w.Until(time.Now().Add(time.Hour)) {
				t.Fatal("a wait after cancelling reported the instant reached")
			}
		})
	}
}

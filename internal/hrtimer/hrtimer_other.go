//go:build !linux

package hrtimer

import "context"

// New returns Go's timer, the only one on this platform.
func New(ctx context.Context) Waiter { return newGoWaiter(ctx) }

//go:build !linux

package schedule

import "context"

func newWaiter(ctx context.Context) waiter { return newGoWaiter(ctx) }

//go:build !linux

package clientload

import "time"

// runQueueWait is unknown outside Linux: saturation then rests on the CPU
// time used alone.
func runQueueWait() (time.Duration, bool) { return 0, false }

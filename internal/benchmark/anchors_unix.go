//go:build unix

package benchmark

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/llmbench/llmbench/internal/export"
)

// clockAnchors reads the wall clock and CLOCK_MONOTONIC at one instant
// (the monotonic read between two wall reads, at their midpoint).
func clockAnchors() export.ClockAnchors {
	var ts unix.Timespec
	before := time.Now().UnixNano()
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return export.ClockAnchors{WallNs: before}
	}
	after := time.Now().UnixNano()
	return export.ClockAnchors{WallNs: before + (after-before)/2, MonotonicNs: ts.Nano()}
}

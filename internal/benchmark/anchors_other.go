//go:build !unix

package benchmark

import (
	"time"

	"github.com/llmbench/llmbench/internal/export"
)

// clockAnchors reads the wall clock; this system gives no monotonic
// clock to record.
func clockAnchors() export.ClockAnchors { return export.ClockAnchors{WallNs: time.Now().UnixNano()} }

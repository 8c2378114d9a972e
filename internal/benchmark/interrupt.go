package benchmark

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// watchInterrupt calls onStop once, at once, when ctx ends before the
// returned stop func is called.
func watchInterrupt(ctx context.Context, onStop func()) (stop func()) {
	finished := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		select {
		case <-ctx.Done():
			onStop()
		case <-finished:
		}
	}()
	return func() {
		close(finished)
		<-ended
	}
}

// stoppingMessage tells a person who pressed Ctrl-C what the run still
// waits for, and how to stop waiting.
func stoppingMessage(inFlight int64, sm *serverMetrics, scrapeTimeout time.Duration) string {
	// The count races with the cancellation itself (requests end as this
	// is printed), so the step is always named and the number added when
	// there still is one.
	parts := []string{"cancelling the requests in flight"}
	if inFlight > 0 {
		parts[0] = fmt.Sprintf("cancelling the requests in flight (%d)", inFlight)
	}
	if sm != nil {
		if live := sm.collector.Live(); len(live) > 0 {
			parts = append(parts, fmt.Sprintf("waiting up to %s for the final server-metrics scrape of %s", scrapeTimeout.Round(time.Millisecond), strings.Join(live, ", ")))
		}
	}
	parts = append(parts, "writing the artifacts")
	return "stopping: " + strings.Join(parts, "; ") + "; press Ctrl-C again to stop now"
}
